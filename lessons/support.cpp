// Lesson "support" (world size 4): seed 001 opens with PyTorch's table of
// which backend (gloo, mpi, nccl) supports which operation on CPU and GPU.
// This lesson prints that table as the article does and adds a column for
// each of ringlab's backends. A ringlab cell is never written by hand: it is
// the operation run just now, on a world of its own, with the article's
// inputs, and every rank's result compared with its closed form.
//
// ringlab's answer is the same for every operation because every collective
// is written on send and recv (primitives/): a backend that can send and
// receive runs them all. What differs is where the bytes travel.
#include "lessons/support.hpp"

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backends.hpp"
#include "lessons/lesson.hpp"
#include "lessons/runner.hpp"

namespace ringlab::lessons {

namespace {

// Seed 001's table, row by row, as the article prints it ("✘", not "✗").
// The article's rows start at "Device | CPU | GPU | ..."; the row above it in
// PyTorch's documentation, which names the backends, is not in its text: the
// columns are PyTorch's gloo, mpi, nccl, in that order.
constexpr ArticleSupportRow kArticleRows[] = {
    {"send", {"✓", "✘", "✓", "?", "✘", "✘"}},
    {"recv", {"✓", "✘", "✓", "?", "✘", "✘"}},
    {"broadcast", {"✓", "✓", "✓", "?", "✘", "✓"}},
    {"all_reduce", {"✓", "✓", "✓", "?", "✘", "✓"}},
    {"reduce", {"✓", "✘", "✓", "?", "✘", "✓"}},
    {"all_gather", {"✓", "✘", "✓", "?", "✘", "✓"}},
    {"gather", {"✓", "✘", "✓", "?", "✘", "✘"}},
    {"scatter", {"✓", "✘", "✓", "?", "✘", "✘"}},
    {"reduce_scatter", {"✘", "✘", "✘", "✘", "✘", "✓"}},
    {"all_to_all", {"✘", "✘", "✓", "?", "✘", "✓"}},
    {"barrier", {"✓", "✘", "✓", "?", "✘", "✓"}},
};

constexpr std::string_view kRan = "✓";
constexpr std::string_view kFailed = "✘";
constexpr std::string_view kNotRun = "not run here";

// ---- The probes: one per row, run on every rank of a world of P ranks. ----
// Inputs are the article's (rank r holds [1+2r, 2+2r], int64); each rank
// throws unless it ends with the closed form.

std::int64_t p_of(const ProcessGroup& pg) { return pg.size(); }

Tensor pair(std::int64_t a, std::int64_t b) { return Tensor::of({a, b}); }

// The article's input on rank r, written out: [1 + 2r, 2 + 2r].
Tensor input_of(std::int64_t r) { return pair(1 + 2 * r, 2 + 2 * r); }

// The sum of every rank's input: sum(1 + 2r) = P^2, sum(2 + 2r) = P^2 + P.
Tensor sum_of_inputs(std::int64_t p) { return pair(p * p, p * p + p); }

void expect(const ProcessGroup& pg, std::string_view what, const Tensor& got,
            const Tensor& expected) {
  if (got.same_values(expected)) return;
  throw std::runtime_error("rank " + std::to_string(pg.rank()) + ": " + std::string(what) +
                           " holds " + got.to_string() + ", not the closed form " +
                           expected.to_string());
}

void probe_send(ProcessGroup& pg) {  // rank 0 sends its input to rank 1
  if (pg.rank() == 0) pg.send(input_of(0), 1);
  if (pg.rank() == 1) {
    Tensor received = Tensor::zeros(2, DType::Int64);
    pg.recv(received, 0);
    expect(pg, "the tensor rank 0 sent", received, input_of(0));
  }
}

void probe_recv(ProcessGroup& pg) {  // rank 0 receives rank 1's input
  if (pg.rank() == 1) pg.send(input_of(1), 0);
  if (pg.rank() == 0) {
    Tensor received = Tensor::zeros(2, DType::Int64);
    pg.recv(received, 1);
    expect(pg, "the tensor received from rank 1", received, input_of(1));
  }
}

void probe_broadcast(ProcessGroup& pg) {  // src 0: everyone ends with [1, 2]
  Tensor tensor = input_of(pg.rank());
  pg.broadcast(tensor, 0);
  expect(pg, "the broadcast tensor", tensor, input_of(0));
}

void probe_all_reduce(ProcessGroup& pg) {  // everyone ends with [P^2, P^2 + P]
  Tensor tensor = input_of(pg.rank());
  pg.all_reduce(tensor, ReduceOp::SUM);
  expect(pg, "the all_reduce sum", tensor, sum_of_inputs(p_of(pg)));
}

void probe_reduce(ProcessGroup& pg) {  // dst P-1 (the article's 3) ends with the sum
  const int dst = pg.size() - 1;
  Tensor tensor = input_of(pg.rank());
  pg.reduce(tensor, dst, ReduceOp::SUM);
  if (pg.rank() == dst) expect(pg, "the reduce sum at dst", tensor, sum_of_inputs(p_of(pg)));
}

void probe_all_gather(ProcessGroup& pg) {  // entry j of every rank's list: rank j's input
  std::vector<Tensor> gathered(static_cast<std::size_t>(pg.size()), Tensor::zeros(2, DType::Int64));
  pg.all_gather(gathered, input_of(pg.rank()));
  for (int j = 0; j < pg.size(); ++j)
    expect(pg, "all_gather entry " + std::to_string(j), gathered[static_cast<std::size_t>(j)],
           input_of(j));
}

void probe_gather(ProcessGroup& pg) {  // dst 0: entry j of its list is rank j's input
  if (pg.rank() != 0) {
    pg.gather(input_of(pg.rank()), 0);
    return;
  }
  std::vector<Tensor> gathered(static_cast<std::size_t>(pg.size()), Tensor::zeros(2, DType::Int64));
  pg.gather(input_of(0), gathered, 0);
  for (int j = 0; j < pg.size(); ++j)
    expect(pg, "gather entry " + std::to_string(j), gathered[static_cast<std::size_t>(j)],
           input_of(j));
}

void probe_scatter(ProcessGroup& pg) {  // src 0's list is [r, r] for rank r (the article's)
  Tensor tensor = input_of(pg.rank());
  std::vector<Tensor> scatter_list;
  if (pg.rank() == 0)
    for (int r = 0; r < pg.size(); ++r) scatter_list.push_back(pair(r, r));
  pg.scatter(tensor, scatter_list, 0);
  expect(pg, "the scattered tensor", tensor, pair(pg.rank(), pg.rank()));
}

void probe_reduce_scatter(ProcessGroup& pg) {
  // Entry j of rank r's list is its input times (j + 1); rank j ends with the
  // sum over ranks of entry j: (j + 1) [P^2, P^2 + P].
  const std::int64_t r = pg.rank(), p = p_of(pg);
  std::vector<Tensor> input_list;
  for (std::int64_t j = 0; j < p; ++j)
    input_list.push_back(pair((1 + 2 * r) * (j + 1), (2 + 2 * r) * (j + 1)));
  Tensor output = Tensor::zeros(2, DType::Int64);
  pg.reduce_scatter(output, input_list, ReduceOp::SUM);
  expect(pg, "its reduce_scatter part", output, pair((r + 1) * p * p, (r + 1) * (p * p + p)));
}

void probe_all_to_all(ProcessGroup& pg) {
  // Entry j of rank r's input list is [10 r + j]; entry j of its output list
  // is what rank j sent it: [10 j + r].
  const std::int64_t r = pg.rank();
  std::vector<Tensor> input_list, output_list;
  for (std::int64_t j = 0; j < pg.size(); ++j) {
    input_list.push_back(Tensor::of({10 * r + j}));
    output_list.push_back(Tensor::zeros(1, DType::Int64));
  }
  pg.all_to_all(output_list, input_list);
  for (std::int64_t j = 0; j < pg.size(); ++j)
    expect(pg, "all_to_all entry " + std::to_string(j), output_list[static_cast<std::size_t>(j)],
           Tensor::of({10 * j + r}));
}

void probe_barrier(ProcessGroup& pg) { pg.barrier(); }  // every rank returns

constexpr void (*kProbes[])(ProcessGroup&) = {
    probe_send,           probe_recv,       probe_broadcast, probe_all_reduce,
    probe_reduce,         probe_all_gather, probe_gather,    probe_scatter,
    probe_reduce_scatter, probe_all_to_all, probe_barrier,
};
static_assert(std::size(kProbes) == std::size(kArticleRows), "one probe per row of the table");

bool in_this_build(std::string_view backend) {
  for (const auto& row : backends::all_backends())
    if (row.name == backend) return true;
  return false;
}

SupportCell run_probe(std::string_view backend, int world, void (*probe)(ProcessGroup&),
                      const ProcessGroupOptions& group, backends::TraceSession* trace) {
  std::atomic<int> ranks_here{0};
  try {
    backends::run_ranks(
        backend, world,
        [&](ProcessGroup& pg) {
          ++ranks_here;
          probe(pg);
        },
        group, trace);
    return {Verdict::Ran, ""};
  } catch (const std::exception& error) {
    // Some ranks of this world ran here and the others elsewhere: this
    // process is one rank of a world of processes, and its failure ends it
    // like any rank's; the process that started the world records the cell.
    if (ranks_here > 0 && ranks_here < world) throw;
    return {Verdict::Failed, error.what()};
  }
}

// Counts what a terminal shows: UTF-8 continuation bytes take no column.
std::size_t columns_of(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string trimmed(std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

std::string padded(std::string_view text, std::size_t width) {
  std::string out(text);
  out.append(width - std::min(width, columns_of(text)), ' ');
  return out;
}

std::string_view cell_text(const SupportCell& cell) {
  switch (cell.verdict) {
    case Verdict::Ran:
      return kRan;
    case Verdict::Failed:
      return kFailed;
    case Verdict::NotRun:
      return kNotRun;
  }
  return "?";
}

}  // namespace

std::span<const ArticleSupportRow> article_support_rows() { return kArticleRows; }

SupportColumn check_support(std::string_view backend, int world, const ProcessGroupOptions& group,
                            backends::TraceSession* trace) {
  SupportColumn column{std::string(backend), backend == "nccl" ? "GPU" : "CPU", {}};
  std::string why_not;
  if (!in_this_build(backend))
    why_not = "not in this build (CUDA and NCCL were not found when ringlab was configured)";
  else
    why_not = backends::cannot_run(backend, world);
  for (auto probe : kProbes)
    column.cells.push_back(why_not.empty() ? run_probe(backend, world, probe, group, trace)
                                           : SupportCell{Verdict::NotRun, why_not});
  return column;
}

std::string format_support(std::span<const SupportColumn> columns, int world) {
  const std::size_t first = columns_of("reduce_scatter");
  const std::size_t sub = 3;                   // "CPU", "GPU", "✓"
  const std::size_t pair_width = 2 * sub + 3;  // "CPU | GPU"
  std::vector<std::size_t> widths;
  for (const SupportColumn& column : columns) {
    std::size_t width = columns_of("ringlab " + column.backend);
    for (const SupportCell& cell : column.cells)
      width = std::max(width, columns_of(cell_text(cell)));
    widths.push_back(width);
  }

  std::string backend_line = padded("Backend", first);
  std::string device_line = padded("Device", first);
  for (std::string_view name : {"gloo", "mpi", "nccl"}) {
    backend_line += " | " + padded(name, pair_width);
    device_line += " | " + padded("CPU", sub) + " | " + padded("GPU", sub);
  }
  for (std::size_t c = 0; c < columns.size(); ++c) {
    backend_line += " | " + padded("ringlab " + columns[c].backend, widths[c]);
    device_line += " | " + padded(columns[c].device, widths[c]);
  }
  std::string text = trimmed(backend_line) + "\n" + trimmed(device_line) + "\n";
  for (std::size_t row = 0; row < std::size(kArticleRows); ++row) {
    std::string line = padded(kArticleRows[row].operation, first);
    for (std::string_view cell : kArticleRows[row].cells) line += " | " + padded(cell, sub);
    for (std::size_t c = 0; c < columns.size(); ++c)
      line += " | " + padded(cell_text(columns[c].cells[row]), widths[c]);
    text += trimmed(line) + "\n";
  }

  const std::string p = std::to_string(world), dst = std::to_string(world - 1);
  const std::size_t key = kNotRun.size();
  text += "\n";
  text += "gloo, mpi, nccl: seed 001's table of PyTorch's backends, cells as the article\n";
  text += "prints them (?: in PyTorch's documentation, MPI on GPU only where the MPI\n";
  text += "library was built with CUDA support).\n";
  text += "ringlab columns: each cell is that ProcessGroup call run just now, on a world\n";
  text += "of " + p + " ranks of its own, with the article's inputs, and every rank's result\n";
  text += "checked against the closed form (all_reduce: [P^2, P^2 + P]; reduce: that sum\n";
  text +=
      "at dst " + dst + "; all_to_all: entry j of rank r is [10 j + r]; barrier: all return).\n";
  text += "  " + padded(kRan, key) + "  it ran, and every rank held the closed form\n";
  text += "  " + padded(kFailed, key) + "  it failed, or a rank held something else (why: below)\n";
  text += "  " + padded(kNotRun, key) + "  this machine or build cannot run it (why: below)\n";
  text += "ringlab writes every collective on send and recv, so a backend that sends and\n";
  text += "receives runs them all. inproc and tcp move host (CPU) tensors; nccl_rules does\n";
  text += "too, under NCCL's rules for messages; ringlab's nccl keeps tensors on the host\n";
  text += "and carries every message through GPU memory.\n";

  for (const SupportColumn& column : columns) {
    std::string not_run;  // said once per column: every cell has the same reason
    for (std::size_t row = 0; row < column.cells.size(); ++row) {
      const SupportCell& cell = column.cells[row];
      if (cell.verdict == Verdict::Failed)
        text += "ringlab " + column.backend + ", " + std::string(kArticleRows[row].operation) +
                ": " + std::string(kFailed) + " " + cell.detail + "\n";
      if (cell.verdict == Verdict::NotRun && not_run != cell.detail) {
        not_run = cell.detail;
        text +=
            "ringlab " + column.backend + ": " + std::string(kNotRun) + ": " + cell.detail + "\n";
      }
    }
  }
  return text;
}

std::string support_world_problem(int world) {
  if (world < 2) return "send and recv need two ranks: use -n 2 or more";
  if (world > 16)
    return "it starts a world per operation and backend (" + std::to_string(world) +
           " processes each over tcp): use -n 16 or fewer";
  return "";
}

void support(const RunOptions& options) {
  const int world = world_size_of(find_lesson("support"), options);
  const SupportColumn tcp = check_support("tcp", world, options.group, options.trace);
  const SupportColumn inproc = check_support("inproc", world, options.group);
  const SupportColumn nccl_rules = check_support("nccl_rules", world, options.group);
  const SupportColumn nccl = check_support("nccl", world, options.group);
  const std::vector<SupportColumn> columns{inproc, tcp, nccl_rules, nccl};
  print(
      "Which backend supports which operation: seed 001's table, then ringlab's backends, each "
      "cell run here on " +
      std::to_string(world) + " ranks\n");
  const std::string table = format_support(columns, world);
  std::fwrite(table.data(), 1, table.size(), stdout);
  std::fflush(stdout);
  // A ringlab operation that fails is a fault, not a finding: the table
  // says which, and the exit status says so too.
  int failed = 0;
  for (const SupportColumn& column : columns)
    for (const SupportCell& cell : column.cells) failed += cell.verdict == Verdict::Failed;
  if (failed > 0)
    throw std::runtime_error("lesson support: " + std::to_string(failed) + " ringlab cell" +
                             (failed == 1 ? "" : "s") + " failed (" + std::string(kFailed) +
                             " in the table; why: below it)");
}

}  // namespace ringlab::lessons
