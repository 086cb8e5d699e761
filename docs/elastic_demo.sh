#!/bin/bash
# Seed 000's elastic demo on one machine (docs/elastic.md): the two terminals
# of the article become two agents on loopback, started with the article's
# options. Node 0 starts alone; node 1 joins after a few steps; node 1's agent
# is then killed; at last a worker fails until --max-restarts is used up.
#
#   docs/elastic_demo.sh [BUILD_DIR]      (default: build)
#
# Writes node0.out, node1.out and trace.json into a fresh folder and prints
# the agents' lines and the workers' first lines of each round.
set -eu

build=${1:-build}
ringlab=$build/tools/ringlab
worker=$build/tests/elastic_worker
[ -x "$ringlab" ] && [ -x "$worker" ] || {
  echo "elastic_demo: build first (cmake --build $build), or give the build folder" >&2
  exit 1
}
out=$(mktemp -d /tmp/ringlab-elastic-demo-XXXXXX)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The article's command, with an endpoint on this machine. The --rdzv-conf
# shortens torchrun's 30 s last call and 5 s heartbeats so that the demo
# takes seconds.
node() {
  exec "$ringlab" run --nnodes=1:3 --nproc_per_node=4 --max_restarts=3 --rdzv_id=1 \
    --rdzv_backend=c10d --rdzv_endpoint="127.0.0.1:$port" \
    --rdzv-conf last_call_timeout=2,keep_alive_interval=0.5 --monitor-interval 0.2 "$@" \
    "$worker" --counter "$out/checkpoint" --steps 1000 --step-ms 500 --fail-rank 1 \
    --fail-while "$out/fail"
}
wait_for() {  # FILE PATTERN
  until grep -Eq "$2" "$1" 2>/dev/null; do sleep 0.2; done
}

node --trace "$out/trace.json" >"$out/node0.out" 2>&1 &
node0=$!
wait_for "$out/node0.out" 'step 5 rank 0 world 4 '
node >"$out/node1.out" 2>&1 &
node1=$!
wait_for "$out/node1.out" 'step [0-9]+ rank 7 world 8 '
sleep 2
kill -9 "$node1"
wait "$node1" 2>/dev/null || true
wait_for "$out/node0.out" 'TORCHELASTIC_RESTART_COUNT=2 '
sleep 2
touch "$out/fail"
status=0
wait "$node0" || status=$?

for n in 0 1; do
  echo "=== node $n (ringlab run, terminal $((n + 1))) ==="
  # Everything but most of the steps: the first 4 after each line of the agent.
  awk '/^ringlab run/ { print; shown = 0; dots = 0; next }
       /\] step [0-9]+ rank/ { if (shown < 4) { print; shown++ } else if (!dots) { print "..."; dots = 1 }; next }
       { print }' "$out/node$n.out"
done
echo "node 0 exited with status $status; both outputs and the trace are in $out"
