#!/usr/bin/env bash
# Two ringlab builds, round by round, each round running both back to back
# (the order alternating from round to round), and per size the ratio of
# their times in each round: the median ratio over the rounds, its quartiles,
# and in how many rounds the second build was faster. On a machine whose load
# moves, a per-round ratio shows a difference that medians taken apart
# (bench/interleave.sh) blur.
#
#   bash bench/paired.sh [--rounds 20] BEFORE AFTER -- BENCH-ARGS...
#   bash bench/paired.sh /tmp/before/ringlab ./build/tools/ringlab \
#       -- --op all_reduce -n 2 --backend tcp --sizes 1M:64M --iters 5 --warmup 2
#
# BENCH-ARGS go to `ringlab bench` for both. Rows with #wrong > 0 are left
# out and said so; a failed run is reported and the exit status is 1.
set -euo pipefail

rounds=20
[[ ${1:-} == --rounds ]] && { rounds=$2; shift 2; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[[ $# -ge 3 && $3 == -- ]] || { echo "paired.sh: give BEFORE AFTER -- BENCH-ARGS (see --help)" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "paired.sh: --rounds needs a positive number, got '$rounds'" >&2; exit 2; }
before=$1 after=$2
shift 3
for exe in "$before" "$after"; do
  [[ -x $exe ]] || { echo "paired.sh: no executable $exe" >&2; exit 2; }
done

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
failed=0
for ((r = 0; r < rounds; r++)); do
  order=(before after)
  ((r % 2)) && order=(after before)
  for v in "${order[@]}"; do
    exe=$before
    [[ $v == after ]] && exe=$after
    if ! output=$("$exe" bench "$@" 2>&1); then
      echo "paired.sh: $v ($exe) failed in round $((r + 1)):" >&2
      echo "$output" | tail -3 >&2
      failed=1
      continue
    fi
    echo "$output" | awk -v v="$v" -v r="$r" '!/^#/ && NF >= 9 {
      if ($9 != 0) print "paired.sh: " v " round " r + 1 ", " $1 " B: #wrong " $9 " (left out)" > "/dev/stderr"
      else print r, v, $1, $6 }' >> "$rows"
  done
done

awk '{ t[$1, $2, $3] = $4; sizes[$3] = 1; seen[$1] = 1 }
  END {
    for (s in sizes) {
      n = 0; faster = 0
      for (r in seen) if (((r, "before", s) in t) && ((r, "after", s) in t)) {
        x = t[r, "after", s] / t[r, "before", s]; q[++n] = x; if (x < 1) faster++ }
      if (n == 0) continue
      for (i = 2; i <= n; i++) { y = q[i]; j = i - 1; while (j > 0 && q[j] > y) { q[j + 1] = q[j]; j-- } q[j + 1] = y }
      m = (n % 2) ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2
      printf "%12d %8.3f %8.3f %8.3f %7d/%d\n", s, m, q[int(n / 4) + 1], q[int(3 * n / 4) + 1], faster, n
    }
  }' "$rows" | sort -n | { printf "%12s %8s %8s %8s %9s\n" "size(B)" "median" "q1" "q3" "faster"; cat; }
echo "after/before time per round: median and quartiles over the rounds; faster: rounds where after took less"
exit "$failed"
