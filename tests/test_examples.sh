#!/usr/bin/env bash
# The example programs built in the tree, run as their comments say, against
# closed forms:
#   all_reduce on 3 ranks: rank r starts with [1 + 2r, 2 + 2r]; every rank
#     ends with [P*P, P*P + P] = [9, 12].
#   send_recv on 2 ranks: 0 sends 1., 1 adds 1 and sends 2. back.
#   spawn_broadcast 5 (threads), and 3 over tcp (processes it starts itself):
#     every rank ends with rank 0's arange(8).
#
# Usage: test_examples.sh RINGLAB_EXE EXAMPLES_DIR
set -euo pipefail

ringlab=$1
examples=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/ringlab-examples-test-XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0

# check NAME EXPECTED_LINES COMMAND...: runs the command in a clean
# environment; its output, sorted, must be the expected lines, sorted (ranks
# print in any order).
check() {
  local name=$1 expected=$2
  shift 2
  local status=0
  env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u MASTER_ADDR -u MASTER_PORT \
      -u RINGLAB_TRACE_DIR RINGLAB_TIMEOUT_MS=30000 \
      timeout 120 "$@" > "$work/out" 2> "$work/err" || status=$?
  if ((status != 0)); then
    cat "$work/out" "$work/err" >&2
    echo "FAIL: $name: '$*' exited with status $status" >&2
    failed=1
  elif ! diff <(printf '%s' "$expected" | sort) <(sort "$work/out") >&2; then
    echo "FAIL: $name printed the lines marked > where the closed form says those marked <" >&2
    failed=1
  else
    echo "$name: ok"
  fi
}

world=3
sum0=$((world * world)) sum1=$((world * world + world))
width=${#sum1}  # PyTorch pads the elements of one tensor to one width
expected=""
for ((r = 0; r < world; ++r)); do
  expected+="before all_reduce Rank $r has data tensor([$((1 + 2 * r)), $((2 + 2 * r))])"$'\n'
  expected+="after all_reduce Rank $r has data tensor([$(printf '%*d' "$width" "$sum0"), $sum1])"$'\n'
done
check all_reduce "$expected" "$ringlab" run --nproc-per-node "$world" -- "$examples/all_reduce"

check send_recv "after send, Rank 0 has data tensor(1.)
after recv, Rank 1 has data tensor(1.)
after send, Rank 1 has data tensor(2.)
after recv, Rank 0 has data tensor(2.)
" "$ringlab" run --nproc-per-node 2 -- "$examples/send_recv"

world=5
expected=""
for ((r = 0; r < world; ++r)); do
  expected+="after broadcast Rank $r has data tensor([0, 1, 2, 3, 4, 5, 6, 7])"$'\n'
done
check spawn_broadcast "$expected" "$examples/spawn_broadcast" "$world"

world=3
expected=""
for ((r = 0; r < world; ++r)); do
  expected+="after broadcast Rank $r has data tensor([0, 1, 2, 3, 4, 5, 6, 7])"$'\n'
done
check "spawn_broadcast over tcp" "$expected" "$examples/spawn_broadcast" "$world" tcp

exit "$failed"
