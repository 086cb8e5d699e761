// The path of another program of the build, found from where this test
// program is (build/tests/X -> build/tools/ringlab) rather than compiled in,
// so that a copy of the build tree runs anywhere: tools/gpu_pack.sh copies
// the NCCL tests and ringlab to a GPU machine this way.
#pragma once

#include <filesystem>
#include <string>

namespace ringlab::testing {

inline std::string beside_this_program(const std::string& relative) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  return (self.parent_path() / relative).lexically_normal().string();
}

}  // namespace ringlab::testing
