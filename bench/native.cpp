#include "bench/native.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "backends/nccl_join.hpp"
#include "backends/rank_world.hpp"
#include "primitives/algorithms.hpp"
#include "transport/nccl/nccl_group.hpp"
#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/nccl_transport.hpp"
#include "transport/nccl/nccl_world.hpp"

namespace ringlab::bench {

namespace {

using Clock = std::chrono::steady_clock;
using nccl::DeviceTensor;

// The buffers of one op at one size on one rank, on its GPU, for both ways
// of running it. Closed forms as `ringlab bench` (bench.cpp): rank r
// contributes r + 1; scatter's block d is d + 1; all_to_all's block d from
// rank r is r P + d; everything that is written starts at -1.
class NativeCase {
 public:
  NativeCase(nccl::NcclGroup& group, nccl::NcclTransport& transport, const BenchOptions& o,
             const CollectiveInfo* row, std::size_t count)
      : group_(group), transport_(transport), o_(o), row_(row), n_(count),
        P_(group.size()), r_(group.rank()), blocks_(equal_blocks(count, group.size())) {}

  void fill() {
    const bool root = r_ == o_.root;
    const auto P = static_cast<std::size_t>(P_);
    const Collective id = row_ ? row_->id : Collective::Barrier;  // Barrier: sendrecv
    std::vector<double> first, second;
    auto constant = [](std::size_t n, double v) { return std::vector<double>(n, v); };
    auto per_block = [&](auto value_of) {
      std::vector<double> v(P * n_);
      for (std::size_t d = 0; d < P; ++d)
        for (std::size_t i = 0; i < n_; ++i) v[d * n_ + i] = value_of(static_cast<int>(d));
      return v;
    };
    own_ = DeviceTensor();
    switch (id) {
      case Collective::Scatter:
        if (root) first = per_block([](int d) { return d + 1.0; });
        second = constant(n_, -1);
        break;
      case Collective::Gather:
        first = constant(n_, r_ + 1.0);
        if (root) second = constant(P * n_, -1);
        break;
      case Collective::AllGather:
        first = per_block([&](int d) { return d == r_ ? r_ + 1.0 : -1.0; });
        own_ = upload(constant(n_, r_ + 1.0));  // NCCL's input
        break;
      case Collective::ReduceScatter:
        first = constant(P * n_, r_ + 1.0);
        own_ = upload(constant(n_, -1));  // NCCL's output
        break;
      case Collective::AllToAll:
        first = per_block([&](int d) { return static_cast<double>(r_ * P_ + d); });
        second = constant(P * n_, -1);
        break;
      case Collective::Barrier:  // sendrecv
        first = constant(n_, r_ + 1.0);
        second = constant(n_, -1);
        break;
      default:  // broadcast, reduce, all_reduce: one tensor, in place
        first = constant(n_, r_ + 1.0);
        break;
    }
    first_ = upload(first);
    second_ = upload(second);
  }

  void run_nccl() {
    if (!row_) {
      group_.sendrecv(first_, (r_ + 1) % P_, second_, (r_ + P_ - 1) % P_);
      return;
    }
    const int root = o_.root;
    switch (row_->id) {
      case Collective::Broadcast: return group_.broadcast(first_, root);
      case Collective::Reduce: return group_.reduce(first_, root, o_.redop);
      case Collective::AllReduce: return group_.all_reduce(first_, o_.redop);
      case Collective::AllGather: return group_.all_gather(first_, own_);
      case Collective::ReduceScatter: return group_.reduce_scatter(own_, first_, o_.redop);
      case Collective::AllToAll: return group_.all_to_all(second_, first_);
      case Collective::Gather: return group_.gather(first_, r_ == root ? &second_ : nullptr, root);
      case Collective::Scatter: return group_.scatter(second_, r_ == root ? &first_ : nullptr, root);
      case Collective::Barrier: return group_.barrier();
    }
  }

  void run_by_hand(std::uint64_t sequence) {
    Comm comm(transport_, sequence);
    if (!row_) {
      comm.sendrecv((r_ + 1) % P_, elems(first_), (r_ + P_ - 1) % P_, elems(second_));
    } else {
      CollectiveCall call;
      call.first = elems(first_);
      call.second = elems(second_);
      call.blocks = blocks_;
      call.second_blocks = blocks_;
      call.root = o_.root;
      call.op = o_.redop;
      row_->run(comm, o_.algorithm, call);
    }
    transport_.synchronize();
  }

  // This rank's elements that differ from the closed form; `by_hand` says
  // which run filled the buffers (they differ for all_gather and reduce_scatter).
  std::int64_t count_wrong(bool by_hand) const {
    const double p = P_;
    const bool root = r_ == o_.root;
    if (!row_) return wrong(second_.download(), 0, n_, (r_ + P_ - 1) % P_ + 1.0);
    auto per_block = [&](const DeviceTensor& t, auto value_of) {
      const Tensor host = t.download();
      std::int64_t count = 0;
      for (int s = 0; s < P_; ++s) count += wrong(host, blocks_[s].offset, n_, value_of(s));
      return count;
    };
    switch (row_->id) {
      case Collective::AllReduce: return wrong(first_.download(), 0, n_, reduced(p));
      case Collective::Reduce: return root ? wrong(first_.download(), 0, n_, reduced(p)) : 0;
      case Collective::ReduceScatter:
        return by_hand ? wrong(first_.download(), blocks_[r_].offset, n_, reduced(p))
                       : wrong(own_.download(), 0, n_, reduced(p));
      case Collective::Broadcast: return wrong(first_.download(), 0, n_, o_.root + 1.0);
      case Collective::Scatter: return wrong(second_.download(), 0, n_, r_ + 1.0);
      case Collective::Gather:
        return root ? per_block(second_, [](int s) { return s + 1.0; }) : 0;
      case Collective::AllGather: return per_block(first_, [](int s) { return s + 1.0; });
      case Collective::AllToAll:
        return per_block(second_, [&](int s) { return s * p + r_; });
      case Collective::Barrier: return 0;
    }
    return 0;
  }

 private:
  DeviceTensor upload(const std::vector<double>& values) const {
    Tensor host(o_.dtype, {static_cast<std::int64_t>(values.size())});
    for (std::size_t i = 0; i < values.size(); ++i) host.set_from_double(i, values[i]);
    return DeviceTensor::upload(host, group_.device());
  }
  static Elems elems(const DeviceTensor& t) { return {t.data(), t.numel(), t.dtype()}; }
  double reduced(double p) const {
    const double sum = p * (p + 1) / 2;
    switch (o_.redop) {
      case ReduceOp::SUM: return sum;
      case ReduceOp::AVG: return sum / p;
      case ReduceOp::MAX: return p;
      case ReduceOp::MIN: return 1;
      default: throw std::invalid_argument("the benchmark checks sum, avg, min and max");
    }
  }
  static std::int64_t wrong(const Tensor& host, std::size_t offset, std::size_t n,
                            double expected) {
    std::int64_t count = 0;
    visit_dtype(host.dtype(), [&]<typename T>() {
      const T want = wrapped<T>(expected);
      const auto values = host.data<T>();
      for (std::size_t i = offset; i < offset + n; ++i) count += !(values[i] == want);
    });
    return count;
  }

  nccl::NcclGroup& group_;
  nccl::NcclTransport& transport_;
  const BenchOptions& o_;
  const CollectiveInfo* row_;  // nullptr: sendrecv
  std::size_t n_;
  int P_, r_;
  std::vector<Chunk> blocks_;
  DeviceTensor first_, second_, own_;
};

double max_over_ranks(nccl::NcclGroup& group, double value) {
  DeviceTensor t = DeviceTensor::upload(Tensor::scalar(value, DType::Float64), group.device());
  group.all_reduce(t, ReduceOp::MAX);
  return t.download().item_as_double();
}

std::int64_t sum_over_ranks(nccl::NcclGroup& group, std::int64_t value) {
  DeviceTensor t = DeviceTensor::upload(Tensor::scalar(static_cast<double>(value), DType::Int64),
                                        group.device());
  group.all_reduce(t, ReduceOp::SUM);
  return static_cast<std::int64_t>(t.download().item_as_double());
}

void print_header(const BenchOptions& o, const CollectiveInfo* row, int ranks,
                  const std::string& by_hand) {
  int version = 0;  // the library loaded, which may not be the one built against
  ncclGetVersion(&version);
  std::printf("# ringlab bench --native: %s, %d rank%s, one GPU each; NCCL %d.%d.%d\n",
              o.op.c_str(), ranks, ranks == 1 ? "" : "s", version / 10000, version % 10000 / 100,
              version % 100);
  std::printf("#   nccl: NCCL's own %s (NcclGroup)\n", row ? o.op.c_str() : "ncclSend/ncclRecv");
  std::printf("#   %s: ringlab's hand-written %s on GPU memory (NcclTransport: ncclSend/ncclRecv "
              "and CUDA kernels)\n",
              by_hand.c_str(), row ? "algorithm" : "sendrecv");
  std::printf("#%11s %12s %8s %6s %5s %-22s %10s %8s %8s %6s\n", "size", "count", "type", "redop",
              "root", "impl", "time", "algbw", "busbw", "#wrong");
  std::printf("#%11s %12s %8s %6s %5s %-22s %10s %8s %8s %6s\n", "(B)", "(elements)", "", "", "",
              "", "(us)", "(GB/s)", "(GB/s)", "");
  std::printf("%s\n", legend(o.op, row, ranks).c_str());
  std::fflush(stdout);
}

// One row: `impl` run warmup + iters times, then once more on fresh inputs to count #wrong.
Row measure(nccl::NcclGroup& group, NativeCase& c, const BenchOptions& o, bool by_hand,
            std::uint64_t& sequence) {
  auto once = [&] { by_hand ? c.run_by_hand(sequence++) : c.run_nccl(); };
  c.fill();
  for (int i = 0; i < o.warmup; ++i) once();
  group.barrier();
  const auto start = Clock::now();
  for (int i = 0; i < o.iters; ++i) once();
  const double local_us =
      std::chrono::duration<double, std::micro>(Clock::now() - start).count() / o.iters;
  Row row{};
  row.time_us = max_over_ranks(group, local_us);
  c.fill();
  once();
  row.wrong = sum_over_ranks(group, c.count_wrong(by_hand));
  return row;
}

void rank_body(std::shared_ptr<nccl::NcclCommunicator> communicator, const BenchOptions& o,
               std::vector<Row>& rows) {
  nccl::NcclGroup group(communicator);
  nccl::NcclTransport transport(communicator);
  const CollectiveInfo* row = benchmark_op(o.op);
  const int P = group.size();
  const std::string by_hand =
      row ? "ringlab " + std::string(o.algorithm.empty() || o.algorithm == "default"
                                         ? row->default_algorithm
                                         : std::string_view(o.algorithm))
          : "ringlab sendrecv";
  if (group.rank() == 0) print_header(o, row, P, by_hand);
  const std::size_t esize = element_size(o.dtype);
  const std::size_t blocks = row ? row->size_blocks(P) : 1;
  const double factor = bus_factor(o.op, P);
  std::uint64_t sequence = 1;
  for (std::size_t bytes = std::max(o.min_bytes, esize); bytes <= o.max_bytes; bytes *= 2) {
    const std::size_t count = std::max<std::size_t>(1, bytes / esize / blocks);
    NativeCase c(group, transport, o, row, count);
    for (bool hand : {false, true}) {
      Row r = measure(group, c, o, hand, sequence);
      r.count = count;
      r.bytes = count * esize * blocks;
      r.algbw_gbs = static_cast<double>(r.bytes) / (r.time_us * 1e3);
      r.busbw_gbs = r.algbw_gbs * factor;
      rows.push_back(r);
      if (group.rank() != 0) continue;
      std::printf(" %11zu %12zu %8s %6s %5s %-22s %10.1f %8.3f %8.3f %6lld\n", r.bytes, r.count,
                  std::string(dtype_name(o.dtype)).c_str(),
                  row && row->reduces ? std::string(op_name(o.redop)).c_str() : "none",
                  row && row->rooted ? std::to_string(o.root).c_str() : "-",
                  hand ? by_hand.c_str() : "nccl", r.time_us, r.algbw_gbs, r.busbw_gbs,
                  static_cast<long long>(r.wrong));
      std::fflush(stdout);
    }
  }
}

}  // namespace

namespace {

// One rank whose process joined a job (a launcher's, or ranks forked below):
// its GPU placed as the nccl backend places it (backends/nccl_join.hpp),
// which may share it.
struct NativeRank final : backends::RankConnection {
  backends::NcclRank joined;
};

std::vector<Row> run_threads(const BenchOptions& o, int ranks, Duration timeout) {
  std::vector<std::vector<Row>> rows(static_cast<std::size_t>(ranks));
  nccl::run_nccl_world(
      ranks,
      [&](std::shared_ptr<nccl::NcclCommunicator> communicator) {
        const int rank = communicator->rank();
        rank_body(std::move(communicator), o, rows[static_cast<std::size_t>(rank)]);
      },
      timeout);
  return rows.front();
}

}  // namespace

// The ranks where --backend nccl puts them (backends/rank_world.hpp): this
// one rank of a launched job; forks sharing fewer GPUs than ranks; else
// threads, a GPU each.
std::vector<Row> run_native(const BenchOptions& o, int ranks, Duration timeout) {
  benchmark_op(o.op);  // refuses unknown ops
  check_sizes(o);
  std::vector<Row> rows;
  backends::ProcessWorld w;
  w.name = "bench --native";
  w.world = ranks;
  w.timeout = timeout;
  w.connect = [](const backends::RankSpec& me, const backends::EnvironmentLookup&) {
    auto rank = std::make_unique<NativeRank>();
    rank->joined = backends::join_nccl_job(me.world);
    if (!rank->joined.note.empty() && me.world.rank == 0)
      std::printf("# %s\n", rank->joined.note.c_str());
    return rank;
  };
  w.run = [&](backends::RankConnection& rank, const backends::RankSpec&) {
    rank_body(static_cast<NativeRank&>(rank).joined.communicator, o, rows);
    return std::string();
  };
  w.wants_threads = [ranks] {
    const int gpus = nccl::gpu_count_without_starting_cuda();
    return !(gpus > 0 && gpus < ranks);
  };
  w.run_threads = [&] { rows = run_threads(o, ranks, timeout); };
  w.forks.name = "ringlab bench --native";
  w.forks.answers = false;
  backends::run_process_world(w);
  return rows;
}

}  // namespace ringlab::bench
