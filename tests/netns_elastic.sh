#!/bin/bash
# Seed 000's elastic scenario on two "hosts": network namespaces joined by a
# veth pair, with 192.0.2.1 and 192.0.2.2 (TEST-NET-1, a documentation range;
# the pair is connected to nothing else, so no packet leaves the machine). One
# agent per namespace, both started with the article's options and the
# rendezvous endpoint on node A's address:
#   1. node A starts alone (--nnodes 1:3 --nproc_per_node 2): world size 2;
#   2. node B starts the same command: both restart with world size 4, node
#      B's workers are ranks 2-3 (MASTER_ADDR is node A's address), and all
#      resume from the counter file (the checkpoint);
#   3. node B's agent is killed: node A goes on alone with world size 2;
#   4. a worker fails until --max-restarts is used up: the job ends with the
#      report of its first failure.
# Nothing of the job may be left running afterwards.
#
#   netns_elastic.sh RINGLAB_EXE ELASTIC_WORKER_EXE
#
# Exit 77 (ctest: skipped) when the two hosts cannot be made here
# (netns_hosts.sh says when).
set -u

ringlab=$1
worker=$2

fail() {
  echo "netns_elastic: FAILED: $*"
  for node in a b; do
    [ -f "$work/$node.out" ] && sed "s/^/  [node $node] /" "$work/$node.out"
  done
  exit 1
}

test_name=netns_elastic host_tag=el
port=29400
pid_a=
pid_b=
stop_test_processes() {
  for pid in $pid_a $pid_b; do kill -9 "$pid" 2>/dev/null; done
}
source "$(dirname "$0")/netns_hosts.sh"
# Both nodes' agents and workers share one job token: a job that listens
# beyond loopback needs one (README's "Security").
export RINGLAB_JOB_TOKEN=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')

# One agent, as the article starts it, in namespace $1; output in $2. (exec: the
# background job's pid is the agent's own, so that it can be killed.)
agent() {
  exec ip netns exec "$1" "$ringlab" run --nnodes=1:3 --nproc_per_node=2 --max_restarts=3 \
    --rdzv_id=netns-$$ --rdzv_backend=c10d --rdzv_endpoint="$addr_a:$port" \
    --rdzv-conf last_call_timeout=1,keep_alive_interval=0.2,keep_alive_max_attempt=3,join_timeout=30,read_timeout=5,close_timeout=10 \
    --monitor-interval 0.1 --stop-after-ms 200 --kill-after-ms 1000 \
    "$worker" --counter "$work/counter" --steps 100000 --step-ms 100 --fail-rank 1 \
    --fail-while "$work/fail" >"$2" 2>&1
}

# wait_for FILE PATTERN SECONDS: until an extended regex matches a line of FILE.
wait_for() {
  local i
  for ((i = 0; i < $3 * 10; ++i)); do
    grep -Eq "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# The processes (not zombies) whose command line mentions this run's folder.
left_running() {
  local p state
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = $$ ] && continue
    tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "$work" || continue
    state=$(sed 's/.*) //' "$p/stat" 2>/dev/null | cut -d' ' -f1)
    [ "$state" = Z ] || [ -z "$state" ] || echo "${p#/proc/} ($state): $(tr '\0' ' ' <"$p/cmdline")"
  done
}

# 1. Node A alone.
agent "$ns_a" "$work/a.out" &
pid_a=$!
wait_for "$work/a.out" '^\[[0-9]+\] step 3 rank 0 world 2 ' 30 || fail "node A did not start alone"

# 2. Node B joins: world size 4, its workers ranks 2-3, MASTER_ADDR node A's.
agent "$ns_b" "$work/b.out" &
pid_b=$!
for rank in 2 3; do
  wait_for "$work/b.out" "^\[[0-9]+\] step [0-9]+ rank $rank world 4 sum 4$" 30 ||
    fail "rank $rank (node B) did not run in a world of 4"
  grep -Eq "env RANK=$rank LOCAL_RANK=$((rank - 2)) GROUP_RANK=1 .*WORLD_SIZE=4 .*MASTER_ADDR=$addr_a " "$work/b.out" ||
    fail "rank $rank (node B) did not get its place in the world of 4"
done
wait_for "$work/a.out" '^\[[0-9]+\] step [0-9]+ rank 0 world 4 sum 4$' 30 ||
  fail "node A did not restart in the world of 4"
grep -q "wants to join" "$work/a.out" || fail "node A did not say that node B wants to join"
resumed=$(grep -Eh 'env .*WORLD_SIZE=4 ' "$work/a.out" "$work/b.out" | wc -l)
[ "$resumed" = 4 ] || fail "$resumed workers started in the world of 4, not 4"
starts=$(grep -Eh '^\[[0-9]+\] rank [0-9]+ resumes at step ' "$work/b.out" | awk '{print $NF}' | sort -u)
[ "$(echo "$starts" | wc -l)" = 1 ] && [ "$starts" -ge 3 ] ||
  fail "node B's workers did not resume together from the checkpoint (at: $starts)"

# 3. Node B's agent is killed: node A goes on alone.
kill -9 "$pid_b"
wait "$pid_b" 2>/dev/null
pid_b=
wait_for "$work/a.out" 'env .*WORLD_SIZE=2 .*TORCHELASTIC_RESTART_COUNT=2 ' 30 ||
  fail "node A did not re-form alone"
wait_for "$work/a.out" '^\[[0-9]+\] step [0-9]+ rank 1 world 2 sum 2$' 30 ||
  fail "node A's workers did not go on alone"

# 4. Rank 1 fails from now on: the last restart goes, then the report.
touch "$work/fail"
wait "$pid_a"
status=$?
pid_a=
[ "$status" = 3 ] || fail "node A exited with status $status, not 3 (rank 1's)"
for expected in "restart 3 of 3: rank 1 exited with status 3" "elastic_worker FAILED" \
  "all 3 restarts of --max-restarts 3 are used up" "  error     : rank 1: failing on request at step"; do
  grep -qF -- "$expected" "$work/a.out" || fail "node A's output lacks: $expected"
done

left=$(left_running)
[ -z "$left" ] || fail "left running:
$left"
for node in a b; do sed "s/^/  [node $node] /" "$work/$node.out" | grep -v "\] step "; done
echo "netns_elastic: two agents in two namespaces ($addr_a, $addr_b) grew to 4 ranks, shrank to 2, and ended after 3 restarts; nothing left running"
exit 0
