#!/usr/bin/env bash
# README's third command: builds ringlab twice more, with AddressSanitizer and
# UndefinedBehaviorSanitizer (g++, ./build-sanitize) and for libFuzzer (clang,
# ./build-fuzz), runs the network-facing tests under the sanitizers and each
# fuzz target for 15 s. CI (.ci/run) runs it after tools/test.sh; it is a
# command of its own because the two builds take about as long as the whole
# suite (docs/benchmarks.md, "The test command"). docs/hardening.md says what
# these runs cover and leave out.
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash tools/test.sh --sanitize --fuzz "$@"
