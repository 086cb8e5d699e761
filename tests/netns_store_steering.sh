#!/bin/bash
# A stranger on another host steers a job without a token through its store
# (issue 33, item 1). Two "hosts" (netns_hosts.sh): the job runs in one, at
# 192.0.2.1, with no RINGLAB_JOB_TOKEN; its store is a torch TCPStore, which
# listens on every interface and authenticates nobody. The stranger, in the
# other at 192.0.2.2, reaches that store, runs a real ringlab rank 0 of its
# own (tests/python/store_steering.py) and keeps rank 0's address key
# pointing at itself. Before the fix the job's rank 1 connected out to it,
# the handshake passed (a proof keyed with the empty token), and its
# all_reduce returned the stranger's numbers ([1339.0, ...] instead of
# [3.0, ...]) with exit status 0. Now a rank without a token connects only to
# loopback addresses: rank 1 refuses the address, saying why and what to do,
# and the stranger gets no connection.
#
#   1. The backend "ringlab" of torch.distributed: two Python ranks meeting
#      in a TCPStore their launcher hosts (as torchrun's agent does); rank 0
#      joins 2 s after rank 1.
#   2. C++ ranks (tcp_fault_rank) meeting in a torch TCPStore as under
#      torchrun's agent (TORCHELASTIC_USE_AGENT_STORE=True, keys under
#      /worker/attempt_0/).
#   3. The job of 1 without the stranger: all_reduce gives [3.0, ...] (the
#      refusal above is the stranger's doing, not the namespaces').
#
#   netns_store_steering.sh PYTHON TCP_FAULT_RANK_EXE
#
# PYTHONPATH must hold the built package. Exit 77 (skipped), with the reason,
# where the namespaces cannot be made or PYTHON has no torch.
set -u

python=$1
fault_rank=$2
helper="$(cd "$(dirname "$0")" && pwd)/python/store_steering.py"

fail() {
  echo "netns_store_steering: FAILED: $*"
  exit 1
}

test_name=netns_store_steering host_tag=st
source "$(dirname "$0")/netns_hosts.sh"
"$python" -c 'import torch.distributed' 2>"$work/err" ||
  skip "$python cannot import torch ($(tail -1 "$work/err")); apt-get install python3-torch"

in_a() { ip netns exec "$ns_a" env -u RINGLAB_JOB_TOKEN "$@"; }
in_b() { ip netns exec "$ns_b" env -u RINGLAB_JOB_TOKEN "$@"; }

show() {
  for f in "$@"; do sed "s|^|  [$(basename "$f")] |" "$f"; done
}

# Waits until the stranger has reached the store (the job's ranks start
# after it: the attack is on their rendezvous, not a race with it).
stranger_ready() {
  local out=$1
  for _ in $(seq 300); do
    grep -q "stranger: ready" "$out" && return 0
    sleep 0.1
  done
  show "$out"
  fail "the stranger did not reach the store within 30 s"
}

# What every attacked run must show: rank 1 named the stranger's address in
# its refusal, and nobody connected to the stranger or computed its numbers.
check_refused() {
  local step=$1 rank1=$2 stranger=$3
  grep -q "the store names $addr_b:[0-9]* as rank 0's address, which is not on loopback" "$rank1" ||
    fail "$step: rank 1 did not refuse the stranger's address $addr_b"
  grep -q "RINGLAB_JOB_TOKEN" "$rank1" || fail "$step: rank 1's error does not say what to do"
  ! grep -q "a victim connected" "$stranger" || fail "$step: a rank of the job connected to the stranger"
  ! grep -q "1339\|all_reduce ok\|all_reduce done" "$rank1" "$stranger" ||
    fail "$step: the stranger's numbers reached the job"
}

# 1. torch.distributed's backend "ringlab", its ranks meeting in a store
# their launcher hosts (rank 0 is 2 s late).
port=29531
in_a "$python" "$helper" agent "$port" 25 >"$work/py.agent" 2>&1 &
agent=$!
in_b "$python" "$helper" stranger "$addr_a" "$port" 0 "$addr_b" 8 >"$work/py.stranger" 2>&1 &
stranger=$!
stranger_ready "$work/py.stranger"
in_a "$python" "$helper" victim 1 "$port" 0 >"$work/py.rank1" 2>&1 &
rank1=$!
in_a "$python" "$helper" victim 0 "$port" 2 >"$work/py.rank0" 2>&1 &
rank0=$!
wait "$rank1"
status1=$?
wait "$rank0" "$stranger"
kill "$agent" 2>/dev/null
wait "$agent" 2>/dev/null
show "$work/py.rank0" "$work/py.rank1" "$work/py.stranger"
[ "$status1" != 0 ] || fail "python: rank 1 exited with status 0"
check_refused python "$work/py.rank1" "$work/py.stranger"

# 2. C++ ranks in a store like torchrun's agent's.
port=29532
in_a "$python" "$helper" agent "$port" 25 >"$work/cpp.agent" 2>&1 &
agent=$!
in_b "$python" "$helper" stranger "$addr_a" "$port" /worker/attempt_0 "$addr_b" 8 int64 \
  >"$work/cpp.stranger" 2>&1 &
stranger=$!
stranger_ready "$work/cpp.stranger"
rank() {
  in_a env RANK="$1" WORLD_SIZE=2 LOCAL_RANK="$1" MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
    TORCHELASTIC_USE_AGENT_STORE=True TORCHELASTIC_RESTART_COUNT=0 RINGLAB_TIMEOUT_MS=10000 \
    "$fault_rank" --iterations 1 --elements 4
}
rank 1 >"$work/cpp.rank1" 2>&1 &
rank1=$!
sleep 2
rank 0 >"$work/cpp.rank0" 2>&1 &
rank0=$!
wait "$rank1"
status1=$?
wait "$rank0" "$stranger"
kill "$agent" 2>/dev/null
wait "$agent" 2>/dev/null
show "$work/cpp.rank0" "$work/cpp.rank1" "$work/cpp.stranger"
[ "$status1" != 0 ] || fail "c++: rank 1 exited with status 0"
check_refused "c++" "$work/cpp.rank1" "$work/cpp.stranger"

# 3. The same job alone.
port=29533
in_a "$python" "$helper" agent "$port" 25 >"$work/alone.agent" 2>&1 &
agent=$!
in_a "$python" "$helper" victim 1 "$port" 0 >"$work/alone.rank1" 2>&1 &
rank1=$!
in_a "$python" "$helper" victim 0 "$port" 2 >"$work/alone.rank0" 2>&1
status0=$?
wait "$rank1"
status1=$?
kill "$agent" 2>/dev/null
wait "$agent" 2>/dev/null
show "$work/alone.rank0" "$work/alone.rank1"
[ "$status0" = 0 ] && [ "$status1" = 0 ] || fail "alone: the job failed without a stranger"
for r in 0 1; do
  grep -qx "rank $r: all_reduce \[3.0, 3.0, 3.0, 3.0\]" "$work/alone.rank$r" ||
    fail "alone: rank $r did not get [3.0, 3.0, 3.0, 3.0]"
done

echo "netns_store_steering: the stranger at $addr_b was refused by the job's rank 1 (Python and C++ ranks); alone, the job sums to 3.0"
exit 0
