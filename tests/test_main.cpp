// doctest's main(), shared by every test program, after one allocator setting.
//
// The sweeps (test_algorithms above all) allocate and free buffers of up to
// 8 MiB per rank thread, case after case. With glibc's defaults each such
// buffer is a fresh mmap, or heap that is trimmed when freed, so every case
// pays page faults and the kernel's zeroing of pages again: test_algorithms
// --test-suite=reduce spent 17 of its 30 s of CPU in the kernel. Keeping freed
// memory in the process (heap, not mmap, below 32 MiB; no trimming) cut that
// from 28 s wall to 15 s, and from 17 s of kernel time to 3.9 s
// (docs/benchmarks.md, "The test command"). What the tests check is unchanged; only where the bytes live.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <malloc.h>

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest value on 64-bit
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  return doctest::Context(argc, argv).run();
}
