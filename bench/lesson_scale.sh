#!/usr/bin/env bash
# How a lesson's time grows with the world, backend beside backend: runs
# `ringlab lesson NAME --backend B -n N` for every backend in turn, round
# after round (so that each sees the same load on a busy machine), and prints
# the median wall and CPU seconds per backend and rank count.
#
#   bash bench/lesson_scale.sh [--rounds 3] [--lesson all_reduce]
#        [--backends "inproc nccl_rules"] [--ranks "256 512 1024"]
#        [--ringlab ./build/tools/ringlab]
#
# docs/benchmarks.md ("NCCL's rules at 1024 ranks") quotes its output.
set -euo pipefail

rounds=3
lesson=all_reduce
backends="inproc nccl_rules"
ranks="256 512 1024"
ringlab=./build/tools/ringlab
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --lesson) lesson="$2"; shift 2 ;;
    --backends) backends="$2"; shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    --ringlab) ringlab="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/lesson_scale.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$ringlab" ]] || { echo "bench/lesson_scale.sh: no $ringlab: build first (tools/build.sh)" >&2; exit 2; }

rows=$(mktemp)
timing=$(mktemp)
trap 'rm -f "$rows" "$timing"' EXIT
for ((round = 1; round <= rounds; round++)); do
  for n in $ranks; do
    for backend in $backends; do
      if ! /usr/bin/time -o "$timing" -f "%e %U %S" "$ringlab" lesson "$lesson" \
             --backend "$backend" -n "$n" >/dev/null 2>&1; then
        echo "round $round: lesson $lesson --backend $backend -n $n failed" >&2
        exit 1
      fi
      read -r wall user sys <"$timing"
      echo "$backend $n $wall $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" >>"$rows"
      echo "round $round: $backend -n $n: ${wall} s wall" >&2
    done
  done
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-12s %6s %12s %12s   (median of %d rounds; load %s)\n' backend ranks wall_s cpu_s "$rounds" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
for n in $ranks; do
  for backend in $backends; do
    wall=$(awk -v b="$backend" -v n="$n" '$1 == b && $2 == n { print $3 }' "$rows" | median)
    cpu=$(awk -v b="$backend" -v n="$n" '$1 == b && $2 == n { print $4 }' "$rows" | median)
    printf '%-12s %6s %12s %12s\n' "$backend" "$n" "$wall" "$cpu"
  done
done
