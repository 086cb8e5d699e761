#!/usr/bin/env bash
# Do two ringlab builds simulate the same steps? For the collectives whose
# steps go through sendrecv_reduce (all_reduce's and reduce_scatter's
# algorithms), at several rank counts and sizes, recorded and message-level,
# it compares each build's "N steps, M messages, at most B bytes" and
# "total" lines, and prints the cases that differ and a count.
#
#   bash bench/sim_steps.sh BEFORE AFTER      # e.g. /tmp/before/ringlab ./build/tools/ringlab
#
# Exit status 1 when any case differs or gives no answer.
set -euo pipefail
[[ $# -eq 2 ]] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
before=$1 after=$2
same=0 differ=0
for spec in "all_reduce ring" "all_reduce rabenseifner" "all_reduce recursive_doubling" \
            "all_reduce reduce_broadcast" "all_reduce binary_tree" \
            "reduce_scatter ring" "reduce_scatter recursive_halving"; do
  read -r op algo <<< "$spec"
  for n in 2 3 4 5 8; do
    for bytes in 4K 1M 3M 8M 20M; do
      for path in recorded messages; do
        args=(sim "$op" --algo "$algo" -n "$n" --bytes "$bytes" --path "$path" --gamma 0.5 --no-steps)
        b=$("$before" "${args[@]}" 2>&1 | grep -E 'steps,|total') || true
        a=$("$after" "${args[@]}" 2>&1 | grep -E 'steps,|total') || true
        if [[ -n "$a" && "$a" == "$b" ]]; then
          same=$((same + 1))
        else
          differ=$((differ + 1))
          echo "differ: ringlab ${args[*]}"
          diff <(echo "$b") <(echo "$a") | sed 's/^/  /' | head -6 || true
        fi
      done
    done
  done
done
echo "same: $same, different or unanswered: $differ"
[[ $differ == 0 ]]
