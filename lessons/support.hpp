// Lesson "support": seed 001's table of which torch.distributed backend
// supports which operation on CPU and GPU (gloo, mpi, nccl, as the article
// prints it), next to a column per ringlab backend (inproc, tcp, nccl_rules, nccl) whose
// every cell is the operation run just now on that backend.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backends.hpp"
#include "primitives/process_group.hpp"

namespace ringlab::lessons {

// One row of seed 001's table, cells as the article prints them.
struct ArticleSupportRow {
  std::string_view operation;
  // gloo CPU, gloo GPU, mpi CPU, mpi GPU, nccl CPU, nccl GPU: "✓", "✘" or "?".
  std::array<std::string_view, 6> cells;
};
std::span<const ArticleSupportRow> article_support_rows();

enum class Verdict {
  Ran,     // every rank returned and held the closed-form result
  Failed,  // an error, or a result other than the closed form
  NotRun,  // this machine (or this build) cannot run the backend
};

struct SupportCell {
  Verdict verdict = Verdict::NotRun;
  std::string detail;  // the error, or why it was not run
};

// One ringlab backend: a cell per row of article_support_rows().
struct SupportColumn {
  std::string backend;
  std::string device;  // "CPU" or "GPU": where its messages travel
  std::vector<SupportCell> cells;
};

// Runs every operation of the article's table on `backend`, one world of
// `world` ranks per operation, and compares each rank's result with its
// closed form. Cells of a backend this build lacks, or this machine cannot
// run (nccl without a GPU per rank), are NotRun with the reason; nothing is
// started for them. A failure on a rank of a world whose other ranks are
// other processes (tcp) is that rank's failure: it is rethrown, as in any
// lesson, and the process that started the world sees it as the cell's.
// With a trace (tcp only), every world is traced into it.
SupportColumn check_support(std::string_view backend, int world, const ProcessGroupOptions& group,
                            backends::TraceSession* trace = nullptr);

// The table (the article's six columns, then the given ones) and the
// footnotes that say what a ringlab cell means and why any cell is not ✓.
std::string format_support(std::span<const SupportColumn> columns, int world);

}  // namespace ringlab::lessons
