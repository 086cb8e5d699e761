#!/usr/bin/env bash
# Compares ringlab variants (two builds, or algorithms of one build) on a busy
# machine: runs `ringlab bench` for each variant in turn, round after round, so
# that every variant sees the same load, and prints the median time and busbw
# per size.
#
#   bash bench/interleave.sh [--rounds R] VARIANT... -- BENCH-ARGS...
#
# A VARIANT is NAME=COMMAND: the ringlab executable and any `bench` options
# of its own (they go after `bench`), e.g.
#   bash bench/interleave.sh --rounds 5 \
#       before=/tmp/ringlab-before after=./build/tools/ringlab \
#       -- --op all_reduce -n 2 --backend tcp --sizes 256K:64M --iters 10 --warmup 3
#   bash bench/interleave.sh ring="./build/tools/ringlab --algorithm ring" \
#       rabenseifner="./build/tools/ringlab --algorithm rabenseifner" \
#       -- --op all_reduce -n 4 --backend tcp --sizes 256K:64M
# BENCH-ARGS go to `ringlab bench` for every variant. The busbw column uses the
# bench's own bus factor (the ratio busbw/algbw of its rows). A variant whose
# run fails is reported, and the script exits non-zero at the end.
set -euo pipefail

rounds=5
names=()
commands=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *=*) names+=("${1%%=*}"); commands+=("${1#*=}"); shift ;;
    *) echo "interleave.sh: '$1' is not NAME=COMMAND; see --help" >&2; exit 2 ;;
  esac
done
if [[ ${#names[@]} -eq 0 ]]; then
  echo "interleave.sh: no variants; give at least one NAME=COMMAND before --" >&2
  exit 2
fi

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
failed=0
for ((round = 0; round < rounds; round++)); do
  for i in "${!names[@]}"; do
    # The executable, then `bench`, then the variant's own options and BENCH-ARGS.
    read -r -a words <<< "${commands[$i]}"
    if ! output=$("${words[0]}" bench "${words[@]:1}" "$@" 2>&1); then
      echo "interleave.sh: variant ${names[$i]} failed in round $((round + 1)):" >&2
      echo "$output" | tail -5 >&2
      failed=1
      continue
    fi
    # nccl-tests rows: size count type redop root time algbw busbw #wrong.
    echo "$output" | awk -v name="${names[$i]}" '!/^#/ && NF >= 9 { print name, $1, $6, $7, $8, $9 }' >> "$rows"
  done
done

# Median time per (variant, size), the variants in the order given. The bus
# factor is a variant's busbw/algbw on its row with the largest algbw (the
# rows print three decimals, so small ones would give a rough ratio).
sort -k1,1 -k2,2n -k3,3g "$rows" | awk -v order="${names[*]}" '
  function flush() {
    if (n == 0) return
    m = (n % 2) ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2
    median[key] = m; wrong[key] = w
    sizes[s] = 1; n = 0
  }
  { k = $1 SUBSEP $2
    if (k != key) { flush(); key = k; s = $2 + 0; w = 0 }
    t[++n] = $3; w += $6
    if ($4 > best_algbw[$1]) { best_algbw[$1] = $4; fac[$1] = $5 / $4 } }
  END {
    flush()
    nv = split(order, v, " ")
    printf "%12s", "size(B)"
    for (i = 1; i <= nv; i++) printf "  %22s", v[i] " us / busbw"
    printf "\n"
    ns = 0
    for (x in sizes) sz[++ns] = x + 0
    for (i = 2; i <= ns; i++) { y = sz[i]; j = i - 1   # insertion sort: mawk has no asort
      while (j > 0 && sz[j] > y) { sz[j + 1] = sz[j]; j-- } sz[j + 1] = y }
    for (a = 1; a <= ns; a++) {
      printf "%12d", sz[a]
      for (i = 1; i <= nv; i++) {
        k = v[i] SUBSEP sz[a]
        f = (v[i] in fac) ? fac[v[i]] : 1
        if (k in median)
          printf "  %12.1f %6.3f%s", median[k], sz[a] / median[k] / 1e3 * f, wrong[k] ? "!" : " "
        else
          printf "  %22s", "-"
      }
      printf "\n"
    }
    print "medians over the rounds; busbw in GB/s; ! marks a size with #wrong > 0"
  }'
exit "$failed"
