#!/usr/bin/env bash
# Soak: JOBS `ringlab run` jobs at once on loopback, ROUNDS times over, each
# job under `timeout`. Every job picks its own free MASTER_PORT (ringlab
# run's default), so this is also a test of many jobs starting side by side.
#   tools/soak.sh [--ringlab PATH] [JOBS [ROUNDS]]     defaults: 20 jobs, 3 rounds
# The jobs alternate: an all_reduce bench of 3 ranks (every row must have 0
# wrong elements) and the all_reduce lesson on 2 ranks (its output must be the
# article's). Prints one line per round and the log of every failed job;
# exits 1 if any job failed, timed out or printed a wrong result.
set -uo pipefail
cd "$(dirname "$0")/.."
ringlab=build/tools/ringlab
if [[ ${1:-} == --ringlab ]]; then
  ringlab=$2
  shift 2
fi
jobs=${1:-20}
rounds=${2:-3}
job_limit_s=60
[[ -x $ringlab ]] || { echo "soak: no ringlab at $ringlab (build first)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ringlab-soak.XXXXXX")
trap 'rm -rf "$work"' EXIT

# One job; its log goes to $work/<round>-<job>.log. Exit status 0 = passed.
one_job() {
  local round=$1 job=$2 log="$work/$1-$2.log"
  if ((job % 2 == 0)); then
    timeout -k 5 "$job_limit_s" "$ringlab" run --nproc-per-node 3 --timeout-ms 30000 -- \
      "$ringlab" bench --op all_reduce -n 3 --backend tcp --sizes 1K:256K --warmup 1 --iters 3 \
      --timeout-ms 30000 >"$log" 2>&1 || return 1
    # Every row of the table, and none with a wrong element (the last column).
    [[ $(grep -c '^ *[0-9]' "$log") -eq 9 ]] || { echo "soak: expected 9 rows" >>"$log"; return 1; }
    awk '/^ *[0-9]/ && $NF != 0 { bad = 1 } END { exit bad }' "$log" ||
      { echo "soak: a row has wrong elements" >>"$log"; return 1; }
  else
    timeout -k 5 "$job_limit_s" "$ringlab" run --nproc-per-node 2 --timeout-ms 30000 -- \
      "$ringlab" lesson all_reduce -n 2 >"$log" 2>&1 || return 1
    # The article's all_reduce of [1, 2] and [3, 4] (seed 001).
    [[ $(grep -c 'after reudce  Rank  [01]  has data  tensor(\[4, 6\])' "$log") -eq 2 ]] ||
      { echo "soak: not the article's result" >>"$log"; return 1; }
  fi
}

start=$SECONDS
failures=0
for ((round = 1; round <= rounds; ++round)); do
  pids=()
  for ((job = 0; job < jobs; ++job)); do
    one_job "$round" "$job" &
    pids+=($!)
  done
  failed_now=0
  for ((job = 0; job < jobs; ++job)); do
    if ! wait "${pids[$job]}"; then
      ((++failed_now))
      echo "---- round $round, job $job failed; its log:"
      cat "$work/$round-$job.log"
    fi
  done
  failures=$((failures + failed_now))
  echo "soak: round $round/$rounds: $jobs jobs, $failed_now failed ($((SECONDS - start)) s so far)"
done
echo "soak: $((jobs * rounds)) jobs in $((SECONDS - start)) s, $failures failed"
((failures == 0))
