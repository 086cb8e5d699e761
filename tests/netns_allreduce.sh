#!/bin/bash
# Two "hosts" on one machine: network namespaces joined by a veth pair, with
# 192.0.2.1 and 192.0.2.2 (TEST-NET-1, a documentation range that is never
# routed; the pair is connected to nothing else, so no packet leaves the
# machine). Each namespace runs `ringlab run --nnodes 2 --node-rank I
# --nproc-per-node 2`, so ranks 0, 1 live on 192.0.2.1 and ranks 2, 3 on
# 192.0.2.2, with rank 0's store at 192.0.2.1. They all_reduce (tcp_fault_rank
# checks every element against its closed form) and then run the all_reduce
# lesson, whose lines must be the article's. Binding beyond loopback, the
# two nodes share a job token (RINGLAB_JOB_TOKEN), as README's "Security"
# says to.
#
#   netns_allreduce.sh RINGLAB_EXE TCP_FAULT_RANK_EXE
#
# Exit 77 (ctest: skipped), with the reason, when this machine cannot make
# the two hosts (netns_hosts.sh says when); once they exist, any failure of
# ringlab is a failure (exit 1).
set -u

ringlab=$1
fault_rank=$2

fail() {
  echo "netns_allreduce: FAILED: $*"
  exit 1
}

test_name=netns_allreduce host_tag=ar
port=29517
source "$(dirname "$0")/netns_hosts.sh"

# The job's secret, shared by the two nodes (each node's ringlab run would
# otherwise have none: a job bound beyond loopback refuses to run without).
token=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')

# One node: ringlab run inside namespace $1 as node $2, binding to address $3,
# running the rest of the arguments on each of its 2 ranks.
node() {
  local ns=$1 node_rank=$2 bind=$3
  shift 3
  ip netns exec "$ns" env RINGLAB_BIND_ADDR="$bind" RINGLAB_JOB_TOKEN="$token" "$ringlab" run --nnodes 2 \
    --node-rank "$node_rank" --nproc-per-node 2 --master-addr "$addr_a" --master-port "$port" \
    --timeout-ms 10000 --time-limit-ms 60000 -- "$@"
}

# Both nodes at once; $1 names the step, the rest is the program.
run_both() {
  local step=$1
  shift
  node "$ns_a" 0 "$addr_a" "$@" >"$work/$step.node0" 2>&1 &
  local pid0=$!
  node "$ns_b" 1 "$addr_b" "$@" >"$work/$step.node1" 2>&1 &
  local pid1=$!
  wait "$pid0"
  local status0=$?
  wait "$pid1"
  local status1=$?
  for n in 0 1; do sed "s/^/  [$step node $n] /" "$work/$step.node$n"; done
  [ "$status0" = 0 ] || fail "$step: node 0 (in $ns_a) exited with status $status0"
  [ "$status1" = 0 ] || fail "$step: node 1 (in $ns_b) exited with status $status1"
}

# 1. all_reduce of 100000 int64 per rank, 3 times, checked on every rank.
run_both allreduce "$fault_rank" --iterations 3 --elements 100000
for rank in 0 1; do
  grep -qx "rank $rank: 3 all_reduce ok" "$work/allreduce.node0" ||
    fail "rank $rank (node 0) did not report its all_reduce ok"
done
for rank in 2 3; do
  grep -qx "rank $rank: 3 all_reduce ok" "$work/allreduce.node1" ||
    fail "rank $rank (node 1) did not report its all_reduce ok"
done

# 2. The article's all_reduce lesson across the two hosts.
run_both lesson "$ringlab" lesson all_reduce -n 4
expected="after reudce Rank 0 has data tensor([16, 20])
after reudce Rank 1 has data tensor([16, 20])
after reudce Rank 2 has data tensor([16, 20])
after reudce Rank 3 has data tensor([16, 20])
before reudce Rank 0 has data tensor([1, 2])
before reudce Rank 1 has data tensor([3, 4])
before reudce Rank 2 has data tensor([5, 6])
before reudce Rank 3 has data tensor([7, 8])"
# Lines starting with '#' are the runner's (rank 0 names the algorithm on
# stderr), not the program's.
actual=$(cat "$work/lesson.node0" "$work/lesson.node1" | grep -v '^#' | tr -s ' ' | LC_ALL=C sort)
notes=$(cat "$work/lesson.node0" "$work/lesson.node1" | grep -c '^# lesson all_reduce: all_reduce runs ring ' || true)
[ "$notes" = 1 ] || fail "rank 0 should name the lesson's algorithm (ring) once; found $notes such lines"
[ "$actual" = "$expected" ] || fail "the lesson printed
$actual
instead of
$expected"

echo "netns_allreduce: 4 ranks on 2 namespaces ($addr_a, $addr_b) agree: all_reduce checked, lesson output matches the article"
exit 0
