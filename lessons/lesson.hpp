// A lesson is one article program: it runs on every rank of a process group
// and prints what the article's Python program prints.
#pragma once

#include <cstdio>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "primitives/process_group.hpp"
#include "ops/tensor.hpp"

namespace ringlab::lessons {

struct LessonArgs {
  int root = -1;  // src/dst for rooted collectives; -1: the article's choice
};

struct RunOptions;  // runner.hpp

// One row of the lesson table (registry.cpp). What a row says about the
// options it takes is checked before any rank starts (runner.hpp), so an
// option a lesson cannot use is refused rather than silently ignored.
struct Lesson {
  std::string_view name;
  std::string_view teaches;  // one line for `ringlab lesson --list`
  int default_world_size;
  void (*run)(ProcessGroup& pg, const LessonArgs& args);
  // Why the lesson cannot run on `world` ranks, or "" when it can; nullptr:
  // any world.
  std::string (*world_problem)(int world) = nullptr;
  // What --root names ("src" or "dst"); "": the lesson has no root rank.
  std::string_view root = "";
  // Set for a lesson that starts worlds of its own, on several backends,
  // instead of running `run` on every rank of one (run is then nullptr).
  void (*run_itself)(const RunOptions& options) = nullptr;
};

// Why `lesson` cannot run on `world` ranks ("" when it can).
std::string world_problem(const Lesson& lesson, int world);

std::span<const Lesson> all_lessons();
// Throws std::invalid_argument listing the lessons when name is unknown.
const Lesson& find_lesson(std::string_view name);

namespace detail {
inline void append(std::ostringstream& out, const Tensor& t) { out << t.to_string(); }
inline void append(std::ostringstream& out, const std::vector<Tensor>& l) { out << to_string(l); }
inline void append(std::ostringstream& out, std::string_view s) { out << s; }
inline void append(std::ostringstream& out, const char* s) { out << s; }
inline void append(std::ostringstream& out, int v) { out << v; }
}  // namespace detail

// Python's print(a, b, c): the arguments joined by one space, then a newline,
// written with a single write so lines of different ranks never mix.
template <typename... Args>
void print(const Args&... args) {
  std::ostringstream out;
  bool first = true;
  ((out << (first ? "" : " "), detail::append(out, args), first = false), ...);
  out << '\n';
  const std::string line = out.str();
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

// The article's input on rank r: torch.arange(2, dtype=torch.int64) + 1 + 2 * r
inline Tensor article_input(int rank) { return Tensor::arange(2, DType::Int64) + (1 + 2 * rank); }

}  // namespace ringlab::lessons
