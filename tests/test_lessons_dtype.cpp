// `ringlab lesson NAME --dtype D` against seed 001's programs run in real
// PyTorch with their tensors in dtype D (tests/golden/make_lesson_dtype_golden.py
// wrote what they printed), canonicalized as the article tests are: the ranks'
// lines may come in any order.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "lessons/canonical.hpp"
#include "run_program.hpp"

namespace {

using ringlab::testing::ProgramRun;
using ringlab::testing::run_ringlab;

std::string read(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path golden_dir() { return std::filesystem::path(RINGLAB_GOLDEN_DIR) / "lessons_dtype"; }

void check_lesson(const std::string& lesson, const std::string& dtype, const std::string& backend) {
  const std::string golden = read(golden_dir() / (lesson + "." + dtype + ".txt"));
  REQUIRE_MESSAGE(!golden.empty(), "no golden for " << lesson << " " << dtype);
  const ProgramRun run = run_ringlab("lesson " + lesson + " --dtype " + dtype + " --backend " + backend);
  INFO("ringlab lesson " << lesson << " --dtype " << dtype << " --backend " << backend
                         << " printed:\n" << run.output);
  CHECK(run.status == 0);
  CHECK(ringlab::lessons::canonicalize(run.output) == ringlab::lessons::canonicalize(golden));
}

}  // namespace

TEST_CASE("every seed 001 lesson in every dtype prints what the PyTorch program prints (threads)") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(golden_dir())) {
    const std::string name = entry.path().stem().string();  // "all_reduce.float16"
    const auto dot = name.find('.');
    CAPTURE(name);
    check_lesson(name.substr(0, dot), name.substr(dot + 1), "inproc");
    ++files;
  }
  CHECK(files == 8 * 9);  // 8 programs, every dtype but bool
}

TEST_CASE("the issue's example and the narrow dtypes as processes over TCP") {
  const ProgramRun run = run_ringlab("lesson all_reduce --dtype float16 --backend tcp");
  CHECK(run.output.find("after reudce  Rank  0  has data  tensor([16., 20.], dtype=torch.float16)") !=
        std::string::npos);
  check_lesson("all_reduce", "float16", "tcp");
  check_lesson("reduce", "bfloat16", "tcp");
  check_lesson("scatter", "uint8", "tcp");
  check_lesson("pingpong", "int8", "tcp");
}

TEST_CASE("--dtype is refused where the program cannot take it, saying why") {
  const ProgramRun bool_run = run_ringlab("lesson all_reduce --dtype bool --backend inproc");
  CHECK(bool_run.status != 0);
  CHECK(bool_run.output.find("\"arange_cpu\" not implemented for 'Bool'") != std::string::npos);
  const ProgramRun training = run_ringlab("lesson ddp_basic --dtype float16 --backend inproc");
  CHECK(training.status != 0);
  CHECK(training.output.find("lesson ddp_basic keeps its article's dtypes; --dtype is for seed "
                             "001's programs (pingpong,") != std::string::npos);
  const ProgramRun unknown = run_ringlab("lesson all_reduce --dtype complex64 --backend inproc");
  CHECK(unknown.status != 0);
  CHECK(unknown.output.find("unknown dtype 'complex64'; valid dtypes: bool, uint8") !=
        std::string::npos);
}
