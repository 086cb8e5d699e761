#!/usr/bin/env bash
# ringlab's TCP all_reduce against real Gloo (PyTorch), with the loopback
# ceiling, on a machine with free cores, in one run that prints one table.
#
#   bash bench/gloo_16core.sh --ringlab-dir DIR [--cores 0-7] [--ranks "2 4 8"]
#        [--sizes 4K:64M] [--rounds 3] [--iters 10] [--warmup 3]
#        [--ceiling-size 64M] [--python PYTHON] [--no-gloo] [--out DIR] [--budget 220]
#        [--baseline-dir DIR2]
#   bash bench/gloo_16core.sh --pack DIR     # here: copy ringlab and its libraries into DIR
#
# DIR holds the ringlab executable and the shared libraries it needs (--pack
# makes such a folder from ./build/tools/ringlab, leaving out the C library,
# which the machine has); nothing else of ringlab (no Boost, no CLI11) is
# needed there. Everything runs pinned to --cores (taskset; the ranks inherit
# it). Each round runs, in an order that rotates from round to round:
#   - for each rank count: `ringlab bench --op all_reduce --backend tcp` with
#     --algorithm auto and with --algorithm ring, and the Gloo peer
#     (bench/peers/torch_gloo_allreduce.py: torch.distributed's Gloo
#     all_reduce, float32, at the same sizes);
#   - `ringlab bench --op loopback` with 1 and 2 connections and `ringlab bench
#     --op sendrecv -n 2`, at --ceiling-size.
# With --baseline-dir (another build's folder, e.g. main's), its all_reduce
# auto runs too, in the same rounds, and the table adds its time and
# base/auto (>= 1: this build at or ahead of the baseline).
# The table gives the median time per size over the rounds, busbw as
# nccl-tests (2(n-1)/n * size / time), and Gloo's time / ringlab's (>= 1:
# ringlab is at or ahead); then the ceiling lines: sendrecv per direction
# against one of two plain loopback connections, and the 2-rank all_reduce's
# busbw against one connection.
#
# The defaults (3 rank counts x 15 sizes x 3 rounds) should take 2 to 3
# minutes on 16 cores; --rounds 1, --ranks "4", --sizes 1M:64M or --iters 5
# shrink it. No round starts that would end past --budget seconds (judged by
# the round before it; default 220), so the whole run stays under 4 minutes.
# The Gloo peer needs a Python with torch (--python, else the first of
# python3 and /usr/bin/python3 that has it); without one it is left out and
# the table says so. Raw outputs land in --out (default /tmp/gloo16-DATE).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ringlab_dir=""
cores="0-7"
ranks_list="2 4 8"
sizes="4K:64M"
rounds=3
iters=10
warmup=3
ceiling_size="64M"
python=""
gloo=1
out=""
pack=""
budget=220
baseline_dir=""

usage() { sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "gloo_16core.sh: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --ringlab-dir) ringlab_dir=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --ranks) ranks_list=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --ceiling-size) ceiling_size=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --no-gloo) gloo=0; shift ;;
    --out) out=$2; shift 2 ;;
    --pack) pack=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --baseline-dir) baseline_dir=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

# ---- --pack: the folder to copy to the other machine ------------------------
if [[ -n "$pack" ]]; then
  exe=${RINGLAB:-./build/tools/ringlab}
  [[ -x "$exe" ]] || die "--pack: $exe is not built (cmake --build build --target ringlab)"
  mkdir -p "$pack"
  cp "$exe" "$pack/ringlab"
  # Every library ldd resolves, but the C library's own (the machine has them).
  ldd "$exe" | awk '$3 ~ /^\// { print $3 }' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
      *) cp -L "$lib" "$pack/" ;;
    esac
  done
  cp "$here/gloo_16core.sh" "$here/peers/torch_gloo_allreduce.py" "$pack/"
  echo "packed $(ls "$pack" | wc -l) files into $pack; there: bash gloo_16core.sh --ringlab-dir ."
  exit 0
fi

# ---- checks -----------------------------------------------------------------
[[ -n "$ringlab_dir" ]] || die "--ringlab-dir DIR is needed: the folder with the ringlab executable"
[[ -x "$ringlab_dir/ringlab" ]] || die "no executable $ringlab_dir/ringlab"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a positive number, got '$rounds'"
[[ "$budget" =~ ^[1-9][0-9]*$ ]] || die "--budget needs a number of seconds, got '$budget'"
command -v taskset >/dev/null || die "taskset is missing (util-linux)"
taskset -c "$cores" true 2>/dev/null || die "--cores $cores: taskset cannot pin to these cores"
ringlab_dir=$(cd "$ringlab_dir" && pwd)
export LD_LIBRARY_PATH="$ringlab_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ringlab=("taskset" "-c" "$cores" "$ringlab_dir/ringlab")
"${ringlab[@]}" --help >/dev/null 2>&1 || die "$ringlab_dir/ringlab does not start there (missing libraries? ldd $ringlab_dir/ringlab)"
baseline=()
if [[ -n "$baseline_dir" ]]; then
  [[ -x "$baseline_dir/ringlab" ]] || die "--baseline-dir: no executable $baseline_dir/ringlab"
  baseline_dir=$(cd "$baseline_dir" && pwd)
  baseline=("env" "LD_LIBRARY_PATH=$baseline_dir:$LD_LIBRARY_PATH" "taskset" "-c" "$cores" "$baseline_dir/ringlab")
  "${baseline[@]}" --help >/dev/null 2>&1 || die "$baseline_dir/ringlab does not start there"
fi

peer=""
for candidate in "$ringlab_dir/torch_gloo_allreduce.py" "$here/peers/torch_gloo_allreduce.py"; do
  [[ -f "$candidate" ]] && { peer=$candidate; break; }
done
gloo_note=""
if [[ $gloo == 1 ]]; then
  if [[ -z "$python" ]]; then
    for candidate in python3 /usr/bin/python3; do
      if command -v "$candidate" >/dev/null && "$candidate" -c 'import torch' 2>/dev/null; then
        python=$candidate; break
      fi
    done
  fi
  if [[ -z "$python" ]] || ! "$python" -c 'import torch' 2>/dev/null; then
    gloo=0; gloo_note="Gloo left out: no Python with torch (--python)"
  elif [[ -z "$peer" ]]; then
    gloo=0; gloo_note="Gloo left out: torch_gloo_allreduce.py not found"
  fi
else
  gloo_note="Gloo left out (--no-gloo)"
fi

out=${out:-/tmp/gloo16-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/raw"
runs="$out/runs.txt"   # one line per row: what ranks round size time_us
: > "$runs"
failed=0

# ---- one run of each kind -----------------------------------------------------
bench_args=(--sizes "$sizes" --iters "$iters" --warmup "$warmup")

# Appends the nccl-tests rows of a ringlab bench run as "what ranks round size time".
ringlab_run() {  # NAME RANKS ROUND ARGS... (NAME base: the baseline build)
  local name=$1 ranks=$2 round=$3; shift 3
  local file="$out/raw/$name-n$ranks-r$round.txt"
  local exe=("${ringlab[@]}")
  [[ $name == base ]] && exe=("${baseline[@]}")
  if "${exe[@]}" bench "$@" > "$file" 2>&1; then
    awk -v w="$name" -v n="$ranks" -v r="$round" '!/^#/ && NF >= 9 && $9 == 0 { print w, n, r, $1, $6 }' "$file" >> "$runs"
    if awk '!/^#/ && NF >= 9 && $9 != 0 { bad = 1 } END { exit !bad }' "$file"; then
      echo "gloo_16core.sh: $name on $ranks ranks: #wrong > 0 (see $file)" >&2; failed=1
    fi
  else
    echo "gloo_16core.sh: $name on $ranks ranks failed in round $round (see $file)" >&2; failed=1
  fi
}

gloo_run() {  # RANKS ROUND
  local ranks=$1 round=$2
  local file="$out/raw/gloo-n$ranks-r$round.txt"
  local port=$((20000 + RANDOM % 20000))
  if taskset -c "$cores" "$python" "$peer" "$ranks" "$port" "$iters" "$sizes" > "$file" 2>&1; then
    awk -v n="$ranks" -v r="$round" '$1 == "gloo" { print "gloo", n, r, $3, $5 }' "$file" >> "$runs"
  else
    echo "gloo_16core.sh: the Gloo peer on $ranks ranks failed in round $round (see $file)" >&2; failed=1
  fi
}

# The runs of one round, as commands; rotated by the round number.
round_jobs() {
  for n in $ranks_list; do
    echo "ringlab_run auto $n ROUND --op all_reduce --backend tcp -n $n --algorithm auto ${bench_args[*]}"
    echo "ringlab_run ring $n ROUND --op all_reduce --backend tcp -n $n --algorithm ring ${bench_args[*]}"
    [[ $gloo == 1 ]] && echo "gloo_run $n ROUND"
    [[ ${#baseline[@]} -gt 0 ]] && echo "ringlab_run base $n ROUND --op all_reduce --backend tcp -n $n --algorithm auto ${bench_args[*]}"
  done
  echo "ringlab_run loopback 1 ROUND --op loopback -n 1 --sizes $ceiling_size:$ceiling_size --iters $iters --warmup $warmup"
  echo "ringlab_run loopback 2 ROUND --op loopback -n 2 --sizes $ceiling_size:$ceiling_size --iters $iters --warmup $warmup"
  echo "ringlab_run sendrecv 2 ROUND --op sendrecv --backend tcp -n 2 --sizes $ceiling_size:$ceiling_size --iters $iters --warmup $warmup"
  return 0
}

mapfile -t jobs < <(round_jobs)
started=$SECONDS
echo "# pinned to cores $cores ($(taskset -c "$cores" nproc) processors); $rounds rounds; raw outputs in $out"
done_rounds=0
for ((round = 0; round < rounds; round++)); do
  if ((round > 0 && SECONDS - started + (SECONDS - started) / round > budget)); then
    echo "# stopped after $round rounds: another would pass --budget $budget s" >&2
    break
  fi
  for ((j = 0; j < ${#jobs[@]}; j++)); do
    job=${jobs[$(((j + round) % ${#jobs[@]}))]}
    eval "${job//ROUND/$round}"
  done
  echo "# round $((round + 1)) of $rounds done after $((SECONDS - started)) s" >&2
  done_rounds=$((round + 1))
done
rounds=$done_rounds

# ---- the table -----------------------------------------------------------------
ceiling_bytes=$(awk -v s="$ceiling_size" 'BEGIN { m = 1; u = toupper(substr(s, length(s)))
  if (u == "K") m = 1024; else if (u == "M") m = 1048576; else if (u == "G") m = 1073741824
  print (m > 1 ? substr(s, 1, length(s) - 1) : s) * m }')
sort -k1,1 -k2,2n -k4,4n -k5,5g "$runs" | awk -v note="$gloo_note" -v cb="$ceiling_bytes" -v cores="$cores" -v rounds="$rounds" -v base="${#baseline[@]}" '
  function median(key,   n, i, a, m) {
    n = split(times[key], a, " ")
    for (i = 2; i <= n; i++) { m = a[i]; j = i - 1; while (j > 0 && a[j] + 0 > m + 0) { a[j + 1] = a[j]; j-- } a[j + 1] = m }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { key = $1 SUBSEP $2 SUBSEP $4; times[key] = times[key] (key in times ? " " : "") $5
    if ($1 != "loopback" && $1 != "sendrecv") { ranks[$2] = 1; sizes[$4] = 1 } }
  END {
    printf "# ringlab all_reduce (tcp) and Gloo (torch.distributed), float32 sum, pinned to cores %s;\n", cores
    printf "# medians over %d rounds; time in us, busbw in GB/s; gloo/x = Gloo time / x time (>= 1: x at or ahead)\n", rounds
    if (note != "") printf "# %s\n", note
    printf "%5s %10s %10s %7s %10s %7s %10s %7s %9s %9s", "ranks", "size(B)", "auto us", "busbw", "ring us", "busbw", "gloo us", "busbw", "gloo/auto", "gloo/ring"
    if (base > 0) printf " %10s %9s\n", "base us", "base/auto"; else printf "\n"
    nr = 0; for (r in ranks) rk[++nr] = r + 0
    ns = 0; for (s in sizes) sz[++ns] = s + 0
    for (i = 2; i <= nr; i++) { y = rk[i]; j = i - 1; while (j > 0 && rk[j] > y) { rk[j + 1] = rk[j]; j-- } rk[j + 1] = y }
    for (i = 2; i <= ns; i++) { y = sz[i]; j = i - 1; while (j > 0 && sz[j] > y) { sz[j + 1] = sz[j]; j-- } sz[j + 1] = y }
    for (a = 1; a <= nr; a++) for (b = 1; b <= ns; b++) {
      n = rk[a]; s = sz[b]; f = 2 * (n - 1) / n
      line = sprintf("%5d %10d", n, s)
      split("", t)
      for (w = 1; w <= 3; w++) {
        name = w == 1 ? "auto" : w == 2 ? "ring" : "gloo"; k = name SUBSEP n SUBSEP s
        if (k in times) { t[name] = median(k); line = line sprintf(" %10.1f %7.3f", t[name], f * s / t[name] / 1e3) }
        else line = line sprintf(" %10s %7s", "-", "-")
      }
      for (w = 1; w <= 2; w++) {
        name = w == 1 ? "auto" : "ring"
        line = line (("gloo" in t) && (name in t) ? sprintf(" %9.2f", t["gloo"] / t[name]) : sprintf(" %9s", "-"))
      }
      k = "base" SUBSEP n SUBSEP s
      if (base > 0) line = line ((k in times) && ("auto" in t) ? sprintf(" %10.1f %9.2f", median(k), median(k) / t["auto"]) : sprintf(" %10s %9s", "-", "-"))
      print line
    }
    k1 = "loopback" SUBSEP 1 SUBSEP cb; k2 = "loopback" SUBSEP 2 SUBSEP cb; ks = "sendrecv" SUBSEP 2 SUBSEP cb
    ka = "auto" SUBSEP 2 SUBSEP cb; kr = "ring" SUBSEP 2 SUBSEP cb
    one = (k1 in times) ? cb / median(k1) / 1e3 : 0
    two = (k2 in times) ? cb / median(k2) / 1e3 : 0   # per connection, two at once
    if (one > 0) printf "ceiling at %d B: one plain loopback connection %.3f GB/s; each of two at once %.3f GB/s (%.3f together)\n", cb, one, two, 2 * two
    if ((ks in times) && two > 0) { v = cb / median(ks) / 1e3
      printf "sendrecv, 2 ranks, %d B: %.3f GB/s each way = %.2fx one of two plain connections (goal >= 0.8)\n", cb, v, v / two }
    for (w = 1; w <= 2; w++) { k = w == 1 ? ka : kr; name = w == 1 ? "auto" : "ring"
      if ((k in times) && one > 0) { v = cb / median(k) / 1e3
        printf "all_reduce %s, 2 ranks, %d B: busbw %.3f GB/s = %.2fx one plain connection (goal >= 0.8)\n", name, cb, v, v / one } }
  }' | tee "$out/summary.txt"
echo "# took $((SECONDS - started)) s" | tee -a "$out/summary.txt"
exit "$failed"
