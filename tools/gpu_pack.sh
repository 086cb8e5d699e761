#!/usr/bin/env bash
# Packs what tools/gpu_check.sh runs on a GPU machine into .gpu/ at the top of
# the tree (ignored by git), from a build made here with the NCCL backend:
#
#   .gpu/build/tools/ringlab          the command, debug info stripped
#   .gpu/build/tests/test_nccl_*      the GPU tests and test_transport_nccl
#   .gpu/lib/                         the shared libraries they load (ldd),
#                                     but glibc's (the machine's own), the
#                                     CUDA driver's and libnccl (the GPU
#                                     machine uses PyTorch's)
#   .gpu/lib-cxx/                     libstdc++ and libgcc_s, apart: they need
#                                     this machine's glibc (2.36), so
#                                     gpu_check.sh uses them only where the
#                                     GPU machine's own C++ library is too old
#
# The tests find ringlab and each other relative to themselves
# (tests/beside_this_program.hpp), so the copy runs wherever it lands.
#   tools/gpu_pack.sh [BUILD_DIR]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=.gpu
programs=(tools/ringlab)
for test in test_nccl_errors test_nccl_kernels test_nccl_collectives test_nccl_processes \
            test_nccl_bandwidth test_nccl_lessons test_transport_nccl; do
  programs+=("tests/$test")
done
for program in "${programs[@]}"; do
  if [[ ! -x $build/$program ]]; then
    echo "gpu_pack: $build/$program is missing: build with the NCCL backend first" \
         "(cmake -S . -B $build -DRINGLAB_NCCL=ON && cmake --build $build)" >&2
    exit 1
  fi
done

rm -rf "$out"
mkdir -p "$out/build/tools" "$out/build/tests" "$out/lib" "$out/lib-cxx"
for program in "${programs[@]}"; do
  strip --strip-debug -o "$out/build/$program" "$build/$program"
done

# glibc's libraries, the loader, the driver and NCCL come from the GPU machine.
skip='^(linux-vdso|ld-linux|libc|libm|libpthread|libdl|librt|libresolv|libutil|libcuda|libnvidia|libnccl)\.'
for program in "${programs[@]}"; do
  ldd "$build/$program" | awk '$3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
  [[ $name =~ $skip ]] && continue
  if [[ $name =~ ^(libstdc\+\+|libgcc_s)\. ]]; then
    cp -L "$path" "$out/lib-cxx/$name"
  else
    cp -L "$path" "$out/lib/$name"
  fi
done

echo "gpu_pack: $(du -sh "$out" | cut -f1) in $out/: ${#programs[@]} programs, and libraries:" \
     "$(ls "$out/lib" "$out/lib-cxx" | grep '\.so' | tr '\n' ' ')"
