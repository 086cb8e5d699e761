// A lesson is one article program: it runs on every rank of a process group
// and prints what the article's Python program prints.
#pragma once

#include <array>
#include <cstdio>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "ops/tensor.hpp"
#include "primitives/process_group.hpp"

namespace ringlab::lessons {

struct LessonArgs {
  int root = -1;               // src/dst for rooted collectives; -1: the article's choice
  std::optional<double> lr;    // learning rate of the training lessons (default: each one's)
  std::optional<int> steps;    // training steps (train) or epochs (horovod)
  std::string checkpoint;      // ddp_checkpoint: where to save and keep it ("": a temporary file);
                               // train_elastic: where to save and resume ("": checkpoint.pt)
  std::string checkpoint_dir;  // horovod: where rank 0 keeps its checkpoints
                               // ("": ringlab-runs/horovod)
  std::optional<int> max_epoch;  // train_elastic: epochs (default 100)
  double epoch_seconds = 0;      // train_elastic: a pause before each epoch (the article's sleep)
  // --dtype: the article's tensors in this dtype instead of its own (int64,
  // float32 for the ping-pong's torch.zeros(1)); lessons whose row says
  // takes_dtype only.
  std::optional<DType> dtype;
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
  // The collective the program calls (none: point to point only, or several)
  // and the algorithm its article implies ("": the process group's default,
  // where the printout does not depend on it). The runner selects it unless
  // the caller named another, and says which one runs (runner.hpp).
  std::optional<Collective> collective = std::nullopt;
  std::string_view algorithm = "";
  // What --root names ("src" or "dst"); "": the lesson has no root rank.
  std::string_view root = "";
  // Why the lesson cannot run on `world` ranks, or "" when it can; nullptr:
  // any world.
  std::string (*world_problem)(int world) = nullptr;
  // Without --world-size the lesson runs on default_world_size ranks, then
  // again on this many (0: not again): ddp_grad_average's 14.0, then 7.0.
  int then_world_size = 0;
  // Set for a lesson that starts worlds of its own, on several backends,
  // instead of running `run` on every rank of one (run is then nullptr).
  void (*run_itself)(const RunOptions& options) = nullptr;
  // Why `ringlab tour` shows this lesson's header but does not run it ("":
  // it runs).
  std::string_view not_in_tour = "";
  // The paced tour's two lines on what to look at in the output, and the
  // command to try next (`ringlab lesson` says it after the lesson, on stderr).
  std::array<std::string_view, 2> look = {};
  std::string_view try_next = "";
  // Whether --dtype applies: seed 001's programs, whose tensors are made by
  // torch.arange(2, dtype=torch.int64), torch.zeros(...) and torch.tensor([..]).
  bool takes_dtype = false;
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

// The dtype of the article's tensors: its own, or --dtype's.
inline DType dtype_of(const LessonArgs& args, DType article = DType::Int64) {
  return args.dtype.value_or(article);
}

// The article's input on rank r: torch.arange(2, dtype=torch.int64) + 1 + 2 * r
// (with --dtype D, dtype=D; the two adds as Python evaluates them).
inline Tensor article_input(int rank, DType dtype = DType::Int64) {
  if (dtype == DType::Int64) return Tensor::arange(2, DType::Int64) + (1 + 2 * rank);
  return Tensor::arange(2, dtype) + 1 + 2 * rank;
}

}  // namespace ringlab::lessons
