#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang into ./build-fuzz and runs
# each on its seed corpus (fuzz/corpus/<target>/) for a bounded time.
#   tools/fuzz.sh [seconds-per-target]    default 15: about 60 s for the four
# Fails if any target finds a crash, a hang, a leak or undefined behaviour;
# the input that did it is kept in build-fuzz/findings/ (docs/hardening.md
# says how to replay it). What the runs learn goes to build-fuzz/corpus/, not
# to the repository's seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
targets=(frame store handshake environment)
if ! command -v clang++-14 >/dev/null; then
  echo "tools/fuzz.sh: clang++-14 is missing (tools/deps.sh installs it)" >&2
  exit 1
fi
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRINGLAB_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}"
mkdir -p build-fuzz/findings
failed=()
for target in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$target"
  options=(-max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1
           -artifact_prefix="build-fuzz/findings/$target-")
  [[ -f fuzz/$target.dict ]] && options+=(-dict="fuzz/$target.dict")
  echo "== fuzz_$target for ${seconds} s (seeds: fuzz/corpus/$target)"
  log=build-fuzz/fuzz_$target.log
  if build-fuzz/fuzz/fuzz_"$target" "${options[@]}" "build-fuzz/corpus/$target" \
       "fuzz/corpus/$target" >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^Done' "$log" | tr '\n' ' '
    echo
  else
    failed+=("$target")
    tail -n 40 "$log"
    echo "fuzz_$target FAILED (log: $log; inputs: build-fuzz/findings/$target-*)"
  fi
done
if ((${#failed[@]})); then
  echo "fuzzing found problems in: ${failed[*]}" >&2
  exit 1
fi
echo "fuzzing: ${#targets[@]} targets, ${seconds} s each, nothing found"
