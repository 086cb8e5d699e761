#!/usr/bin/env bash
# Builds everything and runs every test: the suite (./build), then the TCP,
# store, launcher and transport tests again under ASan+UBSan
# (./build-sanitize), then each fuzz target for a few seconds (./build-fuzz,
# clang). docs/hardening.md says what the last two cover and leave out.
#   tools/test.sh               all three
#   tools/test.sh --sanitize    only the sanitizer run
#   tools/test.sh --fuzz [S]    only the fuzz run, S seconds per target (default 15)
#   --no-sanitize, --no-fuzz    leave that part out of the full run
#   tools/test.sh --tsan        only a ThreadSanitizer run of the inproc and TCP
#                               transports (./build-tsan; not part of the full run)
set -euo pipefail
cd "$(dirname "$0")/.."
suite=1 sanitize=1 fuzz=1 tsan=0 fuzz_seconds=15
while (($#)); do
  case $1 in
    --sanitize) suite=0 fuzz=0 ;;
    --fuzz)
      suite=0 sanitize=0
      if [[ ${2:-} =~ ^[0-9]+$ ]]; then fuzz_seconds=$2; shift; fi
      ;;
    --tsan) suite=0 sanitize=0 fuzz=0 tsan=1 ;;
    --no-sanitize) sanitize=0 ;;
    --no-fuzz) fuzz=0 ;;
    *) echo "tools/test.sh: unknown option '$1' (see the top of tools/test.sh)" >&2; exit 2 ;;
  esac
  shift
done

if ((suite)); then
  bash tools/build.sh
  (cd build && ctest --output-on-failure -j"$(nproc)" --timeout 900)
fi

if ((sanitize)); then
  bash tools/deps.sh
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
  tests+='|test_tcp_(framing|environment|transport|collectives|faults|rendezvous|engine|blame)'
  tests+='|test_launch|test_launch_blame|test_launch_rendezvous|test_transport_inproc'
  tests+='|test_transport_tcp|test_own_ranks|test_transport_nccl_rules)$'
  cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRINGLAB_SANITIZE=ON \
    >/dev/null
  cmake --build build-sanitize -j"$(nproc)" --target "${targets[@]}"
  # halt_on_error: an ASan report fails the test; detect_leaks: so does a leak.
  (cd build-sanitize &&
    ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest -R "$tests" --output-on-failure -j"$(nproc)" --timeout 900)
fi

if ((fuzz)); then
  bash tools/deps.sh
  bash tools/fuzz.sh "$fuzz_seconds"
fi

if ((tsan)); then
  bash tools/deps.sh
  # -Wno-tsan: g++ 12 warns that TSan does not model atomic_thread_fence
  # (libstdc++'s shared_ptr uses it); ringlab's own code does not.
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="-fsanitize=thread -Wno-tsan" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
    >/dev/null
  cmake --build build-tsan -j"$(nproc)" --target test_inproc test_transport_inproc test_transport_tcp \
    test_transport_nccl_rules
  (cd build-tsan && TSAN_OPTIONS=halt_on_error=1 \
    ctest -R '^(test_inproc|test_transport_inproc|test_transport_tcp|test_transport_nccl_rules)$' \
    --output-on-failure \
    -j"$(nproc)" --timeout 900)
fi
