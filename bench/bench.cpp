#include "bench/bench.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "primitives/algorithms.hpp"

namespace ringlab::bench {

namespace {

// How every refusal of a size ends: the form that is accepted.
const std::string kSizeForm =
    "write a whole number of bytes with an optional K, M or G (1024, 1024^2, 1024^3 bytes), "
    "e.g. 4K, 1.5M or 1G, and a range as MIN:MAX, e.g. 4K:64M";

[[noreturn]] void bad_size(const std::string& text, const std::string& why) {
  throw std::invalid_argument("--sizes: '" + text + "' " + why + ": " + kSizeForm);
}

}  // namespace

std::size_t parse_size(const std::string& text) {
  // Digits, an optional fraction, an optional suffix; nothing else (no sign,
  // exponent, hex, inf, nan or blanks, all of which a floating-point parser
  // would take).
  std::size_t at = 0;
  std::uint64_t whole = 0;
  const std::uint64_t limit = kMaxBenchBytes;
  auto digit = [&](std::size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  if (!digit(0)) bad_size(text, text.empty() ? "is empty" : "is not a size");
  for (; digit(at); ++at) {
    whole = whole * 10 + static_cast<std::uint64_t>(text[at] - '0');
    if (whole > limit)
      bad_size(text, "is too large (the largest size is " + std::to_string(kMaxBenchBytes) +
                         " bytes, 1 TiB)");
  }
  std::uint64_t fraction = 0, fraction_scale = 1;  // fraction / fraction_scale
  if (at < text.size() && text[at] == '.') {
    ++at;
    if (!digit(at)) bad_size(text, "is not a size");
    for (; digit(at); ++at)
      if (fraction_scale < 1000000000) {  // nine decimals are plenty
        fraction = fraction * 10 + static_cast<std::uint64_t>(text[at] - '0');
        fraction_scale *= 10;
      }
  }
  const std::string suffix = text.substr(at);
  std::uint64_t scale = 1;
  if (suffix == "K" || suffix == "k" || suffix == "KiB")
    scale = std::uint64_t{1} << 10;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB")
    scale = std::uint64_t{1} << 20;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB")
    scale = std::uint64_t{1} << 30;
  else if (!suffix.empty() && suffix != "B")
    bad_size(text, "has an unknown suffix '" + suffix + "'");
  if (whole > limit / scale)
    bad_size(text, "is too large (the largest size is " + std::to_string(kMaxBenchBytes) +
                       " bytes, 1 TiB)");
  const std::uint64_t fraction_bytes = fraction * scale;  // < 10^9 * 2^30: no overflow
  if (fraction_bytes % fraction_scale != 0) bad_size(text, "is not a whole number of bytes");
  const std::uint64_t bytes = whole * scale + fraction_bytes / fraction_scale;
  if (bytes > limit)
    bad_size(text, "is too large (the largest size is " + std::to_string(kMaxBenchBytes) +
                       " bytes, 1 TiB)");
  if (bytes == 0) bad_size(text, "is zero bytes (a size is at least 1 byte)");
  return static_cast<std::size_t>(bytes);
}

std::pair<std::size_t, std::size_t> parse_size_range(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    auto size = parse_size(text);
    return {size, size};
  }
  if (text.find(':', colon + 1) != std::string::npos) bad_size(text, "has more than one ':'");
  auto range =
      std::make_pair(parse_size(text.substr(0, colon)), parse_size(text.substr(colon + 1)));
  if (range.first > range.second)
    throw std::invalid_argument("--sizes: the range '" + text +
                                "' runs backwards: write MIN:MAX, e.g. 4K:64M");
  return range;
}

void check_sizes(const BenchOptions& o) {
  const std::size_t esize = element_size(o.dtype);
  if (o.max_bytes < esize)
    throw std::invalid_argument(
        "--sizes: every size from " + std::to_string(o.min_bytes) + " to " +
        std::to_string(o.max_bytes) + " bytes is smaller than one " +
        std::string(dtype_name(o.dtype)) + " element (" + std::to_string(esize) +
        " bytes), so there is nothing to run: use a maximum of at least " + std::to_string(esize) +
        " bytes, e.g. --sizes " + std::to_string(esize) + ":64M");
  if (o.min_bytes == 0 || o.min_bytes > o.max_bytes || o.max_bytes > kMaxBenchBytes)
    throw std::invalid_argument("--sizes: the range " + std::to_string(o.min_bytes) + ":" +
                                std::to_string(o.max_bytes) +
                                " is not one the benchmark runs: " + kSizeForm);
}

// ---- memory -----------------------------------------------------------------

namespace {

// The tensors one rank of a case holds, in blocks of count elements (see
// Case below, which allocates them).
std::size_t tensors_in_blocks(const CollectiveInfo* collective, int world) {
  if (!collective) return 3;  // sendrecv: the buffer, one to send, one to receive
  auto lists = [&](Shape s) { return s == Shape::List || s == Shape::RootList ? world : 0; };
  return 1 + static_cast<std::size_t>(lists(collective->input) + lists(collective->output));
}

// Elements per block for a case of `bytes` (as run() sizes them).
std::size_t block_count(const CollectiveInfo* collective, std::size_t bytes, std::size_t esize,
                        int world) {
  const std::size_t blocks = collective ? collective->size_blocks(world) : 1;
  return std::max<std::size_t>(1, bytes / esize / blocks);
}

std::size_t need_for(const BenchOptions& o, const CollectiveInfo* collective, int world,
                     std::size_t bytes) {
  const std::size_t block =
      block_count(collective, bytes, element_size(o.dtype), world) * element_size(o.dtype);
  const std::size_t tensors = tensors_in_blocks(collective, world);
  // The scratch: the packed list where there is one, else a buffer.
  const std::size_t scratch = !collective ? 0 : tensors > 1 ? tensors - 1 : 1;
  return block * (tensors + scratch);
}

// The largest size run() reaches for o: min doubled while <= max.
std::size_t largest_size(const BenchOptions& o) {
  std::size_t bytes = std::max(o.min_bytes, element_size(o.dtype));
  while (bytes <= o.max_bytes / 2) bytes *= 2;
  return bytes;
}

std::string gib(std::size_t bytes) {
  char text[32];
  const double value = static_cast<double>(bytes);
  if (bytes >= (std::size_t{1} << 30))
    std::snprintf(text, sizeof text, "%.1f GiB", value / (1 << 30));
  else
    std::snprintf(text, sizeof text, "%.0f MiB", std::max(1.0, value / (1 << 20)));
  return text;
}

// "4K", "512M", "2G": a size as --sizes takes it.
std::string size_text(std::size_t bytes) {
  for (const auto& [shift, suffix] : {std::pair{30, "G"}, std::pair{20, "M"}, std::pair{10, "K"}})
    if (bytes % (std::size_t{1} << shift) == 0) return std::to_string(bytes >> shift) + suffix;
  return std::to_string(bytes);
}

std::optional<std::size_t> read_number(const std::string& path) {
  std::ifstream file(path);
  std::string word;
  if (!(file >> word) || word == "max") return std::nullopt;
  try {
    return static_cast<std::size_t>(std::stoull(word));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// "key value" lines (/proc/meminfo in kB, memory.stat in bytes).
std::optional<std::size_t> read_field(const std::string& path, const std::string& key) {
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) {
    std::istringstream in(line);
    std::string name;
    std::size_t value = 0;
    if (in >> name >> value && (name == key || name == key + ":")) return value;
  }
  return std::nullopt;
}

// The cgroup's memory: limit less usage (plus inactive file cache, which the
// kernel reclaims before it kills), for cgroup v2 and v1.
void read_cgroup(MemoryLimits& limits) {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string v2_path, v1_path;
  for (std::string line; std::getline(cgroups, line);) {
    if (line.rfind("0::", 0) == 0) v2_path = line.substr(3);
    const auto memory = line.find(":memory:");
    if (memory != std::string::npos) v1_path = line.substr(memory + 8);
  }
  struct Layout {
    std::string folder, limit, usage, inactive;
  };
  std::vector<Layout> layouts;
  for (const std::string& path : {v2_path, std::string()})
    layouts.push_back({"/sys/fs/cgroup" + path, "memory.max", "memory.current", "inactive_file"});
  for (const std::string& path : {v1_path, std::string()})
    layouts.push_back({"/sys/fs/cgroup/memory" + path, "memory.limit_in_bytes",
                       "memory.usage_in_bytes", "total_inactive_file"});
  for (const Layout& l : layouts) {
    const auto limit = read_number(l.folder + "/" + l.limit);
    if (!limit) continue;
    if (*limit >= (std::size_t{1} << 60)) return;  // unlimited (v1 writes a huge number)
    const std::size_t used = read_number(l.folder + "/" + l.usage).value_or(0);
    const std::size_t reclaimable = read_field(l.folder + "/memory.stat", l.inactive).value_or(0);
    const std::size_t charged = used > reclaimable ? used - reclaimable : 0;
    limits.cgroup_left = *limit > charged ? *limit - charged : 0;
    limits.cgroup_file = l.folder + "/" + l.limit;
    return;
  }
}

}  // namespace

std::size_t memory_per_rank(const BenchOptions& o, int world) {
  return need_for(o, benchmark_op(o.op), world, largest_size(o));
}

MemoryLimits read_memory_limits() {
  MemoryLimits limits;
  if (const auto kb = read_field("/proc/meminfo", "MemAvailable")) limits.available = *kb << 10;
  read_cgroup(limits);
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const std::size_t used = read_field("/proc/self/status", "VmSize").value_or(0) << 10;
    limits.address_space_left = as.rlim_cur > used ? as.rlim_cur - used : 0;
  }
  return limits;
}

void check_memory(const BenchOptions& o, const RankPlacement& p, const MemoryLimits& limits) {
  const CollectiveInfo* collective = benchmark_op(o.op);
  // Each thread of a process reserves address space of its own (a stack and
  // a malloc arena): room for them, and for the ranks' transport.
  constexpr std::size_t kPerThread = std::size_t{72} << 20;
  struct Check {
    const char* what;  // the limit, as the message names it
    std::optional<std::size_t> left;
    int ranks;  // whose memory counts against it
    std::size_t overhead;
  };
  const std::string cgroup = "the memory limit of this cgroup (" + limits.cgroup_file + ")";
  const Check checks[] = {
      {"the address-space limit of each process (ulimit -v, RLIMIT_AS)", limits.address_space_left,
       p.ranks_per_process, kPerThread * static_cast<std::size_t>(p.ranks_per_process + 2)},
      {cgroup.c_str(), limits.cgroup_left, p.ranks_here, 0},
      {"the memory available on this machine (MemAvailable in /proc/meminfo)", limits.available,
       p.ranks_here, 0},
  };
  auto fits = [&](std::size_t bytes, const Check& c) {
    const std::size_t need = need_for(o, collective, p.world, bytes);
    return !c.left || (*c.left >= c.overhead &&
                       (*c.left - c.overhead) / need >= static_cast<std::size_t>(c.ranks));
  };
  const std::size_t largest = largest_size(o);
  for (const Check& c : checks) {
    if (fits(largest, c)) continue;
    const std::size_t per_rank = need_for(o, collective, p.world, largest);
    std::string text = "--sizes: " + o.op + " of " + size_text(largest) + " on " +
                       std::to_string(p.world) + " rank" + (p.world == 1 ? "" : "s") +
                       " needs about " + gib(per_rank) + " of memory per rank";
    if (c.ranks > 1)
      text += " (" + gib(per_rank * static_cast<std::size_t>(c.ranks)) + " for " +
              std::to_string(c.ranks) + " ranks)";
    text += " for its tensors and their scratch, but " + std::string(c.what) + " leaves " +
            gib(*c.left) + ": ";
    // The largest size of the doubling that fits every limit.
    const std::size_t esize = element_size(o.dtype);
    std::size_t fitting = largest;
    auto fits_all = [&](std::size_t bytes) {
      return std::all_of(std::begin(checks), std::end(checks),
                         [&](const Check& other) { return fits(bytes, other); });
    };
    while (fitting >= esize && !fits_all(fitting)) fitting /= 2;
    if (fitting >= o.min_bytes)
      text += "use a smaller maximum size (--sizes " + size_text(o.min_bytes) + ":" +
              size_text(fitting) + " fits) or fewer ranks";
    else if (fitting >= esize)
      text += "use a smaller size (--sizes " + size_text(fitting) + " fits) or fewer ranks";
    else
      text += "not even one element fits: raise the limit or use fewer ranks";
    throw std::runtime_error(text);
  }
}

std::vector<std::string> benchmark_ops() {
  std::vector<std::string> ops;
  for (const CollectiveInfo& row : collective_table())
    if (row.input != Shape::None) ops.emplace_back(row.name);
  ops.emplace_back("sendrecv");
  return ops;
}

std::string benchmark_ops_text() {
  auto ops = benchmark_ops();
  ops.emplace_back("loopback");  // bench/loopback.hpp: no ranks, the machine's ceiling
  std::string text;
  for (std::size_t i = 0; i < ops.size(); ++i)
    text += (i == 0 ? "" : i + 1 == ops.size() ? " or " : ", ") + ops[i];
  return text;
}

const CollectiveInfo* benchmark_op(const std::string& op) {
  if (op == "sendrecv") return nullptr;
  const CollectiveInfo* collective = find_collective(op);
  if (collective && collective->input != Shape::None) return collective;
  throw std::invalid_argument(
      (collective ? std::string(collective->name) + " moves no data, so it has no bandwidth"
                  : "unknown benchmark op '" + op + "'") +
      ": use " + benchmark_ops_text());
}

namespace {

using Clock = std::chrono::steady_clock;

// One benchmark case: buffers sized for `count` elements per block, an
// operation to time, and a closed-form check of what it produced.
class Case {
 public:
  // collective: nullptr for sendrecv.
  Case(ProcessGroup& pg, const BenchOptions& o, const CollectiveInfo* collective, std::size_t count)
      : pg_(pg),
        o_(o),
        collective_(collective),
        count_(count),
        world_(pg.size()),
        rank_(pg.rank()) {
    auto make = [&](std::size_t n) { return Tensor(o.dtype, {static_cast<std::int64_t>(n)}); };
    tensor_ = make(count);
    // Lists only where the collective's shape takes them, on the ranks that
    // pass them: P more tensors of the same size would cost memory (and time
    // to fill) for nothing. sendrecv sends one and receives one.
    const bool is_root = rank_ == o.root;
    auto passes = [&](Shape s) { return s == Shape::List || (s == Shape::RootList && is_root); };
    const int inputs = !collective ? 1 : passes(collective->input) ? world_ : 0;
    const int outputs = !collective ? 1 : passes(collective->output) ? world_ : 0;
    for (int r = 0; r < inputs; ++r) in_list_.push_back(make(count));
    for (int r = 0; r < outputs; ++r) out_list_.push_back(make(count));
  }

  void fill_inputs() {
    // Closed forms: rank r contributes r+1; scatter's entry d is d+1; the
    // block all_to_all's rank r sends to d is r*P + d.
    fill(tensor_, rank_ + 1);
    const Collective id = collective_ ? collective_->id : Collective::Barrier;
    for (std::size_t d = 0; d < in_list_.size(); ++d) {
      const double block = static_cast<double>(d);
      fill(in_list_[d], id == Collective::Scatter    ? block + 1
                        : id == Collective::AllToAll ? rank_ * world_ + block
                                                     : rank_ + 1);
    }
    for (Tensor& out : out_list_) fill(out, -1);
  }

  void run_once() {
    if (collective_) {
      collective_->run_group(pg_, {&tensor_, &in_list_, &out_list_, o_.root, o_.redop});
      return;
    }
    // sendrecv, a ring exchange: everyone sends to the right and receives
    // from the left.
    if (world_ == 1) return;
    Work w = pg_.isend(in_list_[0], (rank_ + 1) % world_);
    pg_.recv(out_list_[0], (rank_ + world_ - 1) % world_);
    w.wait();
  }

  std::int64_t count_wrong() const {
    if (!collective_)
      return world_ > 1 ? wrong_in(out_list_[0], (rank_ + world_ - 1) % world_ + 1) : 0;
    const double p = world_;
    const double sum = p * (p + 1) / 2;
    const bool is_root = rank_ == o_.root;
    std::int64_t wrong = 0;
    switch (collective_->id) {
      case Collective::AllReduce:
      case Collective::ReduceScatter:
        wrong += wrong_in(tensor_, reduced(sum));
        break;
      case Collective::Reduce:
        if (is_root) wrong += wrong_in(tensor_, reduced(sum));
        break;
      case Collective::Broadcast:
        wrong += wrong_in(tensor_, o_.root + 1);
        break;
      case Collective::Scatter:
        wrong += wrong_in(tensor_, rank_ + 1);
        break;
      case Collective::Gather:
      case Collective::AllGather:
        for (std::size_t r = 0; r < out_list_.size(); ++r)
          wrong += wrong_in(out_list_[r], static_cast<double>(r) + 1);
        break;
      case Collective::AllToAll:
        for (int s = 0; s < world_; ++s)
          wrong += wrong_in(out_list_[static_cast<std::size_t>(s)], s * world_ + rank_);
        break;
      case Collective::Barrier:
        break;
    }
    return wrong;
  }

  // The size nccl-tests reports for this op, in bytes.
  std::size_t reported_bytes() const {
    const std::size_t block = count_ * element_size(o_.dtype);
    return collective_ ? block * collective_->size_blocks(world_) : block;
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
    visit_dtype(t.dtype(), [&]<typename T>() { std::ranges::fill(t.data<T>(), wrapped<T>(v)); });
  }
  static std::int64_t wrong_in(const Tensor& t, double expected) {
    std::int64_t wrong = 0;
    // The closed form as the dtype holds it: integer sums wrap as the
    // reduction's do; float16's and bfloat16's are exact up to 63 and 22
    // ranks (sums of 1..P), past which the order of the adds rounds them.
    visit_dtype(t.dtype(), [&]<typename T>() {
      const T want = wrapped<T>(expected);
      for (T v : t.data<T>()) wrong += !(v == want);
    });
    return wrong;
  }

  ProcessGroup& pg_;
  const BenchOptions& o_;
  const CollectiveInfo* collective_;
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

// Runs c untimed, in batches of `batch`, until `at_least` has passed on the
// slowest rank. Every rank sees the same maximum, so all stop after the same
// batch.
void warm_up(ProcessGroup& pg, Case& c, int batch, Duration at_least) {
  const auto start = Clock::now();
  const double limit_ms = static_cast<double>(at_least.count());
  for (;;) {
    for (int i = 0; i < batch; ++i) c.run_once();
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (max_over_ranks(pg, elapsed_ms) >= limit_ms) return;
  }
}

}  // namespace

std::string legend(const std::string& op, const CollectiveInfo* collective, int ranks) {
  std::string factor = "1, point to point: the bytes that cross";
  if (collective && collective->bus == BusFactor::TwiceRanksLessOne)
    factor = "2(P-1)/P, a reduce-scatter then an all-gather";
  else if (collective && collective->bus == BusFactor::RanksLessOneOfAll)
    factor = "(P-1)/P, each rank receives every block but its own";
  else if (collective)
    factor = "1, the root's link carries the size once";
  char text[320];
  std::snprintf(text, sizeof text,
                "# algbw = size / time; busbw = algbw x %.2f (%s's factor %s; P = %d), comparable "
                "to a link's bandwidth; root %s",
                bus_factor(op, ranks), op.c_str(), factor.c_str(), ranks,
                collective && collective->rooted ? "= the rank the op starts from or ends at"
                                                 : "- = this op has none");
  return text;
}

std::vector<Row> run(ProcessGroup& pg, const BenchOptions& o, bool print) {
  const CollectiveInfo* collective = benchmark_op(o.op);
  check_sizes(o);
  const bool root_op = collective && collective->rooted;
  const bool reduce_op = collective && collective->reduces;
  const double factor = bus_factor(o.op, pg.size());
  if (!o.algorithm.empty() && collective) pg.set_algorithm(collective->id, o.algorithm);
  if (print && pg.rank() == 0) {
    std::printf("# ringlab bench: %s, algorithm %s, %d ranks, backend %s\n", o.op.c_str(),
                collective ? pg.algorithm(collective->id).c_str() : "-", pg.size(),
                std::string(pg.backend()).c_str());
    // auto's small-vector choice depends on the transport (all_reduce.cpp).
    if (collective && collective->id == Collective::AllReduce &&
        pg.algorithm(collective->id) == "auto" && pg.transport().prefers_fewer_messages())
      std::printf("# a host runs more ranks than it has processors: auto takes %s up to %zu KiB\n",
                  std::string(all_reduce_auto_choice(1, pg.size(), true)).c_str(),
                  kAllReduceAutoSmallBytes >> 10);
    std::printf("#%11s %12s %8s %6s %5s %10s %8s %8s %6s\n", "size", "count", "type", "redop",
                "root", "time", "algbw", "busbw", "#wrong");
    std::printf("#%11s %12s %8s %6s %5s %10s %8s %8s %6s\n", "(B)", "(elements)", "", "", "",
                "(us)", "(GB/s)", "(GB/s)", "");
    std::printf("%s\n", legend(o.op, collective, pg.size()).c_str());
    std::fflush(stdout);
  }
  const std::size_t esize = element_size(o.dtype);
  const std::size_t blocks = collective ? collective->size_blocks(pg.size()) : 1;
  std::vector<Row> rows;
  for (std::size_t bytes = std::max(o.min_bytes, esize); bytes <= o.max_bytes; bytes *= 2) {
    // As nccl-tests: the size is the whole buffer; list ops split it in blocks.
    const std::size_t count = std::max<std::size_t>(1, bytes / esize / blocks);
    Case c(pg, o, collective, count);
    c.fill_inputs();
    // The first moments after the ranks connect were seen to be slower
    // (docs/benchmarks.md): they go to an untimed warm-up, not to the first row.
    if (rows.empty() && o.warmup > 0 && o.first_warm_up.count() > 0)
      warm_up(pg, c, o.warmup, o.first_warm_up);
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
                  root_op ? std::to_string(o.root).c_str() : "-", row.time_us, row.algbw_gbs,
                  row.busbw_gbs, static_cast<long long>(row.wrong));
      std::fflush(stdout);
    }
  }
  return rows;
}

}  // namespace ringlab::bench
