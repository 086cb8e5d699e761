// main() of the GPU test programs: without a GPU there is nothing to test, so
// the program says why and exits 77, which ctest reports as skipped
// (SKIP_RETURN_CODE 77 in tests/nccl.cmake), not failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "transport/nccl/cuda_check.hpp"

int main(int argc, char** argv) {
  std::string why;
  const int gpus = ringlab::nccl::visible_gpu_count(&why);
  if (gpus <= 0) {
    std::fprintf(stderr,
                 "SKIPPED: this test needs a GPU, and CUDA shows none here (%s). Run it on a GPU "
                 "machine: see docs/gpu.md.\n",
                 why.c_str());
    return 77;
  }
  std::fprintf(stderr, "running on %d visible GPU%s\n", gpus, gpus == 1 ? "" : "s");
  doctest::Context context(argc, argv);
  return context.run();
}
