#!/usr/bin/env bash
# Builds everything and runs every test of the suite (./build): README's test
# command. Each phase's time is printed as it ends and again at the end, so
# that the next slowdown shows (docs/benchmarks.md, "The test command").
#   tools/test.sh               the suite
#   tools/test.sh PARTS...      only the parts named, in this order:
#     --suite                   the suite (./build)
#     --sanitize                the TCP, store, launcher and transport tests
#                               again under ASan+UBSan (./build-sanitize)
#     --fuzz [S]                each fuzz target for S seconds (default 15;
#                               ./build-fuzz, clang)
#     --tsan                    a ThreadSanitizer run of the inproc and TCP
#                               transports (./build-tsan)
# tools/test_hardening.sh is `--sanitize --fuzz`: README's third command; CI
# (.ci/run) runs the second and the third. docs/hardening.md says what the
# sanitizer and fuzz runs cover and leave out.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=0 sanitize=0 fuzz=0 tsan=0 fuzz_seconds=15
while (($#)); do
  case $1 in
    --suite) suite=1 ;;
    --sanitize) sanitize=1 ;;
    --fuzz)
      fuzz=1
      if [[ ${2:-} =~ ^[0-9]+$ ]]; then fuzz_seconds=$2; shift; fi
      ;;
    --tsan) tsan=1 ;;
    *) echo "tools/test.sh: unknown option '$1' (see the top of tools/test.sh)" >&2; exit 2 ;;
  esac
  shift
done
((suite + sanitize + fuzz + tsan)) || suite=1

# phase NAME COMMAND...: runs COMMAND and prints how long it took (wall
# seconds; on a shared machine that includes waiting for the CPU). set -e
# does not reach into COMMAND (it runs left of ||): the functions below
# chain their steps with &&.
phases=()
phase() {
  local name=$1 start=$SECONDS
  shift
  echo "== $name"
  "$@" || {
    local status=$?
    phases+=("$name (failed) $((SECONDS - start))")
    exit "$status"
  }
  phases+=("$name $((SECONDS - start))")
  echo "== $name: $((SECONDS - start)) s"
}
trap 'echo "== phase times (s):"; for p in "${phases[@]}"; do echo "   ${p% *}: ${p##* }"; done' EXIT

phase packages bash tools/deps.sh

if ((suite)); then
  phase configure+build bash tools/build.sh
  # Twice as many tests as cores: several of the longest tests mostly wait
  # (timeouts, rendezvous), and one per core left the cores a third idle.
  phase suite bash -c 'cd build && ctest --output-on-failure -j"$((2 * $(nproc)))" --timeout 900'
fi

if ((sanitize)); then
  # The store, the transports, the rendezvous and the launcher: what faces
  # the network and other processes. Left out, and why: the simulator's
  # fibers (ucontext stacks that ASan is not told about; test_transport_fibers)
  # and the GUI (Debian's imgui, not this project's code); the programs that
  # need the whole `ringlab` command are run by the main suite only, to keep
  # this build small.
  targets=(test_store test_store_limits store_host test_tcp test_job_token test_launch
           test_launch_blame test_launch_rendezvous test_transport_inproc test_transport_tcp
           own_ranks test_own_ranks test_transport_nccl_rules)
  tests='^(test_store_(client|protocol|budget|limits)|test_job_token'
  tests+='|test_tcp_(framing|environment|transport|collectives|faults|rendezvous|engine|blame|open_job)'
  tests+='|test_launch|test_launch_blame|test_launch_rendezvous|test_transport_inproc'
  tests+='|test_transport_tcp|test_own_ranks|test_transport_nccl_rules)$'
  sanitizer_build() {
    cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DRINGLAB_SANITIZE=ON >/dev/null &&
    cmake --build build-sanitize -j"$(nproc)" --target "${targets[@]}"
  }
  sanitizer_run() {
    # halt_on_error: an ASan report fails the test; detect_leaks: so does a leak.
    (cd build-sanitize &&
      ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest -R "$tests" --output-on-failure -j"$(nproc)" --timeout 900)
  }
  phase sanitizer-build sanitizer_build
  phase sanitizer-run sanitizer_run
fi

if ((fuzz)); then
  phase fuzz bash tools/fuzz.sh "$fuzz_seconds"
fi

if ((tsan)); then
  # -Wno-tsan: g++ 12 warns that TSan does not model atomic_thread_fence
  # (libstdc++'s shared_ptr uses it); ringlab's own code does not.
  tsan_build_and_run() {
    cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS="-fsanitize=thread -Wno-tsan" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
      -DRINGLAB_TEST_TIMEOUT_SCALE=8 >/dev/null &&
    cmake --build build-tsan -j"$(nproc)" --target test_inproc test_transport_inproc \
      test_transport_tcp test_transport_nccl_rules &&
    (cd build-tsan && TSAN_OPTIONS=halt_on_error=1 \
      ctest -R '^(test_inproc|test_transport_inproc|test_transport_tcp|test_transport_nccl_rules)$' \
      --output-on-failure -j"$(nproc)" --timeout 900)
  }
  phase tsan tsan_build_and_run
fi
