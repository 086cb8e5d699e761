#!/bin/bash
# Seed 000's elastic demo on one machine (docs/elastic.md): the two terminals
# of the article become two agents on loopback, started with the article's
# options, each running the article's program (`ringlab lesson
# train_elastic`) in the same folder, so that they share its checkpoint.pt.
# Node 0 starts alone; node 1 joins after a few epochs; node 1's agent is
# then killed; at last a worker of node 0 is killed until --max-restarts is
# used up.
#
#   docs/elastic_demo.sh [BUILD_DIR]      (default: build)
#
# Writes job.token, node0.out, node1.out, checkpoint.pt, trace.json and timeline.svg
# (the trace drawn by docs/elastic_timeline.py) into a fresh folder and prints
# the agents' lines and the first and last epochs of each round.
set -eu

build=${1:-build}
ringlab=$(realpath "$build/tools/ringlab" 2>/dev/null) && [ -x "$ringlab" ] || {
  echo "elastic_demo: build first (cmake --build $build), or give the build folder" >&2
  exit 1
}
docs=$(dirname "$(realpath "$0")")
out=$(mktemp -d /tmp/ringlab-elastic-demo-XXXXXX)
cd "$out"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The job's secret, which both nodes give: a file only this user can read.
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >job.token)

# The article's command, with an endpoint on this machine and the secret. The
# --rdzv-conf shortens torchrun's 30 s last call and 5 s heartbeats so that
# the demo takes seconds; --epoch-seconds 0.5 stands for the article's sleep(1).
node() {
  exec "$ringlab" run --nnodes=1:3 --nproc_per_node=4 --max_restarts=3 --rdzv_id=1 \
    --rdzv_backend=c10d --rdzv_endpoint="127.0.0.1:$port" \
    --rdzv-conf last_call_timeout=2,keep_alive_interval=0.5,token_file=job.token \
    --monitor-interval 0.2 "$@" \
    "$ringlab" lesson train_elastic --epoch-seconds 0.5
}
wait_for() {  # FILE PATTERN
  until grep -Eq "$2" "$1" 2>/dev/null; do sleep 0.2; done
}
# The pid of the newest worker of rank $2 in file $1.
newest() {
  grep -E "^\[[0-9]+\] \(rank = $2, local_rank = [0-9]+\) train worker starting" "$1" | tail -1 |
    sed 's/^\[\([0-9]*\)\].*/\1/'
}
starts() { grep -c "(rank = 0, local_rank = 0) train worker starting" "$1"; }

node --trace "$out/trace.json" >node0.out 2>&1 &
node0=$!
wait_for node0.out '\] epoch 5 \(rank = 0,'
node >node1.out 2>&1 &
node1=$!
wait_for node1.out '\] epoch [0-9]+ \(rank = 7,'
sleep 2
kill -9 "$node1"
wait "$node1" 2>/dev/null || true
until [ "$(starts node0.out)" = 3 ]; do sleep 0.2; done
sleep 2
# A worker of node 0 dies, in this round and in the next: restart 3 of 3,
# then the end of the job.
kill -9 "$(newest node0.out 1)"
until [ "$(starts node0.out)" = 4 ]; do sleep 0.2; done
sleep 2
kill -9 "$(newest node0.out 1)"
status=0
wait "$node0" || status=$?

for n in 0 1; do
  echo "=== node $n (ringlab run, terminal $((n + 1))) ==="
  # Everything but most of the epochs: of each run of epoch lines, the first
  # 4 and the last 4.
  awk 'function flush() { if (dropped) print "..."; for (i = 0; i < kept; i++) print tail[i]
                          shown = kept = dropped = 0 }
       /\] epoch [0-9]+ \(rank/ { if (shown < 4) { print; shown++; next }
                                 if (kept == 4) { for (i = 1; i < 4; i++) tail[i - 1] = tail[i]; kept = 3; dropped = 1 }
                                 tail[kept++] = $0; next }
       { flush(); print }
       END { flush() }' "node$n.out"
done
python3 "$docs/elastic_timeline.py" trace.json timeline.svg
echo "node 0 exited with status $status; both outputs, the checkpoint, the trace and its timeline are in $out"
