// `ringlab lesson support`: seed 001's backend support table next to
// ringlab's own backends.
//  - The article's six columns against the seed's text, transcribed below
//    line for line (../shared/seeds/001_*.txt, the table before the ping-pong
//    program).
//  - Each ringlab cell against this test's own run of that operation on that
//    backend (inproc: ranks as threads; tcp: ranks as threads that talk only
//    over TCP; nccl_rules: threads under NCCL's rules), checked against the
//    article's printed values at world 4.
//  - The nccl column against what CUDA says here.
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "backends/backends.hpp"
#include "lessons/support.hpp"
#include "run_program.hpp"
#include "test_tcp_util.hpp"
#ifdef RINGLAB_TEST_NCCL
#include "transport/nccl/cuda_check.hpp"
#endif

namespace {

using ringlab::ProcessGroup;
using ringlab::Tensor;
using ringlab::testing::ProgramRun;
using ringlab::testing::run_ringlab;
using Cells = std::vector<std::string>;

// Seed 001's table exactly as its text has it (the row naming the backends,
// gloo, mpi, nccl, is not in the text).
const char* const kSeedTable =
    "Device | CPU | GPU | CPU | GPU | CPU | GPU |\n"
    "send | ✓ | ✘ | ✓ | ? | ✘ | ✘ |\n"
    "recv | ✓ | ✘ | ✓ | ? | ✘ | ✘ |\n"
    "broadcast | ✓ | ✓ | ✓ | ? | ✘ | ✓ |\n"
    "all_reduce | ✓ | ✓ | ✓ | ? | ✘ | ✓ |\n"
    "reduce | ✓ | ✘ | ✓ | ? | ✘ | ✓ |\n"
    "all_gather | ✓ | ✘ | ✓ | ? | ✘ | ✓ |\n"
    "gather | ✓ | ✘ | ✓ | ? | ✘ | ✘ |\n"
    "scatter | ✓ | ✘ | ✓ | ? | ✘ | ✘ |\n"
    "reduce_scatter | ✘ | ✘ | ✘ | ✘ | ✘ | ✓ |\n"
    "all_to_all | ✘ | ✘ | ✓ | ? | ✘ | ✓ |\n"
    "barrier | ✓ | ✘ | ✓ | ? | ✘ | ✓ |\n";

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

// "a | b | c |" -> {"a", "b", "c"}.
Cells cells_of(const std::string& line) {
  Cells cells;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, '|');) cells.push_back(trim(cell));
  if (!cells.empty() && cells.back().empty()) cells.pop_back();
  return cells;
}

// Every table line of `text` (a line with " | "), by its first cell.
std::map<std::string, Cells> table_of(const std::string& text, std::vector<std::string>* order) {
  std::map<std::string, Cells> rows;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(" | ") == std::string::npos) continue;
    Cells cells = cells_of(line);
    if (order) order->push_back(cells.front());
    rows[cells.front()] = Cells(cells.begin() + 1, cells.end());
  }
  return rows;
}

// One run of the lesson for all the tests here (it starts 44 tcp processes).
const ProgramRun& lesson_run() {
  static const ProgramRun run = run_ringlab("lesson support --timeout-ms 20000");
  return run;
}

// ---- This test's own run of each operation, with the article's values at
// world 4 (rank r holds [1 + 2r, 2 + 2r]; seed 001's printouts). ----
constexpr int kWorld = 4;

Tensor input(int r) { return Tensor::of({1 + 2 * r, 2 + 2 * r}); }

void must_hold(const Tensor& got, const Tensor& expected) {
  if (!got.same_values(expected))
    throw std::runtime_error(got.to_string() + " instead of " + expected.to_string());
}

void run_send(ProcessGroup& pg) {
  if (pg.rank() == 0) pg.send(input(0), 1);
  if (pg.rank() == 1) {
    Tensor t = Tensor::zeros(2, ringlab::DType::Int64);
    pg.recv(t, 0);
    must_hold(t, Tensor::of({1, 2}));
  }
}
void run_recv(ProcessGroup& pg) {
  if (pg.rank() == 1) pg.send(input(1), 0);
  if (pg.rank() == 0) {
    Tensor t = Tensor::zeros(2, ringlab::DType::Int64);
    pg.recv(t, 1);
    must_hold(t, Tensor::of({3, 4}));
  }
}
void run_broadcast(ProcessGroup& pg) {
  Tensor t = input(pg.rank());
  pg.broadcast(t, 0);
  must_hold(t, Tensor::of({1, 2}));
}
void run_all_reduce(ProcessGroup& pg) {
  Tensor t = input(pg.rank());
  pg.all_reduce(t);
  must_hold(t, Tensor::of({16, 20}));
}
void run_reduce(ProcessGroup& pg) {
  Tensor t = input(pg.rank());
  pg.reduce(t, 3);
  if (pg.rank() == 3) must_hold(t, Tensor::of({16, 20}));
}
const char* const kGathered = "[tensor([1, 2]), tensor([3, 4]), tensor([5, 6]), tensor([7, 8])]";
void run_all_gather(ProcessGroup& pg) {
  std::vector<Tensor> list(kWorld, Tensor::zeros(2, ringlab::DType::Int64));
  pg.all_gather(list, input(pg.rank()));
  if (ringlab::to_string(list) != kGathered) throw std::runtime_error(ringlab::to_string(list));
}
void run_gather(ProcessGroup& pg) {
  if (pg.rank() != 0) return pg.gather(input(pg.rank()), 0);
  std::vector<Tensor> list(kWorld, Tensor::zeros(2, ringlab::DType::Int64));
  pg.gather(input(0), list, 0);
  if (ringlab::to_string(list) != kGathered) throw std::runtime_error(ringlab::to_string(list));
}
void run_scatter(ProcessGroup& pg) {
  Tensor t = input(pg.rank());
  std::vector<Tensor> list;
  if (pg.rank() == 0)
    list = {Tensor::of({0, 0}), Tensor::of({1, 1}), Tensor::of({2, 2}), Tensor::of({3, 3})};
  pg.scatter(t, list, 0);
  must_hold(t, Tensor::of({pg.rank(), pg.rank()}));
}
void run_reduce_scatter(ProcessGroup& pg) {
  // Entry j of rank r's list is input(r) * (j + 1): rank j gets (j + 1) [16, 20].
  std::vector<Tensor> list;
  for (int j = 0; j < kWorld; ++j) list.push_back(input(pg.rank()) * (j + 1));
  Tensor out = Tensor::zeros(2, ringlab::DType::Int64);
  pg.reduce_scatter(out, list);
  const int k = pg.rank() + 1;
  must_hold(out, Tensor::of({16 * k, 20 * k}));
}
void run_all_to_all(ProcessGroup& pg) {
  // Entry j of rank r's list is [10 r + j]; rank r receives [10 j + r] from j.
  std::vector<Tensor> in, out;
  for (int j = 0; j < kWorld; ++j) {
    in.push_back(Tensor::of({10 * pg.rank() + j}));
    out.push_back(Tensor::zeros(1, ringlab::DType::Int64));
  }
  pg.all_to_all(out, in);
  for (int j = 0; j < kWorld; ++j) must_hold(out[j], Tensor::of({10 * j + pg.rank()}));
}
void run_barrier(ProcessGroup& pg) { pg.barrier(); }

const std::vector<std::pair<std::string, void (*)(ProcessGroup&)>> kOperations = {
    {"send", run_send},
    {"recv", run_recv},
    {"broadcast", run_broadcast},
    {"all_reduce", run_all_reduce},
    {"reduce", run_reduce},
    {"all_gather", run_all_gather},
    {"gather", run_gather},
    {"scatter", run_scatter},
    {"reduce_scatter", run_reduce_scatter},
    {"all_to_all", run_all_to_all},
    {"barrier", run_barrier},
};

// "✓" when this test's own run of the operation gave the article's values.
std::string own_cell(const std::string& backend, void (*operation)(ProcessGroup&)) {
  std::string error;
  if (backend == "tcp") {
    error = ringlab::tcp::testing::first_error(
        ringlab::tcp::testing::run_tcp_groups(kWorld, operation));
  } else {
    try {
      ringlab::backends::run_ranks(backend, kWorld, operation, {});
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  INFO(backend << ": " << error);
  return error.empty() ? "✓" : "✘";
}

// Where the column of ringlab backend `name` sits in the lesson's rows.
std::size_t column_of(const std::map<std::string, Cells>& table, const std::string& name) {
  const Cells& header = table.at("Backend");
  for (std::size_t c = 0; c < header.size(); ++c)
    if (header[c] == "ringlab " + name) return c + 3;  // each article backend spans two cells
  FAIL("no column 'ringlab " << name << "'");
  return 0;
}

}  // namespace

TEST_CASE("support: the article's columns are seed 001's table, cell for cell") {
  const ProgramRun& run = lesson_run();
  INFO(run.output);
  REQUIRE(run.status == 0);
  std::vector<std::string> seed_order, lesson_order;
  const auto seed = table_of(kSeedTable, &seed_order);
  const auto lesson = table_of(run.output, &lesson_order);
  // The lesson's rows: "Backend", then the seed's rows in the seed's order.
  REQUIRE(lesson_order.size() == seed_order.size() + 1);
  CHECK(lesson_order.front() == "Backend");
  CHECK(std::vector<std::string>(lesson_order.begin() + 1, lesson_order.end()) == seed_order);
  for (const auto& [label, cells] : seed) {
    CAPTURE(label);
    REQUIRE(lesson.count(label) == 1);
    REQUIRE(lesson.at(label).size() >= cells.size());
    CHECK(Cells(lesson.at(label).begin(), lesson.at(label).begin() + 6) == cells);
  }
  CHECK(cells_of(lesson_run().output.substr(lesson_run().output.find("Backend"))).at(1) == "gloo");
  // The library's copy, which the lesson prints, is the same.
  for (const auto& row : ringlab::lessons::article_support_rows())
    CHECK(Cells(row.cells.begin(), row.cells.end()) == seed.at(std::string(row.operation)));
}

TEST_CASE("support: each inproc, tcp and nccl_rules cell is what running that operation here gives") {
  const ProgramRun& run = lesson_run();
  INFO(run.output);
  CHECK(run.status == 0);  // it fails when a ringlab cell does
  const auto lesson = table_of(run.output, nullptr);
  for (const std::string backend : {"inproc", "tcp", "nccl_rules"}) {
    const std::size_t column = column_of(lesson, backend);
    CHECK(lesson.at("Device").at(column) == "CPU");
    for (const auto& [operation, body] : kOperations) {
      CAPTURE(backend);
      CAPTURE(operation);
      CHECK(lesson.at(operation).at(column) == own_cell(backend, body));
    }
  }
  CHECK(run.output.find("✓             it ran, and every rank held the closed form") !=
        std::string::npos);
}

TEST_CASE("support: the nccl column runs where there is a GPU (ranks share it), else says why not") {
  const ProgramRun& run = lesson_run();
  INFO(run.output);
  CHECK(run.status == 0);
  const auto lesson = table_of(run.output, nullptr);
  const std::size_t column = column_of(lesson, "nccl");
  CHECK(lesson.at("Device").at(column) == "GPU");
#ifdef RINGLAB_TEST_NCCL
  const int gpus = ringlab::nccl::visible_gpu_count();
  const std::string expected = gpus >= 1 ? "✓" : "not run here";
  const std::string why = "CUDA shows none here";
#else
  const std::string expected = "not run here";
  const std::string why = "not in this build";
#endif
  for (const auto& [operation, body] : kOperations) {
    CAPTURE(operation);
    CHECK(lesson.at(operation).at(column) == expected);
  }
  if (expected != "✓") CHECK(run.output.find("ringlab nccl: not run here: ") != std::string::npos);
  if (expected != "✓") CHECK(run.output.find(why) != std::string::npos);
}

TEST_CASE("support: a failed cell shows ✘ and its reason; a column not run says why once") {
  using ringlab::lessons::SupportCell;
  using ringlab::lessons::SupportColumn;
  using ringlab::lessons::Verdict;
  const std::size_t rows = ringlab::lessons::article_support_rows().size();
  SupportColumn ran{"inproc", "CPU", std::vector<SupportCell>(rows, {Verdict::Ran, ""})};
  ran.cells[3] = {Verdict::Failed, "rank 2: the all_reduce sum holds tensor([0, 0])"};
  const SupportColumn not_run{"nccl", "GPU",
                              std::vector<SupportCell>(rows, {Verdict::NotRun, "no GPU here"})};
  const std::vector<SupportColumn> columns{ran, not_run};
  const std::string text = ringlab::lessons::format_support(columns, 4);
  INFO(text);
  const auto table = table_of(text, nullptr);
  CHECK(table.at("all_reduce").at(6) == "✘");
  CHECK(table.at("broadcast").at(6) == "✓");
  CHECK(table.at("barrier").at(7) == "not run here");
  CHECK(text.find(
            "ringlab inproc, all_reduce: ✘ rank 2: the all_reduce sum holds tensor([0, 0])\n") !=
        std::string::npos);
  const std::string reason = "ringlab nccl: not run here: no GPU here\n";
  CHECK(text.find(reason) != std::string::npos);
  CHECK(text.find(reason) == text.rfind(reason));  // once, not once per row
}

TEST_CASE("support: refuses what it cannot use before anything starts") {
  ProgramRun run = run_ringlab("lesson support --backend inproc");
  CHECK(run.status != 0);
  CHECK(run.output.find("lesson support runs on every backend itself") != std::string::npos);
  run = run_ringlab("lesson support -n 1");
  CHECK(run.status != 0);
  CHECK(run.output.find("lesson support cannot run on 1 rank: send and recv need two ranks") !=
        std::string::npos);
  CHECK(run.output.find("Device") == std::string::npos);
}
