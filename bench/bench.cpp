#include "bench/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace ringlab::bench {

std::size_t parse_size(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty size: use a number with K, M or G, e.g. 4K");
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("bad size '" + text + "': use a number with K, M or G, e.g. 4K");
  }
  std::string suffix = text.substr(used);
  double scale = 1;
  if (suffix == "K" || suffix == "k" || suffix == "KiB") scale = 1 << 10;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB") scale = 1 << 20;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB") scale = 1 << 30;
  else if (!suffix.empty() && suffix != "B")
    throw std::invalid_argument("bad size suffix in '" + text + "': use K, M or G");
  if (value < 0) throw std::invalid_argument("size '" + text + "' is negative");
  return static_cast<std::size_t>(value * scale);
}

std::pair<std::size_t, std::size_t> parse_size_range(const std::string& text) {
  auto colon = text.find(':');
  if (colon == std::string::npos) {
    auto size = parse_size(text);
    return {size, size};
  }
  auto range = std::make_pair(parse_size(text.substr(0, colon)), parse_size(text.substr(colon + 1)));
  if (range.first > range.second)
    throw std::invalid_argument("size range '" + text + "' runs backwards: write MIN:MAX");
  return range;
}

double bus_factor(const std::string& op, int ranks) {
  const double n = ranks;
  if (op == "all_reduce") return 2 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all" || op == "gather" ||
      op == "scatter")
    return (n - 1) / n;
  if (op == "broadcast" || op == "reduce" || op == "sendrecv") return 1;
  throw std::invalid_argument("unknown benchmark op '" + op +
                              "': use all_reduce, all_gather, reduce_scatter, all_to_all, "
                              "gather, scatter, broadcast, reduce or sendrecv");
}

namespace {

using Clock = std::chrono::steady_clock;

// One benchmark case: buffers sized for `count` elements per block, an
// operation to time, and a closed-form check of what it produced.
class Case {
 public:
  Case(ProcessGroup& pg, const BenchOptions& o, std::size_t count)
      : pg_(pg), o_(o), count_(count), world_(pg.size()), rank_(pg.rank()) {
    auto make = [&](std::size_t n) { return Tensor(o.dtype, {static_cast<std::int64_t>(n)}); };
    tensor_ = make(count);
    // Only the ops that take lists get them: P more tensors of the same size
    // each would cost memory (and time to fill) for nothing.
    const std::string& op = o.op;
    const bool in_list =
        op == "reduce_scatter" || op == "all_to_all" || op == "scatter" || op == "sendrecv";
    const bool out_list =
        op == "all_gather" || op == "all_to_all" || op == "gather" || op == "sendrecv";
    for (int r = 0; r < world_; ++r) {
      if (in_list) in_list_.push_back(make(count));
      if (out_list) out_list_.push_back(make(count));
    }
  }

  void fill_inputs() {
    // Closed forms: rank r contributes r+1; block d sent by rank r is r*P + d.
    fill(tensor_, rank_ + 1);
    const bool is_scatter_root = o_.op == "scatter";
    for (std::size_t d = 0; d < in_list_.size(); ++d) {
      const double block = static_cast<double>(d);
      fill(in_list_[d], is_scatter_root         ? block + 1
                        : o_.op == "all_to_all" ? rank_ * world_ + block
                                                : rank_ + 1);
    }
    for (Tensor& out : out_list_) fill(out, -1);
  }

  void run_once() {
    const std::string& op = o_.op;
    if (op == "all_reduce") pg_.all_reduce(tensor_, o_.redop);
    else if (op == "broadcast") pg_.broadcast(tensor_, o_.root);
    else if (op == "reduce") pg_.reduce(tensor_, o_.root, o_.redop);
    else if (op == "all_gather") pg_.all_gather(out_list_, tensor_);
    else if (op == "reduce_scatter") pg_.reduce_scatter(tensor_, in_list_, o_.redop);
    else if (op == "all_to_all") pg_.all_to_all(out_list_, in_list_);
    else if (op == "gather") {
      if (rank_ == o_.root) pg_.gather(tensor_, out_list_, o_.root);
      else pg_.gather(tensor_, o_.root);
    } else if (op == "scatter") {
      pg_.scatter(tensor_, rank_ == o_.root ? in_list_ : std::vector<Tensor>{}, o_.root);
    } else if (op == "sendrecv") {
      // Ring exchange: everyone sends to the right and receives from the left.
      if (world_ == 1) return;
      Work w = pg_.isend(in_list_[0], (rank_ + 1) % world_);
      pg_.recv(out_list_[0], (rank_ + world_ - 1) % world_);
      w.wait();
    } else {
      bus_factor(op, world_);  // throws with the list of ops
    }
  }

  std::int64_t count_wrong() const {
    const double p = world_;
    const double sum = p * (p + 1) / 2;
    const std::string& op = o_.op;
    std::int64_t wrong = 0;
    if (op == "all_reduce") wrong += wrong_in(tensor_, reduced(sum));
    else if (op == "broadcast") wrong += wrong_in(tensor_, o_.root + 1);
    else if (op == "reduce" && rank_ == o_.root) wrong += wrong_in(tensor_, reduced(sum));
    else if (op == "reduce_scatter") wrong += wrong_in(tensor_, reduced(sum));
    else if (op == "scatter") wrong += wrong_in(tensor_, rank_ + 1);
    else if (op == "all_gather" || (op == "gather" && rank_ == o_.root))
      for (int r = 0; r < world_; ++r) wrong += wrong_in(out_list_[r], r + 1);
    else if (op == "all_to_all")
      for (int s = 0; s < world_; ++s) wrong += wrong_in(out_list_[s], s * world_ + rank_);
    else if (op == "sendrecv" && world_ > 1)
      wrong += wrong_in(out_list_[0], (rank_ + world_ - 1) % world_ + 1);
    return wrong;
  }

  // The size nccl-tests reports for this op, in bytes.
  std::size_t reported_bytes() const {
    const std::size_t block = count_ * element_size(o_.dtype);
    const std::string& op = o_.op;
    if (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all" || op == "gather" ||
        op == "scatter")
      return block * static_cast<std::size_t>(world_);
    return block;
  }

 private:
  double reduced(double sum) const {
    switch (o_.redop) {
      case ReduceOp::SUM: return sum;
      case ReduceOp::AVG: return sum / world_;
      case ReduceOp::MAX: return world_;
      case ReduceOp::MIN: return 1;
      default: throw std::invalid_argument("the benchmark checks sum, avg, min and max");
    }
  }
  static void fill(Tensor& t, double v) {
    visit_dtype(t.dtype(), [&]<typename T>() { std::ranges::fill(t.data<T>(), static_cast<T>(v)); });
  }
  static std::int64_t wrong_in(const Tensor& t, double expected) {
    std::int64_t wrong = 0;
    visit_dtype(t.dtype(), [&]<typename T>() {
      const T want = static_cast<T>(expected);
      for (T v : t.data<T>()) wrong += v != want;
    });
    return wrong;
  }

  ProcessGroup& pg_;
  const BenchOptions& o_;
  std::size_t count_;
  int world_, rank_;
  Tensor tensor_;
  std::vector<Tensor> in_list_, out_list_;
};

double max_over_ranks(ProcessGroup& pg, double value) {
  Tensor t = Tensor::scalar(value, DType::Float64);
  pg.all_reduce(t, ReduceOp::MAX);
  return t.item_as_double();
}

}  // namespace

std::vector<Row> run(ProcessGroup& pg, const BenchOptions& o, bool print) {
  const bool root_op = o.op == "broadcast" || o.op == "reduce" || o.op == "gather" || o.op == "scatter";
  const bool reduce_op = o.op == "all_reduce" || o.op == "reduce" || o.op == "reduce_scatter";
  const double factor = bus_factor(o.op, pg.size());
  if (!o.algorithm.empty() && o.op != "sendrecv") pg.set_algorithm(parse_collective(o.op), o.algorithm);
  if (print && pg.rank() == 0) {
    std::printf("# ringlab bench: %s, algorithm %s, %d ranks, backend %s\n", o.op.c_str(),
                o.op == "sendrecv" ? "-" : pg.algorithm(parse_collective(o.op)).c_str(), pg.size(),
                std::string(pg.backend()).c_str());
    std::printf("#%11s %12s %8s %6s %5s %10s %8s %8s %6s\n", "size", "count", "type", "redop",
                "root", "time", "algbw", "busbw", "#wrong");
    std::printf("#%11s %12s %8s %6s %5s %10s %8s %8s %6s\n", "(B)", "(elements)", "", "", "",
                "(us)", "(GB/s)", "(GB/s)", "");
    std::fflush(stdout);
  }
  const std::size_t esize = element_size(o.dtype);
  const bool per_rank_blocks = o.op == "all_gather" || o.op == "reduce_scatter" ||
                               o.op == "all_to_all" || o.op == "gather" || o.op == "scatter";
  std::vector<Row> rows;
  for (std::size_t bytes = std::max(o.min_bytes, esize); bytes <= o.max_bytes; bytes *= 2) {
    // As nccl-tests: the size is the whole buffer; list ops split it in blocks.
    std::size_t count = bytes / esize;
    if (per_rank_blocks) count = std::max<std::size_t>(1, count / static_cast<std::size_t>(pg.size()));
    Case c(pg, o, count);
    c.fill_inputs();
    for (int i = 0; i < o.warmup; ++i) c.run_once();
    pg.barrier();
    const auto start = Clock::now();
    for (int i = 0; i < o.iters; ++i) c.run_once();
    const double local_us =
        std::chrono::duration<double, std::micro>(Clock::now() - start).count() / o.iters;
    const double time_us = max_over_ranks(pg, local_us);
    c.fill_inputs();
    c.run_once();
    Tensor wrong = Tensor::scalar(static_cast<double>(c.count_wrong()), DType::Int64);
    pg.all_reduce(wrong);
    Row row{c.reported_bytes(), count, time_us, 0, 0, static_cast<std::int64_t>(wrong.item_as_double())};
    row.algbw_gbs = static_cast<double>(row.bytes) / (time_us * 1e3);
    row.busbw_gbs = row.algbw_gbs * factor;
    rows.push_back(row);
    if (print && pg.rank() == 0) {
      std::printf(" %11zu %12zu %8s %6s %5s %10.1f %8.3f %8.3f %6lld\n", row.bytes, row.count,
                  std::string(dtype_name(o.dtype)).c_str(),
                  reduce_op ? std::string(op_name(o.redop)).c_str() : "none",
                  root_op ? std::to_string(o.root).c_str() : "-1", row.time_us, row.algbw_gbs,
                  row.busbw_gbs, static_cast<long long>(row.wrong));
      std::fflush(stdout);
    }
  }
  return rows;
}

}  // namespace ringlab::bench
