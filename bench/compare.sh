#!/usr/bin/env bash
# ringlab's all_reduce against Gloo and Open MPI, side by side, on loopback TCP.
#
#   bash bench/compare.sh [--rounds 5] [--ranks "2 4"] [--sizes 4K:64M]
#                         [--warmup 5] [--iters 20] [--backend tcp]
#                         [--algorithm ring|auto|...]  (ringlab's all_reduce algorithm)
#                         [--ringlab ./build/tools/ringlab] [--out DIR]
#                         [--iperf-seconds 3] [--run-timeout 600] [--no-install]
#                         [--skip-ringlab]
#
# Run from the repository root, as root on Debian 12 (it apt-get installs
# libgloo-dev libopenmpi-dev openmpi-bin iperf3 when missing), with ringlab
# built in ./build. It builds the peers (bench/peers, a CMake project of its
# own) into ./build-peers, then for each rank count runs --rounds rounds; a
# round is one iperf3 --bidir ceiling measurement, one `ringlab bench`, one
# gloo_allreduce per Gloo algorithm and one mpi_allreduce, in an order that
# rotates from round to round so that no one always runs first on a busy
# machine. Every run prints nccl-tests rows; the summary takes, per library,
# algorithm, rank count and size, the median time over the rounds, and
# derives busbw from it. docs/benchmarks.md explains the columns.
#
# Everything lands in --out (default build-peers/compare-DATE): raw/ holds
# each run's output, runs.tsv every row, summary.txt what is printed at the end.
set -euo pipefail

rounds=5
ranks_list="2 4"
sizes="4K:64M"
warmup=5
iters=20
backend=tcp
algorithm=auto   # what ringlab runs where none is named
ringlab=./build/tools/ringlab
out=""
iperf_seconds=3
run_timeout=600
install=1
run_ringlab=1
peers_dir=build-peers

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "compare.sh: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --ranks) ranks_list=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --algorithm) algorithm=$2; shift 2 ;;
    --ringlab) ringlab=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --iperf-seconds) iperf_seconds=$2; shift 2 ;;
    --run-timeout) run_timeout=$2; shift 2 ;;
    --no-install) install=0; shift ;;
    --skip-ringlab) run_ringlab=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ -f bench/peers/CMakeLists.txt ]] || die "run me from the repository root (bench/peers/CMakeLists.txt not found in $PWD)"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a positive number, got '$rounds'"

# ---- what it needs ---------------------------------------------------------
packages=(libgloo-dev libopenmpi-dev openmpi-bin iperf3 cmake g++ ninja-build)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  [[ $install == 1 ]] || die "missing Debian packages: ${missing[*]} (drop --no-install, or apt-get install them)"
  [[ $(id -u) == 0 ]] || die "missing Debian packages: ${missing[*]}; run as root or apt-get install them first"
  echo "== installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

echo "== building the peers into $peers_dir"
cmake -S bench/peers -B "$peers_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$peers_dir" -j2 >/dev/null
gloo_bin=$peers_dir/gloo_allreduce
mpi_bin=$peers_dir/mpi_allreduce

if [[ $run_ringlab == 1 ]]; then
  [[ -x $ringlab ]] || die "no ringlab at $ringlab: build it first (bash tools/build.sh, or cmake --build build --target ringlab), or pass --ringlab PATH / --skip-ringlab"
  # The --backend choices are listed in the help ("--backend TEXT:{inproc,tcp}").
  "$ringlab" bench --help | grep -- "--backend" | grep -qE "[{,]$backend[,}]" ||
    die "$ringlab has no backend '$backend' ($("$ringlab" bench --help | grep -- '--backend' | sed 's/^ *//')); pass --backend inproc to try the script"
fi

[[ -n $out ]] || out=$peers_dir/compare-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
runs_tsv=$out/runs.tsv
: > "$runs_tsv"
failures=0

gloo_algorithms=(allreduce allreduce_bcube AllreduceRing AllreduceRingChunked AllreduceHalvingDoubling AllreduceBcube)

# ---- one run of each kind; each writes nccl-tests rows to $1 ----------------
run_ringlab() {  # file ranks
  timeout "$run_timeout" "$ringlab" bench --op all_reduce -n "$2" --sizes "$sizes" \
    --backend "$backend" --algorithm "$algorithm" --warmup "$warmup" --iters "$iters" \
    > "$1" 2> "$1.err"
}

run_gloo() {  # file ranks algorithm
  local store pids=() rc=0 r
  store=$(mktemp -d /tmp/ringlab-gloo-store.XXXXXX)
  for ((r = 0; r < $2; r++)); do
    local sink=/dev/null
    [[ $r == 0 ]] && sink=$1
    timeout "$run_timeout" "$gloo_bin" --rank "$r" --size "$2" --store "$store" --sizes "$sizes" \
      --warmup "$warmup" --iters "$iters" --algorithms "$3" > "$sink" 2>> "$1.err" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  rm -rf "$store"
  return $rc
}

run_mpi() {  # file ranks
  # btl self,tcp: no shared memory; pml ob1: the path that uses those btls.
  timeout "$run_timeout" mpirun --allow-run-as-root --oversubscribe -np "$2" \
    --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo \
    "$mpi_bin" --sizes "$sizes" --warmup "$warmup" --iters "$iters" > "$1" 2> "$1.err"
}

# Appends "library algorithm ranks round bytes time_us wrong" per row of $1.
collect() {  # file library algorithm ranks round
  awk -v lib="$2" -v alg="$3" -v n="$4" -v round="$5" \
    '!/^#/ && NF == 9 && $1 ~ /^[0-9]+$/ { print lib, alg, n, round, $1, $6, $9 }' "$1" >> "$runs_tsv"
}

# One run, its output kept and collected; a failed run is reported, not fatal.
measure() {  # library algorithm ranks round
  local file=$out/raw/$1-$2-n$3-r$4.txt status=0
  case "$1" in
    ringlab) run_ringlab "$file" "$3" || status=$? ;;
    gloo) run_gloo "$file" "$3" "$2" || status=$? ;;
    mpi) run_mpi "$file" "$3" || status=$? ;;
  esac
  if [[ $status != 0 ]]; then
    echo "   $1 $2 on $3 ranks, round $4: FAILED (exit $status; see $file.err)" >&2
    failures=$((failures + 1))
  fi
  collect "$file" "$1" "$2" "$3" "$4"
  [[ -s $file.err ]] || rm -f "$file.err"
}

# iperf3 --bidir on loopback; appends "iperf3 forward|reverse 0 round 0 GB/s 0".
measure_ceiling() {  # round
  local port=$((20000 + RANDOM % 20000)) server json=$out/raw/iperf3-r$1.json
  iperf3 -s -1 -p "$port" > /dev/null 2>&1 &
  server=$!
  sleep 0.5
  if timeout $((iperf_seconds + 30)) iperf3 -c 127.0.0.1 -p "$port" --bidir -t "$iperf_seconds" -J > "$json"; then
    # sum_received: client to server; sum_received_bidir_reverse: the other way.
    awk -v round="$1" '
      /"sum_received":/ { which = "forward" }
      /"sum_received_bidir_reverse":/ { which = "reverse" }
      /"bits_per_second":/ && which != "" {
        v = $2; gsub(/[^0-9.eE+-]/, "", v)
        print "iperf3", which, 0, round, 0, v / 8e9, 0; which = "" }' "$json" >> "$runs_tsv"
  else
    echo "   iperf3 round $1: FAILED (see $json)" >&2
    failures=$((failures + 1))
  fi
  wait "$server" 2>/dev/null || true
}

# ---- the rounds ------------------------------------------------------------
echo "== results in $out"
for ((round = 1; round <= rounds; round++)); do
  echo "== round $round of $rounds: iperf3 --bidir ${iperf_seconds}s"
  measure_ceiling "$round"
  for n in $ranks_list; do
    order=()
    [[ $run_ringlab == 1 ]] && order+=("ringlab $backend")
    for a in "${gloo_algorithms[@]}"; do order+=("gloo $a"); done
    order+=("mpi MPI_Allreduce")
    # Rotate the order by the round number.
    count=${#order[@]}
    for ((j = 0; j < count; j++)); do
      read -r lib alg <<< "${order[$(((j + round - 1) % count))]}"
      echo "   $n ranks: $lib $alg"
      measure "$lib" "$alg" "$n" "$round"
    done
  done
done

# ---- the summary -----------------------------------------------------------
# medians.tsv: "library algorithm ranks bytes median_time_us runs wrong_total".
sort -k1,1 -k2,2 -k3,3n -k5,5n -k6,6g "$runs_tsv" | awk '
  function flush() {
    if (k == 0) return
    med = (k % 2) ? t[(k + 1) / 2] : (t[k / 2] + t[k / 2 + 1]) / 2
    print key, med, k, wrong
  }
  { this = $1 " " $2 " " $3 " " $5
    if (this != key) { flush(); key = this; k = 0; wrong = 0 }
    t[++k] = $6; wrong += $7 }
  END { flush() }' > "$out/medians.tsv"

ringlab_label="ringlab backend $backend, algorithm $algorithm"
[[ $run_ringlab == 1 ]] || ringlab_label="ringlab not run (--skip-ringlab)"
awk -v ranks_list="$ranks_list" -v ringlab_label="$ringlab_label" -v failures="$failures" '
  function busbw(bytes, us, n) { return us > 0 ? bytes / (us * 1e3) * 2 * (n - 1) / n : 0 }
  function fmt(v) { return v == "" ? "-" : sprintf("%.3f", v) }
  function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2f", a / b) }
  $1 == "iperf3" { ceil[$2] = $5; next }
  {
    lib = $1; alg = $2; n = $3; bytes = $4; us = $5
    size_seen[bytes] = 1
    bw = busbw(bytes, us, n)
    if ($7 != 0) bad = bad sprintf("  %s %s, %d ranks, %d B: %d wrong elements\n", lib, alg, n, bytes, $7)
    if (lib == "ringlab") { rl_bw[n, bytes] = bw; rl_us[n, bytes] = us }
    else if (lib == "mpi") { mpi_bw[n, bytes] = bw; mpi_us[n, bytes] = us }
    else if (lib == "gloo") {
      if (alg == "allreduce") { gd_bw[n, bytes] = bw; gd_us[n, bytes] = us }
      if (!((n, bytes) in gb_bw) || bw > gb_bw[n, bytes]) {
        gb_bw[n, bytes] = bw; gb_alg[n, bytes] = alg; gb_us[n, bytes] = us }
    }
  }
  END {
    nsizes = 0
    for (s in size_seen) sizes[++nsizes] = s + 0
    for (i = 2; i <= nsizes; i++)  # insertion sort: mawk has no asort
      for (j = i; j > 1 && sizes[j - 1] > sizes[j]; j--) { x = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = x }
    both = ("forward" in ceil && "reverse" in ceil) ? (ceil["forward"] + ceil["reverse"]) / 2 : ""
    printf "loopback ceiling (iperf3 --bidir, median over rounds): %s GB/s forward, %s GB/s reverse, mean %s GB/s per direction\n",
      fmt(ceil["forward"]), fmt(ceil["reverse"]), fmt(both)
    printf "busbw in GB/s, from the median time over rounds; %s\n", ringlab_label
    nr = split(ranks_list, rl, " ")
    for (r = 1; r <= nr; r++) {
      n = rl[r]
      printf "\n== %d ranks: all_reduce float32 sum\n", n
      printf "%10s %9s %9s %9s %-25s %9s %8s %8s %8s\n", "size(B)", "ringlab", "gloo", "gloo", "(gloo best algorithm)",
        "mpi", "rl/gloo", "rl/mpi", "rl/ceil"
      printf "%10s %9s %9s %9s %-25s %9s %8s %8s %8s\n", "", "busbw", "default", "best", "", "busbw", "best", "", ""
      worst = ""; worst_size = ""
      for (i = 1; i <= nsizes; i++) {
        s = sizes[i]
        rb = ((n, s) in rl_bw) ? rl_bw[n, s] : ""
        gb = ((n, s) in gb_bw) ? gb_bw[n, s] : ""
        gd = ((n, s) in gd_bw) ? gd_bw[n, s] : ""
        mb = ((n, s) in mpi_bw) ? mpi_bw[n, s] : ""
        ga = ((n, s) in gb_alg) ? gb_alg[n, s] : "-"
        printf "%10d %9s %9s %9s %-25s %9s %8s %8s %8s\n", s, fmt(rb), fmt(gd), fmt(gb), "(" ga ")", fmt(mb),
          ratio(rb, gb), ratio(rb, mb), ratio(rb, both)
        if (s >= 65536 && s <= 67108864 && rb != "" && gb != "" && (worst == "" || rb / gb < worst)) {
          worst = rb / gb; worst_size = s }
      }
      l = 4096
      rlu = ((n, l) in rl_us) ? rl_us[n, l] : ""
      mu = ((n, l) in mpi_us) ? mpi_us[n, l] : ""
      gu = ((n, l) in gb_us) ? gb_us[n, l] : ""
      gdu = ((n, l) in gd_us) ? gd_us[n, l] : ""
      printf "latency at 4 KiB (us): ringlab %s, mpi %s, gloo default %s, gloo best %s (%s); ringlab/mpi %s (target <= 2)\n",
        (rlu == "" ? "-" : sprintf("%.1f", rlu)), (mu == "" ? "-" : sprintf("%.1f", mu)),
        (gdu == "" ? "-" : sprintf("%.1f", gdu)), (gu == "" ? "-" : sprintf("%.1f", gu)),
        (((n, l) in gb_alg) ? gb_alg[n, l] : "-"), ratio(rlu, mu)
      printf "lowest ringlab/gloo-best busbw, 64 KiB..64 MiB: %s%s (target >= 1)\n",
        (worst == "" ? "-" : sprintf("%.2f", worst)), (worst == "" ? "" : " at " worst_size " B")
    }
    if (bad != "") printf "\nWRONG RESULTS:\n%s", bad
    if (failures > 0) printf "\n%d run(s) FAILED: see the messages above and raw/*.err\n", failures
  }' "$out/medians.tsv" | tee "$out/summary.txt"

[[ $failures == 0 ]]
