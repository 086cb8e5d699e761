#!/bin/bash
# Issue 11's "Multi-node, for real" with the train_elastic lesson on two
# "hosts": network namespaces joined by a veth pair, with 192.0.2.1 and
# 192.0.2.2 (TEST-NET-1, a documentation range; the pair is connected to
# nothing else, so no packet leaves the machine). One agent per namespace,
# both started with the article's options as it writes them and the
# rendezvous endpoint on node A's address; the checkpoint is in a folder both
# see (the machine's own):
#   1. node A starts alone (--nnodes=1:3 --nproc_per_node=2): world size 2;
#   2. node B starts the same command: both restart with world size 4, node
#      B's workers are ranks 2-3 with MASTER_ADDR node A's address, and all
#      four load the checkpoint and resume at the same epoch;
#   3. node B's agent is killed: node A goes on alone with world size 2;
#   4. node A's rank 1 is killed until --max-restarts is used up: the job
#      ends with the report of its failure.
# Nothing of the job may be left running afterwards.
#
#   netns_train_elastic.sh RINGLAB_EXE
#
# Exit 77 (ctest: skipped) when the two hosts cannot be made here
# (netns_hosts.sh says when).
set -u

ringlab=$1

fail() {
  echo "netns_train_elastic: FAILED: $*"
  for node in a b; do
    [ -f "$work/$node.out" ] && sed "s/^/  [node $node] /" "$work/$node.out"
  done
  exit 1
}

test_name=netns_train_elastic host_tag=te
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

# One agent, as the article starts it, in namespace $1; output in $2. (exec:
# the background job's pid is the agent's own, so that it can be killed.)
agent() {
  exec ip netns exec "$1" "$ringlab" run --nnodes=1:3 --nproc_per_node=2 --max_restarts=3 \
    --rdzv_id=1 --rdzv_backend=c10d --rdzv_endpoint="$addr_a:$port" \
    --rdzv-conf last_call_timeout=1,keep_alive_interval=0.2,keep_alive_max_attempt=3,join_timeout=30,read_timeout=5,close_timeout=10 \
    --monitor-interval 0.1 --stop-after-ms 200 --kill-after-ms 1000 \
    "$ringlab" lesson train_elastic --epoch-seconds 0.1 --max-epoch 100000 \
    --checkpoint "$work/checkpoint.pt" >"$2" 2>&1
}

# wait_for SECONDS COMMAND...: until the command succeeds.
wait_for() {
  local i seconds=$1
  shift
  for ((i = 0; i < seconds * 10; ++i)); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}

# pid_of FILE RANK N: the pid of the N-th (1, 2, ...) worker of that rank in FILE.
pid_of() {
  grep -E "^\[[0-9]+\] \(rank = $2, local_rank = [0-9]+\) train worker starting\.\.\.$" "$1" |
    sed -n "$3p" | sed 's/^\[\([0-9]*\)\].*/\1/'
}
# epochs FILE PID: how many epochs that worker printed.
epochs() { grep -c "^\[$2\] epoch " "$1"; }
first_epoch() { grep -m1 "^\[$2\] epoch " "$1" | awk '{print $3}'; }
last_epoch() { grep "^\[$2\] epoch " "$1" | tail -1 | awk '{print $3}'; }
world_of() { grep -m1 "^\[$2\] Initializing process group with: " "$1" | sed "s/.*'WORLD_SIZE': '\([0-9]*\)'.*/\1/"; }
# round_trained FILE N RANK...: the N-th worker of each rank trained 2 epochs.
round_trained() {
  local file=$1 n=$2 rank pid
  shift 2
  for rank in "$@"; do
    pid=$(pid_of "$file" "$rank" "$n")
    [ -n "$pid" ] && [ "$(epochs "$file" "$pid")" -ge 2 ] || return 1
  done
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

# 1. Node A alone: world size 2, from epoch 0.
agent "$ns_a" "$work/a.out" &
pid_a=$!
wait_for 30 round_trained "$work/a.out" 1 0 1 || fail "node A did not start alone"
for rank in 0 1; do
  pid=$(pid_of "$work/a.out" $rank 1)
  [ "$(world_of "$work/a.out" "$pid")" = 2 ] || fail "rank $rank of node A alone is not in a world of 2"
  [ "$(first_epoch "$work/a.out" "$pid")" = 0 ] || fail "rank $rank of node A did not start at epoch 0"
done
grep -q "^load checkpoint from " "$work/a.out" && fail "node A loaded a checkpoint that cannot exist yet"

# 2. Node B joins: world size 4, its workers ranks 2-3 with node A's address
# as MASTER_ADDR, everyone resumes from the checkpoint at the same epoch.
agent "$ns_b" "$work/b.out" &
pid_b=$!
wait_for 30 round_trained "$work/b.out" 1 2 3 || fail "node B's workers did not train in the world of 4"
wait_for 30 round_trained "$work/a.out" 2 0 1 || fail "node A did not restart in the world of 4"
grep -q "wants to join" "$work/a.out" || fail "node A did not say that node B wants to join"
starts=
for rank in 2 3; do
  pid=$(pid_of "$work/b.out" $rank 1)
  grep -Eq "^\[$pid\] Initializing process group with: \{'MASTER_ADDR': '$addr_a', 'MASTER_PORT': '[0-9]+', 'WORLD_SIZE': '4', 'LOCAL_WORLD_SIZE': '2'\}$" "$work/b.out" ||
    fail "rank $rank (node B) did not get node A's address and the world of 4"
  grep -q "^\[$pid\] (rank = $rank, local_rank = $((rank - 2))) train worker starting" "$work/b.out" ||
    fail "rank $rank (node B) does not have local rank $((rank - 2))"
  starts="$starts $(first_epoch "$work/b.out" "$pid")"
done
last_alone=-1
for rank in 0 1; do
  pid=$(pid_of "$work/a.out" $rank 2)
  [ "$(world_of "$work/a.out" "$pid")" = 4 ] || fail "rank $rank of node A is not in the world of 4"
  starts="$starts $(first_epoch "$work/a.out" "$pid")"
  last=$(last_epoch "$work/a.out" "$(pid_of "$work/a.out" $rank 1)")
  [ "$last" -gt "$last_alone" ] && last_alone=$last
done
[ "$(cat "$work/a.out" "$work/b.out" | grep -c "^load checkpoint from $work/checkpoint.pt$")" = 4 ] ||
  fail "not all four workers of the world of 4 loaded the checkpoint"
[ "$(echo $starts | tr ' ' '\n' | sort -u | wc -l)" = 1 ] ||
  fail "the workers of the world of 4 did not resume together (at:$starts)"
start=${starts##* }
# As the article's program: at the last epoch saved, which runs again (or the
# one before, when rank 0 was stopped between printing an epoch and saving it).
[ "$start" -ge $((last_alone - 1)) ] && [ "$start" -le "$last_alone" ] ||
  fail "the world of 4 resumed at epoch $start, node A alone had got to epoch $last_alone"

# 3. Node B's agent is killed: node A goes on alone, from the checkpoint.
kill -9 "$pid_b"
wait "$pid_b" 2>/dev/null
pid_b=
wait_for 30 round_trained "$work/a.out" 3 0 1 || fail "node A did not go on alone"
grep -q "restart 2 of 3: " "$work/a.out" || fail "node A did not count the restart"
last_four=-1
for last in $(last_epoch "$work/a.out" "$(pid_of "$work/a.out" 0 2)") \
  $(last_epoch "$work/a.out" "$(pid_of "$work/a.out" 1 2)") \
  $(last_epoch "$work/b.out" "$(pid_of "$work/b.out" 2 1)") \
  $(last_epoch "$work/b.out" "$(pid_of "$work/b.out" 3 1)"); do
  [ "$last" -gt "$last_four" ] && last_four=$last
done
for rank in 0 1; do
  pid=$(pid_of "$work/a.out" $rank 3)
  [ "$(world_of "$work/a.out" "$pid")" = 2 ] || fail "rank $rank of node A is not alone again"
  start=$(first_epoch "$work/a.out" "$pid")
  [ "$start" -ge $((last_four - 1)) ] && [ "$start" -le "$last_four" ] ||
    fail "node A alone resumed at epoch $start, the world of 4 had got to epoch $last_four"
done

# 4. Node A's rank 1 is killed twice: restart 3 of 3, then the end.
kill -9 "$(pid_of "$work/a.out" 1 3)"
wait_for 30 round_trained "$work/a.out" 4 0 1 || fail "node A did not restart after rank 1 was killed"
kill -9 "$(pid_of "$work/a.out" 1 4)"
wait "$pid_a"
status=$?
pid_a=
[ "$status" = 137 ] || fail "node A exited with status $status, not 137 (rank 1's SIGKILL)"
for expected in "restart 3 of 3: rank 1 was killed by " "the job ended: rank 1 was killed by " \
  "all 3 restarts of --max-restarts 3 are used up" "ringlab FAILED" "  rank      : 1 (local_rank: 1, round "; do
  grep -qF -- "$expected" "$work/a.out" || fail "node A's output lacks: $expected"
done

left=$(left_running)
[ -z "$left" ] || fail "left running:
$left"
for node in a b; do sed "s/^/  [node $node] /" "$work/$node.out" | grep -v "\] epoch "; done
echo "netns_train_elastic: train_elastic on two agents in two namespaces ($addr_a, $addr_b) grew to 4 ranks, shrank to 2, resumed from its checkpoint each time, and ended after 3 restarts; nothing left running"
exit 0
