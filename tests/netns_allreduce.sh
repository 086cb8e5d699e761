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
# the two hosts: not root, no `ip`, or any step of building them failing (a
# container without network privileges, a chroot whose / is not a mount
# point, where `ip netns exec` cannot make / a slave mount). Once both hosts
# exist, have their addresses and can run a command, any failure of ringlab
# is a failure (exit 1).
set -u

ringlab=$1
fault_rank=$2

skip() {
  echo "netns_allreduce: skipped: $*"
  exit 77
}
fail() {
  echo "netns_allreduce: FAILED: $*"
  exit 1
}

[ "$(id -u)" = 0 ] || skip "creating network namespaces needs root (this runs as uid $(id -u))"
command -v ip >/dev/null || skip "the ip command is missing (Debian package iproute2)"

# Names unique to this run, so parallel runs do not collide. Interface names
# must stay within 15 characters.
tag=$$
ns0=ringlab-node0-$tag
ns1=ringlab-node1-$tag
veth0=rlv0-$tag
veth1=rlv1-$tag
addr0=192.0.2.1
addr1=192.0.2.2
port=29517
work=$(mktemp -d /tmp/ringlab-netns-XXXXXX)

cleanup() {
  # Deleting a namespace deletes its end of the veth pair, and with it the other.
  ip netns del "$ns0" 2>/dev/null
  ip netns del "$ns1" 2>/dev/null
  ip link del "$veth0" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The probe: build the two hosts. Any step that fails means this machine
# cannot make them, which is a reason to skip, not a failure of ringlab.
probe() {
  local step=$1
  shift
  "$@" >"$work/err" 2>&1 ||
    skip "cannot make two network namespaces joined by a veth pair here: '$step' failed: $(tr '\n' ' ' <"$work/err")"
}
probe "ip netns add $ns0" ip netns add "$ns0"
probe "ip netns add $ns1" ip netns add "$ns1"
probe "ip link add $veth0 type veth peer name $veth1" ip link add "$veth0" type veth peer name "$veth1"
probe "ip link set $veth0 netns $ns0" ip link set "$veth0" netns "$ns0"
probe "ip link set $veth1 netns $ns1" ip link set "$veth1" netns "$ns1"
probe "ip -n $ns0 addr add $addr0/24 dev $veth0" ip -n "$ns0" addr add "$addr0/24" dev "$veth0"
probe "ip -n $ns1 addr add $addr1/24 dev $veth1" ip -n "$ns1" addr add "$addr1/24" dev "$veth1"
for ns in "$ns0" "$ns1"; do probe "ip -n $ns link set lo up" ip -n "$ns" link set lo up; done
probe "ip -n $ns0 link set $veth0 up" ip -n "$ns0" link set "$veth0" up
probe "ip -n $ns1 link set $veth1 up" ip -n "$ns1" link set "$veth1" up
for ns in "$ns0" "$ns1"; do probe "ip netns exec $ns true" ip netns exec "$ns" true; done
probe "$addr0 in $ns0" sh -c "ip -n '$ns0' -o addr show dev '$veth0' | grep -q ' $addr0/'"
probe "$addr1 in $ns1" sh -c "ip -n '$ns1' -o addr show dev '$veth1' | grep -q ' $addr1/'"
echo "netns_allreduce: $ns0 has $addr0 ($veth0), $ns1 has $addr1 ($veth1)"

# The job's secret, shared by the two nodes (each node's ringlab run would
# otherwise have none: a job bound beyond loopback refuses to run without).
token=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')

# One node: ringlab run inside namespace $1 as node $2, binding to address $3,
# running the rest of the arguments on each of its 2 ranks.
node() {
  local ns=$1 node_rank=$2 bind=$3
  shift 3
  ip netns exec "$ns" env RINGLAB_BIND_ADDR="$bind" RINGLAB_JOB_TOKEN="$token" "$ringlab" run --nnodes 2 \
    --node-rank "$node_rank" --nproc-per-node 2 --master-addr "$addr0" --master-port "$port" \
    --timeout-ms 10000 --time-limit-ms 60000 -- "$@"
}

# Both nodes at once; $1 names the step, the rest is the program.
run_both() {
  local step=$1
  shift
  node "$ns0" 0 "$addr0" "$@" >"$work/$step.node0" 2>&1 &
  local pid0=$!
  node "$ns1" 1 "$addr1" "$@" >"$work/$step.node1" 2>&1 &
  local pid1=$!
  wait "$pid0"
  local status0=$?
  wait "$pid1"
  local status1=$?
  for n in 0 1; do sed "s/^/  [$step node $n] /" "$work/$step.node$n"; done
  [ "$status0" = 0 ] || fail "$step: node 0 (in $ns0) exited with status $status0"
  [ "$status1" = 0 ] || fail "$step: node 1 (in $ns1) exited with status $status1"
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
notes=$(cat "$work/lesson.node0" "$work/lesson.node1" | grep -c '^# lesson all_reduce: all_reduce algorithm ring ' || true)
[ "$notes" = 1 ] || fail "rank 0 should name the lesson's algorithm (ring) once; found $notes such lines"
[ "$actual" = "$expected" ] || fail "the lesson printed
$actual
instead of
$expected"

echo "netns_allreduce: 4 ranks on 2 namespaces ($addr0, $addr1) agree: all_reduce checked, lesson output matches the article"
exit 0
