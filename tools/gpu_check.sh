#!/usr/bin/env bash
# docs/gpu.md's checklist on a GPU machine, in under 6 minutes, from what
# tools/gpu_pack.sh packed into .gpu/ (no compiler, Boost, doctest or CLI11
# needed there). NCCL is the GPU machine's: PyTorch's libnccl.so.2 under
# python3's site-packages, else whatever the loader finds.
#
#   bash tools/gpu_check.sh [SECONDS]     (all steps together: at most SECONDS, default 320)
#
# Every step has its own time limit (and none starts past the total), so a
# hang costs one step. Each writes its log to $OUT/<step>.log ($OUT: the
# folder the GPU machine hands back; .gpu/out when unset), and the script ends
# with a table of every step: passed, FAILED (exit status), TIMED OUT,
# skipped (no GPU, or the program said so) or not run (out of time). Without
# a GPU (a dry run) the GPU steps say "skipped: no GPU" at once.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
budget=${1:-320}
out=${OUT:-$root/.gpu/out}
mkdir -p "$out"
bin=$root/.gpu/build
start=$SECONDS

if [[ ! -x $bin/tools/ringlab ]]; then
  echo "gpu_check: $bin/tools/ringlab is missing: run tools/gpu_pack.sh after a CUDA build," \
       "and carry .gpu to this machine" >&2
  exit 2
fi

# PyTorch's NCCL: nvidia/nccl/lib under site-packages (the nvidia-nccl-cu* wheel).
nccl_dir=$(timeout 15 python3 - 2>/dev/null <<'EOF'
import glob, os, site, sys
roots = [*site.getsitepackages(), site.getusersitepackages()]
for pattern in ("nvidia/nccl/lib/libnccl.so.2", "torch/lib/libnccl.so.2", "**/libnccl.so.2"):
    for root in roots:
        for path in glob.glob(os.path.join(root, pattern), recursive=True):
            print(os.path.dirname(os.path.realpath(path)))
            sys.exit(0)
EOF
)
export LD_LIBRARY_PATH=$root/.gpu/lib${nccl_dir:+:$nccl_dir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The packed libstdc++ needs glibc 2.36: only where this machine's C++
# library cannot run ringlab.
cxx="this machine's"
if ! "$root/.gpu/build/tools/ringlab" --help > /dev/null 2>&1; then
  export LD_LIBRARY_PATH=$root/.gpu/lib-cxx:$LD_LIBRARY_PATH
  cxx="the packed one (.gpu/lib-cxx)"
fi
unset NCCL_DEBUG  # each step that wants it sets it

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
names=() results=() seconds=()

# step NAME LIMIT gpu|any COMMAND: runs COMMAND (a bash line, in the tree) with
# at most LIMIT seconds, or less if the total is nearly spent.
step() {
  local name=$1 limit=$2 needs=$3 command=$4
  local log="$out/$name.log" left=$((budget - (SECONDS - start))) began=$SECONDS result rc
  names+=("$name")
  if [[ $needs == gpu && $gpus -eq 0 ]]; then
    results+=("skipped: no GPU") seconds+=(0)
    echo "skipped: no GPU (nvidia-smi shows none)" > "$log"
    return
  fi
  if ((left < 10)); then
    results+=("not run: out of time") seconds+=(0)
    return
  fi
  ((limit > left)) && limit=$left
  printf '== %s (limit %ds)\n' "$name" "$limit"
  { echo "\$ $command"; echo; } > "$log"
  timeout -k 10 "$limit" bash -c "$command" >> "$log" 2>&1
  rc=$?
  case $rc in
    0) result=passed ;;
    77) result="skipped: $(grep -m1 -o 'SKIPPED: .*' "$log" | cut -c10-70)" ;;
    124|137) result="TIMED OUT after ${limit}s" ;;
    *) result="FAILED (exit $rc)" ;;
  esac
  results+=("$result") seconds+=($((SECONDS - began)))
  printf '   %s in %ds\n' "$result" $((SECONDS - began))
}

r=$bin/tools/ringlab
t=$bin/tests
export nccl_from=${nccl_dir:-the loader path, no libnccl.so.2 under python3 site-packages} cxx
step environment 30 any 'nvidia-smi; echo; echo "NCCL from: $nccl_from"; echo "C++ library: $cxx"; \
  ldd '"$r"' | grep -E "nccl|cudart|stdc|not found"; '"$r"' lesson --help | grep -o "nccl[^,]*"'
step test_nccl_errors 60 any "$t/test_nccl_errors"
step test_nccl_processes_2_3_4 200 gpu "$t/test_nccl_processes"
step test_nccl_collectives 90 gpu "$t/test_nccl_collectives"
step test_nccl_kernels_timed 60 gpu "time $t/test_nccl_kernels"
step test_nccl_lessons_debug_warn 150 gpu "NCCL_DEBUG=WARN $t/test_nccl_lessons"
step run_nproc_2_lesson_all_reduce 60 gpu \
  "NCCL_DEBUG=WARN $r run --nproc-per-node 2 -- $r lesson all_reduce --backend nccl -n 2"
step bench_native 90 gpu "$r bench --backend nccl --native -n 1 --op all_reduce --sizes 4K:256M \
  --warmup 2 --iters 10 && $r bench --backend nccl --native -n 2 --op all_reduce --sizes 4K:64M \
  --warmup 1 --iters 5"
step bench_native_half 90 gpu "for d in float32 float16 bfloat16; do \
  $r bench --backend nccl --native -n 1 --op all_reduce --sizes 1M:256M --dtype \$d \
  --warmup 2 --iters 10 || exit 1; done"
step lesson_support 90 gpu "$r lesson support"
step training_lessons_one_gpu_debug_warn 90 gpu "for l in ddp_grad_average train horovod; do \
  echo \"# lesson \$l\"; NCCL_DEBUG=WARN $r lesson \$l --backend nccl || exit 1; done"
step test_nccl_bandwidth 60 gpu "$t/test_nccl_bandwidth"
step test_transport_nccl 60 gpu "$t/test_transport_nccl"

{
  printf '\n# gpu_check: %d GPU(s), %ds in all (limit %ds); logs in %s\n' "$gpus" \
    $((SECONDS - start)) "$budget" "$out"
  printf '%-34s %6s  %s\n' step seconds result
  for i in "${!names[@]}"; do
    printf '%-34s %6s  %s\n' "${names[$i]}" "${seconds[$i]}" "${results[$i]}"
  done
} | tee "$out/summary.txt"
failed=0
for result in "${results[@]}"; do [[ $result == FAILED* || $result == TIMED* ]] && failed=1; done
exit $failed
