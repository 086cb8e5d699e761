#!/usr/bin/env bash
# `ringlab exercise` end to end, as a learner meets it: list, start, a check
# of the empty starter that fails with its diagnosis, one that ends the
# program with status 0 and fails all the same, the reference solution
# redirected over the file, a check that passes (CMake workspace built
# against this build's ringlab, the simulator, the in-process backends and
# TCP) with its cost next to ringlab's, list again, DDP's exercise built on
# the learner's own ring all-reduce, and show without a display. First, a
# check of a file that is not there says so before looking for ringlab's
# package.
#
# Usage: test_exercise_workspace.sh RINGLAB
set -euo pipefail

ringlab=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/ringlab-exercise-test-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT RINGLAB_RUN_CALL RINGLAB_TIMEOUT_MS \
      RINGLAB_TRACE RINGLAB_TRACE_DIR

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# expect FILE TEXT: the file holds the text (fixed string).
expect() {
  grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "no '$2' in the output above"; }
}

# A missing file is said first: this copy of ringlab has no package beside it.
mkdir -p elsewhere/tools && cp "$ringlab" elsewhere/tools/ringlab
if elsewhere/tools/ringlab exercise check ring_all_reduce --dir nowhere > missing.out 2>&1; then
  fail "check of a missing file passed"
fi
expect missing.out "nowhere/ring_all_reduce.cpp does not exist: ringlab exercise start ring_all_reduce writes it"

"$ringlab" exercise list > list.out
[[ $(grep -c ' not started ' list.out) == 13 ]] || { cat list.out >&2; fail "list: 13 exercises not started"; }
expect list.out "ring_all_reduce        not started  4. ring all-reduce"

"$ringlab" exercise start ring_all_reduce > start.out
expect start.out "wrote ringlab-exercises/ring_all_reduce.cpp"
[[ -f ringlab-exercises/CMakeLists.txt ]] || fail "start wrote no CMakeLists.txt"
expect ringlab-exercises/ring_all_reduce.cpp "2(P-1) steps"
if "$ringlab" exercise start ring_all_reduce > again.out 2>&1; then fail "start overwrote the file"; fi
expect again.out "exists already"

# The starter's empty function: the first case that can fail, explained.
if "$ringlab" exercise check ring_all_reduce > empty.out 2>&1; then
  cat empty.out >&2
  fail "the empty starter passed"
fi
expect empty.out "FAILED on simulator: case 2 of 64 in a world of 2"
expect empty.out "rank 0: element 0 of buf holds 1, should hold 4"
expect empty.out "is the function still empty?"
"$ringlab" exercise list > list.out
expect list.out "ring_all_reduce        failing      4. ring all-reduce"

# Printing "passed" and leaving with status 0 is no pass: the checker counts
# what every case left.
cat > ringlab-exercises/ring_all_reduce.cpp <<'EOF'
#include <cstdio>
#include <cstdlib>

#include "exercises/task.hpp"

using namespace ringlab;

void ring_all_reduce(Comm& comm, Elems, ReduceOp) {
  if (comm.size() == 2) {
    std::printf("passed: ring_all_reduce\n");
    std::exit(0);
  }
}
EOF
if "$ringlab" exercise check ring_all_reduce > exit.out 2>&1; then
  cat exit.out >&2
  fail "a function that exits with status 0 passed"
fi
expect exit.out "case 1 of 64 in a world of 2 on simulator"
expect exit.out "exited with status 0 all the same"
expect exit.out "failing: ring_all_reduce"

"$ringlab" exercise solution ring_all_reduce > ringlab-exercises/ring_all_reduce.cpp
# (the limits: a machine loaded by other work slows a case, it does not fail it)
"$ringlab" exercise check ring_all_reduce --case-seconds 120 --timeout-ms 60000 > pass.out 2>&1 || { cat pass.out >&2; fail "the solution failed"; }
expect pass.out "simulator  576 cases passed"
expect pass.out "inproc     585 cases passed"
expect pass.out "tcp        585 cases passed"
# 8 ranks, 1024 int64 elements: 2(P-1) = 14 steps and messages, 14 chunks of 128 elements.
grep -qE '^  yours +14 +14 +14336$' pass.out || { cat pass.out >&2; fail "no cost line for yours"; }
grep -qE '^  ringlab \(all_reduce ring\) +14 +14 +14336$' pass.out || fail "no cost line for ringlab"
expect pass.out "passed: ring_all_reduce"
"$ringlab" exercise list > list.out
expect list.out "ring_all_reduce        passed       4. ring all-reduce"

# DDP's buckets on the learner's ring all-reduce, now that it passed.
"$ringlab" exercise start ddp_bucket_average > /dev/null
expect ringlab-exercises/ddp_bucket_average.cpp '#include "primitives/algorithms.hpp"'
"$ringlab" exercise solution ddp_bucket_average > ringlab-exercises/ddp_bucket_average.cpp
"$ringlab" exercise check ddp_bucket_average --case-seconds 120 --timeout-ms 60000 > ddp.out 2>&1 || { cat ddp.out >&2; fail "ddp failed"; }
expect ddp.out "with your ring_all_reduce (ringlab-exercises/ring_all_reduce.cpp passed its check)"
expect ddp.out "passed: ddp_bucket_average"

# Without a display: the walkthrough's log of the learner's own run.
env -u DISPLAY -u WAYLAND_DISPLAY PATH=/usr/bin:/bin \
  "$ringlab" exercise show ring_all_reduce --step 2 > show.out 2>&1 || { cat show.out >&2; fail "show"; }
expect show.out "your ring_all_reduce (4 ranks), before step 1"
expect show.out "step 6 of 6, exchange"
# ... and, where xvfb-run is there, a screenshot of frame 2 of it.
if [[ -x /usr/bin/xvfb-run ]] && grep -q "^wrote " show.out; then
  expect show.out "wrote ringlab-exercises/ring_all_reduce-frame-2.png (frame 2 of 6)"
  [[ $(head -c 8 ringlab-exercises/ring_all_reduce-frame-2.png | od -An -tx1 | tr -d ' \n') == \
     89504e470d0a1a0a ]] || fail "the screenshot is not a PNG"
else
  expect show.out "xvfb-run -a ringlab exercise show ring_all_reduce --step K"
fi
echo "start -> check (fails, explained) -> solution -> check (passes) -> list -> show: ok"
