// The big sweep: every entry of every algorithm table, called directly on Comm
// (one thread per rank, run_world), and every collective again through
// ProcessGroup with each algorithm selected by name, checked against the
// sequential references in reference.hpp.
//
// Grid: world size {1,2,3,4,5,7,8} x element count {0, 1, P-1, 997, 1<<20}
// x dtype {int32, int64, float32, float64} (for_each_dtype says why only
// these) x every wire op that applies
// (SUM, PRODUCT, MIN, MAX for all dtypes, BAND/BOR/BXOR for integers) x every
// root at the small counts. AVG only exists above the algorithms (the caller
// divides), so it is swept through ProcessGroup's all_reduce, reduce and
// reduce_scatter on float dtypes.
//
// Budget (the ctest parts run on a 2-core machine, RelWithDebInfo): the small
// counts run the full grid. The 1<<20-element cases are the expensive ones
// (a P=8 case moves and checks 8M elements), so at 1<<20 each dtype runs SUM
// plus one other op (big_extra_op), roots {P/2, P-1}, and the "even" and
// "holes" block layouts only; the ProcessGroup sweeps add one big case per
// collective on P = 3. Measured on the 2-core machine: the whole program takes
// about 85 s of CPU (~70 s wall when the machine is otherwise idle, ~125 s
// under load), reduce and all_reduce about 40 s of it; every op at 1<<20
// (RINGLAB_SWEEP_FULL=1) makes those two ~2.7x slower (~110 s of CPU).
//
// Gloo's ring reduce is checked on every rank, not only the root, against a
// simulation of the loop described in shared/reference/article-outputs.md
// (see reference.hpp for where that differs from the article's one-line
// summary: 8-byte dtypes at 1<<20 on P = 2, 3, where segments are capped at
// 1 MiB).
//
// A failure names the case (collective[algorithm], P, count, dtype, op, root,
// layout), the rank, how many elements are wrong, and the first wrong index
// with its expected and actual values: one CHECK per (case, rank), never one
// per element.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "primitives/algorithms.hpp"
#include "primitives/process_group.hpp"
#include "reference.hpp"
#include "transport/inproc.hpp"

using namespace ringlab;
using namespace std::chrono_literals;

namespace {

// A deadlock fails the case after this long instead of hanging ctest.
constexpr Duration kTimeout = 20s;

constexpr int kWorlds[] = {1, 2, 3, 4, 5, 7, 8};
constexpr std::size_t kBig = std::size_t{1} << 20;

// ---- the grid ------------------------------------------------------------------

std::vector<std::size_t> small_counts(int P) {
  std::vector<std::size_t> counts{0, 1, static_cast<std::size_t>(P - 1), 997};
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}
std::vector<std::size_t> all_counts(int P) {
  auto counts = small_counts(P);
  counts.push_back(kBig);
  return counts;
}

// The second op each dtype runs at 1<<20 elements (with SUM). Running every
// op at 1<<20 costs about 2.7x as much as this choice (most of the suite's time
// is the 1<<20 cases); the small counts cover every op.
ReduceOp big_extra_op(DType d) {
  switch (d) {
    case DType::Int32:
      return ReduceOp::BXOR;
    case DType::Int64:
      return ReduceOp::MIN;
    case DType::Float32:
      return ReduceOp::PRODUCT;
    case DType::Float64:
    default:
      return ReduceOp::MAX;
  }
}

// RINGLAB_SWEEP_FULL=1 in the environment runs every op at 1<<20 too.
bool full_sweep() {
  static const bool full = [] {
    const char* v = std::getenv("RINGLAB_SWEEP_FULL");
    return v && *v && std::string(v) != "0";
  }();
  return full;
}

// Wire ops (no AVG) that apply to d, trimmed at the big count.
std::vector<ReduceOp> wire_ops(DType d, std::size_t count) {
  std::vector<ReduceOp> ops;
  for (ReduceOp op : kAllReduceOps) {
    if (op == ReduceOp::AVG || !op_applies(op, d)) continue;
    if (count >= kBig && !full_sweep() && op != ReduceOp::SUM && op != big_extra_op(d)) continue;
    ops.push_back(op);
  }
  return ops;
}
// Every op ProcessGroup accepts for d (AVG included on floats).
std::vector<ReduceOp> user_ops(DType d) {
  std::vector<ReduceOp> ops;
  for (ReduceOp op : kAllReduceOps)
    if (op_applies(op, d)) ops.push_back(op);
  return ops;
}

std::vector<int> roots(int P, std::size_t count) {
  std::vector<int> r;
  if (count >= kBig) {
    r = {P / 2, P - 1};
  } else {
    for (int i = 0; i < P; ++i) r.push_back(i);
  }
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

// Consecutive chunks with the given sizes.
std::vector<Chunk> chunks_of(const std::vector<std::size_t>& sizes) {
  std::vector<Chunk> chunks;
  std::size_t offset = 0;
  for (std::size_t s : sizes) {
    chunks.push_back({offset, s});
    offset += s;
  }
  return chunks;
}

struct Layout {
  std::string name;
  std::vector<Chunk> blocks;
};

// Block layouts of `count` elements over P ranks for all_gather and
// reduce_scatter: near-equal (split_even), holes (every odd rank has 0
// elements), and last (rank P-1 owns everything, the others 0).
std::vector<Layout> block_layouts(std::size_t count, int P) {
  std::vector<Layout> layouts;
  layouts.push_back({"even", split_even(count, P)});
  if (P > 1) {
    const int owners = (P + 1) / 2;
    auto parts = split_even(count, owners);
    std::vector<std::size_t> sizes(static_cast<std::size_t>(P), 0);
    for (int k = 0; k < owners; ++k)
      sizes[static_cast<std::size_t>(2 * k)] = parts[static_cast<std::size_t>(k)].count;
    layouts.push_back({"holes", chunks_of(sizes)});
    if (count < kBig) {
      std::vector<std::size_t> last(static_cast<std::size_t>(P), 0);
      last.back() = count;
      layouts.push_back({"last", chunks_of(last)});
    }
  }
  return layouts;
}

// all_to_all: how many elements rank s sends rank d.
//   even:  a rotation of split_even(count, P): every rank sends and receives count.
//   holes: uneven, with zero-sized pairs (self included for some ranks);
//          receive blocks are laid out in descending source order.
std::size_t a2a_size(const std::string& layout, std::size_t count, int P, int s, int d) {
  const auto parts = split_even(count, P);
  if (layout == "even") return parts[static_cast<std::size_t>((d + s) % P)].count;
  if ((s + d) % 3 == 0) return 0;
  return parts[static_cast<std::size_t>((s * d + d) % P)].count + static_cast<std::size_t>(s);
}
struct A2ALayout {
  std::vector<std::vector<Chunk>> send;  // send[s][d]
  std::vector<std::vector<Chunk>> recv;  // recv[d][s]
};
A2ALayout a2a_layout(const std::string& layout, std::size_t count, int P) {
  const auto uP = static_cast<std::size_t>(P);
  A2ALayout l{std::vector<std::vector<Chunk>>(uP, std::vector<Chunk>(uP)),
              std::vector<std::vector<Chunk>>(uP, std::vector<Chunk>(uP))};
  for (int s = 0; s < P; ++s) {
    std::size_t offset = 0;
    for (int d = 0; d < P; ++d) {
      const std::size_t n = a2a_size(layout, count, P, s, d);
      l.send[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)] = {offset, n};
      offset += n;
    }
  }
  for (int d = 0; d < P; ++d) {
    std::size_t offset = 0;
    for (int k = 0; k < P; ++k) {
      const int s = layout == "even" ? k : P - 1 - k;
      const std::size_t n = a2a_size(layout, count, P, s, d);
      l.recv[static_cast<std::size_t>(d)][static_cast<std::size_t>(s)] = {offset, n};
      offset += n;
    }
  }
  return l;
}
std::size_t total_of(const std::vector<Chunk>& chunks) {
  std::size_t end = 0;
  for (const Chunk& c : chunks) end = std::max(end, c.end());
  return end;
}

// ---- describing and checking a case ---------------------------------------------

struct Case {
  std::string collective;
  std::string algorithm;
  int P = 1;
  std::size_t count = 0;
  DType dtype = DType::Float32;
  std::optional<ReduceOp> op;
  int root = -1;
  std::string layout;

  std::string str() const {
    std::ostringstream out;
    out << collective;
    if (!algorithm.empty()) out << "[" << algorithm << "]";
    out << " P=" << P;
    if (collective != "barrier") out << " count=" << count << " dtype=" << dtype_name(dtype);
    if (op) out << " op=" << op_name(*op);
    if (root >= 0) out << " root=" << root;
    if (!layout.empty()) out << " layout=" << layout;
    return out.str();
  }
};

template <typename T>
std::string show(T v) {
  std::ostringstream out;
  out << +v;
  return out.str();
}

// One CHECK for one rank of one case: all elements equal, else a message with
// the number of wrong elements and the first one.
template <typename T>
void check_rank(const Case& c, int rank, std::span<const T> expected, std::span<const T> actual,
                const char* what = nullptr) {
  std::string msg;
  bool ok = expected.size() == actual.size();
  if (!ok) {
    msg = c.str() + " rank=" + std::to_string(rank) + (what ? std::string(" ") + what : "") + ": " +
          std::to_string(actual.size()) + " elements, expected " + std::to_string(expected.size());
  } else if (!expected.empty() &&
             std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(T)) != 0) {
    std::size_t wrong = 0, first = 0;
    for (std::size_t i = 0; i < expected.size(); ++i)
      if (!(expected[i] == actual[i]) && wrong++ == 0) first = i;
    ok = wrong == 0;
    if (!ok)
      msg = c.str() + " rank=" + std::to_string(rank) + (what ? std::string(" ") + what : "") +
            ": " + std::to_string(wrong) + " of " + std::to_string(expected.size()) +
            " elements wrong; first at [" + std::to_string(first) + "]: expected " +
            show(expected[first]) + ", got " + show(actual[first]);
  }
  CHECK_MESSAGE(ok, msg);
}
template <typename T>
void check_rank(const Case& c, int rank, const std::vector<T>& expected,
                const std::vector<T>& actual, const char* what = nullptr) {
  check_rank<T>(c, rank, std::span<const T>(expected), std::span<const T>(actual), what);
}

template <typename T>
Elems elems(std::vector<T>& v) {
  return {reinterpret_cast<std::byte*>(v.data()), v.size(), dtype_of<T>()};
}
template <typename T>
Elems elems(std::vector<T>& v, Chunk c) {
  return elems(v).slice(c.offset, c.count);
}

// Every case uses a fresh sequence number, so tags differ from case to case.
std::uint64_t next_sequence() {
  static std::atomic<std::uint64_t> sequence{1};
  return sequence.fetch_add(97);
}

// Runs body(comm) on every rank of a P-rank world; a throw or a timeout is one
// failed CHECK naming the case.
//
// A deadlocking algorithm would cost kTimeout per case, so after kMaxErrors
// throws the remaining cases of that collective[algorithm] are skipped (the
// failures already reported fail the test).
constexpr int kMaxErrors = 3;
int& error_count(const std::string& key) {
  static std::map<std::string, int> counts;
  return counts[key];
}

bool run_case(const Case& c, const std::function<void(Comm&)>& body) {
  const std::string key = c.collective + "[" + c.algorithm + "]";
  int& errors = error_count(key);
  if (errors >= kMaxErrors) return false;
  const std::uint64_t seq = next_sequence();
  try {
    run_world(
        c.P,
        [&](Transport& transport) {
          Comm comm(transport, seq);
          body(comm);
        },
        kTimeout);
  } catch (const std::exception& e) {
    FAIL_CHECK(c.str() << ": threw: " << std::string(e.what()));
    if (++errors == kMaxErrors)
      FAIL_CHECK(key << ": " << kMaxErrors << " cases threw; skipping its remaining cases");
    return false;
  }
  return true;
}

// The sweep's dtypes: two integer and two floating widths. The other dtypes
// (bool, uint8, int8, int16, float16, bfloat16) run every algorithm on every
// backend at small sizes in the conformance suite (conformance_dtypes.cpp);
// here they would multiply the 1<<20 cases' time. The algorithms see only
// element sizes; the 1- and 2-byte ones are swept there.
template <typename Fn>
void for_each_dtype(Fn&& fn) {
  fn.template operator()<std::int32_t>();
  fn.template operator()<std::int64_t>();
  fn.template operator()<float>();
  fn.template operator()<double>();
}

template <typename T>
std::size_t idx(T r) {
  return static_cast<std::size_t>(r);
}

// ---- algorithm-level cases -------------------------------------------------------

template <typename T>
void broadcast_case(const Algorithm<BroadcastFn>& a, int P, std::size_t n, int root) {
  const Case c{"broadcast", std::string(a.name), P, n, dtype_of<T>(), {}, root, {}};
  ref::PerRank<T> in;
  for (int r = 0; r < P; ++r) in.push_back(ref::move_values_of<T>(r, n));
  auto buf = in;
  if (!run_case(c, [&](Comm& comm) { a.run(comm, elems(buf[idx(comm.rank())]), root); })) return;
  const auto expected = ref::broadcast(in, root);
  for (int r = 0; r < P; ++r) check_rank(c, r, expected, buf[idx(r)]);
}

template <typename T>
void scatter_case(const Algorithm<ScatterFn>& a, int P, std::size_t n, int root) {
  const Case c{"scatter", std::string(a.name), P, n, dtype_of<T>(), {}, root, {}};
  std::vector<T> send(n * idx(P));
  for (int d = 0; d < P; ++d)
    for (std::size_t j = 0; j < n; ++j) send[idx(d) * n + j] = ref::move_value<T>(d, j);
  ref::PerRank<T> out(idx(P), std::vector<T>(n, ref::sentinel<T>()));
  if (!run_case(c, [&](Comm& comm) {
        const bool is_root = comm.rank() == root;
        const Elems s = is_root ? elems(send) : Elems{nullptr, 0, dtype_of<T>()};
        a.run(comm, s, elems(out[idx(comm.rank())]), root);
      }))
    return;
  std::vector<T> original(n * idx(P));
  for (int d = 0; d < P; ++d)
    for (std::size_t j = 0; j < n; ++j) original[idx(d) * n + j] = ref::move_value<T>(d, j);
  for (int r = 0; r < P; ++r) check_rank(c, r, ref::scatter(original, n, r), out[idx(r)]);
  check_rank(c, root, original, send, "(send buffer must be untouched)");
}

template <typename T>
void gather_case(const Algorithm<GatherFn>& a, int P, std::size_t n, int root) {
  const Case c{"gather", std::string(a.name), P, n, dtype_of<T>(), {}, root, {}};
  ref::PerRank<T> in;
  for (int r = 0; r < P; ++r) in.push_back(ref::move_values_of<T>(r, n));
  const auto original = in;
  std::vector<T> recv(n * idx(P), ref::sentinel<T>());
  if (!run_case(c, [&](Comm& comm) {
        const bool is_root = comm.rank() == root;
        const Elems rv = is_root ? elems(recv) : Elems{nullptr, 0, dtype_of<T>()};
        a.run(comm, elems(in[idx(comm.rank())]), rv, root);
      }))
    return;
  check_rank(c, root, ref::gather(original), recv);
  for (int r = 0; r < P; ++r)
    check_rank(c, r, original[idx(r)], in[idx(r)], "(input must be untouched)");
}

template <typename T>
void reduce_case(const Algorithm<ReduceFn>& a, int P, std::size_t n, ReduceOp op, int root) {
  const Case c{"reduce", std::string(a.name), P, n, dtype_of<T>(), op, root, {}};
  const auto in = ref::op_inputs<T>(op, P, n);
  auto buf = in;
  if (!run_case(c, [&](Comm& comm) { a.run(comm, elems(buf[idx(comm.rank())]), op, root); }))
    return;
  check_rank(c, root, ref::reduce_over_ranks(op, in), buf[idx(root)]);
  if (a.name == "gloo_ring") {
    // Gloo's ring fixes what every other rank holds too (the article prints it).
    const auto expected = ref::gloo_ring_reduce(op, in, root);
    for (int r = 0; r < P; ++r)
      if (r != root) check_rank(c, r, expected[idx(r)], buf[idx(r)], "(Gloo partial result)");
  }
}

template <typename T>
void all_reduce_case(const Algorithm<AllReduceFn>& a, int P, std::size_t n, ReduceOp op) {
  const Case c{"all_reduce", std::string(a.name), P, n, dtype_of<T>(), op, -1, {}};
  const auto in = ref::op_inputs<T>(op, P, n);
  auto buf = in;
  if (!run_case(c, [&](Comm& comm) { a.run(comm, elems(buf[idx(comm.rank())]), op); })) return;
  const auto expected = ref::reduce_over_ranks(op, in);
  for (int r = 0; r < P; ++r) check_rank(c, r, expected, buf[idx(r)]);
}

template <typename T>
void all_gather_case(const Algorithm<AllGatherFn>& a, int P, std::size_t n, const Layout& layout) {
  const Case c{"all_gather", std::string(a.name), P, n, dtype_of<T>(), {}, -1, layout.name};
  ref::PerRank<T> src, buf;
  for (int r = 0; r < P; ++r) {
    src.push_back(ref::move_values_of<T>(r, n));
    buf.emplace_back(n, ref::sentinel<T>());
    const Chunk own = layout.blocks[idx(r)];
    std::copy_n(src.back().begin() + static_cast<std::ptrdiff_t>(own.offset), own.count,
                buf.back().begin() + static_cast<std::ptrdiff_t>(own.offset));
  }
  if (!run_case(c, [&](Comm& comm) { a.run(comm, elems(buf[idx(comm.rank())]), layout.blocks); }))
    return;
  const auto expected = ref::all_gather(src, layout.blocks);
  for (int r = 0; r < P; ++r) check_rank(c, r, expected, buf[idx(r)]);
}

template <typename T>
void reduce_scatter_case(const Algorithm<ReduceScatterFn>& a, int P, std::size_t n, ReduceOp op,
                         const Layout& layout) {
  const Case c{"reduce_scatter", std::string(a.name), P, n, dtype_of<T>(), op, -1, layout.name};
  const auto in = ref::op_inputs<T>(op, P, n);
  auto buf = in;
  if (!run_case(c,
                [&](Comm& comm) { a.run(comm, elems(buf[idx(comm.rank())]), layout.blocks, op); }))
    return;
  const auto reduced = ref::reduce_over_ranks(op, in);
  for (int r = 0; r < P; ++r) {
    const Chunk b = layout.blocks[idx(r)];
    check_rank<T>(c, r, ref::reduce_scatter(reduced, layout.blocks, r),
                  std::span<const T>(buf[idx(r)]).subspan(b.offset, b.count));
  }
}

template <typename T>
void all_to_all_case(const Algorithm<AllToAllFn>& a, int P, std::size_t n,
                     const std::string& layout_name) {
  const Case c{"all_to_all", std::string(a.name), P, n, dtype_of<T>(), {}, -1, layout_name};
  const A2ALayout layout = a2a_layout(layout_name, n, P);
  ref::PerRank<T> send, recv;
  for (int r = 0; r < P; ++r) {
    send.push_back(ref::move_values_of<T>(r, total_of(layout.send[idx(r)])));
    recv.emplace_back(total_of(layout.recv[idx(r)]), ref::sentinel<T>());
  }
  if (!run_case(c, [&](Comm& comm) {
        const auto r = idx(comm.rank());
        a.run(comm, elems(send[r]), layout.send[r], elems(recv[r]), layout.recv[r]);
      }))
    return;
  for (int r = 0; r < P; ++r) {
    check_rank(c, r, ref::all_to_all(send, layout.send, layout.recv, r), recv[idx(r)]);
    check_rank(c, r, ref::move_values_of<T>(r, send[idx(r)].size()), send[idx(r)],
               "(send buffer must be untouched)");
  }
}

// ---- ProcessGroup-level cases ------------------------------------------------------
//
// One world per (collective, algorithm, P, dtype): every rank makes one
// ProcessGroup and runs the whole list of cases through it in order; results
// are kept per (case, rank) and compared afterwards.

template <typename T>
Tensor tensor_of(const std::vector<T>& v) {
  return Tensor::from<T>(std::span<const T>(v));
}
template <typename T>
std::vector<T> values_of(const Tensor& t) {
  auto d = t.data<T>();
  return {d.begin(), d.end()};
}
template <typename T>
std::vector<T> concat(const std::vector<Tensor>& list) {
  std::vector<T> out;
  for (const Tensor& t : list) {
    auto d = t.data<T>();
    out.insert(out.end(), d.begin(), d.end());
  }
  return out;
}

// Runs body(pg, results_of_this_rank) on P ranks with the named algorithm
// ("" = default, nothing set). current[r] says which case rank r is in, for
// the failure message.
template <typename T>
bool run_groups(const std::string& label, Collective coll, const std::string& algorithm, int P,
                std::vector<std::vector<std::vector<T>>>& results,
                const std::function<void(ProcessGroup&, std::vector<std::vector<T>>&,
                                         std::string& current)>& body) {
  ProcessGroupOptions options;
  options.timeout = kTimeout;
  if (!algorithm.empty()) options.algorithms[coll] = algorithm;
  results.assign(idx(P), {});
  std::vector<std::string> current(idx(P));
  int& errors = error_count(label);
  if (errors >= kMaxErrors) return false;
  try {
    run_world(
        P,
        [&](Transport& transport) {
          ProcessGroup pg(std::shared_ptr<Transport>(&transport, [](Transport*) {}), options);
          body(pg, results[idx(transport.rank())], current[idx(transport.rank())]);
        },
        kTimeout);
  } catch (const std::exception& e) {
    std::string where;
    for (int r = 0; r < P; ++r)
      where += "\n  rank " + std::to_string(r) + " was in: " + current[idx(r)];
    FAIL_CHECK(label << " P=" << P
                     << (coll == Collective::Barrier
                             ? ""
                             : " dtype=" + std::string(dtype_name(dtype_of<T>())))
                     << ": threw: " << std::string(e.what()) << where);
    if (++errors == kMaxErrors)
      FAIL_CHECK(label << ": " << kMaxErrors << " worlds threw; skipping its remaining ones");
    return false;
  }
  return true;
}

// Counts for the ProcessGroup sweeps: the small ones, plus one big case on
// P = 3 (where 8-byte Gloo reduces cap their segments): 1<<20 elements for a
// tensor, or about 1<<20 / 3 per block where a call moves P blocks.
std::vector<std::size_t> pg_counts(int P, bool per_block) {
  auto counts = small_counts(P);
  if (P == 3) counts.push_back(per_block ? kBig / 3 + 1 : kBig);
  return counts;
}
bool is_big(std::size_t n) { return n > 100000; }
// Ops for the ProcessGroup sweeps: all of them at the small counts; SUM, AVG
// and big_extra_op at the big ones.
std::vector<ReduceOp> pg_ops(DType d, std::size_t n) {
  std::vector<ReduceOp> ops;
  for (ReduceOp op : user_ops(d))
    if (!is_big(n) || op == ReduceOp::SUM || op == ReduceOp::AVG || op == big_extra_op(d))
      ops.push_back(op);
  return ops;
}
std::vector<int> pg_roots(int P, std::size_t n) { return roots(P, is_big(n) ? kBig : n); }

// The algorithm names to run through ProcessGroup: "" (default) and each name.
std::vector<std::string> pg_algorithms(Collective c) {
  std::vector<std::string> names{""};
  for (auto& n : algorithm_names(c)) names.push_back(n);
  return names;
}
std::string pg_label(Collective c, const std::string& algorithm) {
  return "pg." + std::string(collective_name(c)) + "[" +
         (algorithm.empty() ? "default" : algorithm) + "]";
}

template <typename T>
void pg_broadcast(const std::string& algorithm, int P) {
  const Collective coll = Collective::Broadcast;
  std::vector<Case> cases;
  for (std::size_t n : pg_counts(P, false))
    for (int root : pg_roots(P, n))
      cases.push_back({pg_label(coll, algorithm), "", P, n, dtype_of<T>(), {}, root, {}});
  std::vector<std::vector<std::vector<T>>> results;
  if (!run_groups<T>(pg_label(coll, algorithm), coll, algorithm, P, results,
                     [&](ProcessGroup& pg, auto& out, std::string& current) {
                       for (const Case& c : cases) {
                         current = c.str();
                         Tensor t = tensor_of(ref::move_values_of<T>(pg.rank(), c.count));
                         pg.broadcast(t, c.root);
                         out.push_back(values_of<T>(t));
                       }
                     }))
    return;
  for (std::size_t k = 0; k < cases.size(); ++k)
    for (int r = 0; r < P; ++r)
      check_rank(cases[k], r, ref::move_values_of<T>(cases[k].root, cases[k].count),
                 results[idx(r)][k]);
}

template <typename T>
void pg_scatter(const std::string& algorithm, int P) {
  const Collective coll = Collective::Scatter;
  std::vector<Case> cases;
  for (std::size_t n : pg_counts(P, true))
    for (int root : pg_roots(P, n))
      cases.push_back({pg_label(coll, algorithm), "", P, n, dtype_of<T>(), {}, root, {}});
  std::vector<std::vector<std::vector<T>>> results;
  if (!run_groups<T>(pg_label(coll, algorithm), coll, algorithm, P, results,
                     [&](ProcessGroup& pg, auto& out, std::string& current) {
                       for (const Case& c : cases) {
                         current = c.str();
                         std::vector<Tensor> list;
                         if (pg.rank() == c.root)
                           for (int d = 0; d < P; ++d)
                             list.push_back(tensor_of(ref::move_values_of<T>(d, c.count)));
                         Tensor t = tensor_of(std::vector<T>(c.count, ref::sentinel<T>()));
                         pg.scatter(t, list, c.root);
                         out.push_back(values_of<T>(t));
                       }
                     }))
    return;
  for (std::size_t k = 0; k < cases.size(); ++k)
    for (int r = 0; r < P; ++r)
      check_rank(cases[k], r, ref::move_values_of<T>(r, cases[k].count), results[idx(r)][k]);
}

template <typename T>
void pg_gather(const std::string& algorithm, int P) {
  const Collective coll = Collective::Gather;
  std::vector<Case> cases;
  for (std::size_t n : pg_counts(P, true))
    for (int root : pg_roots(P, n))
      cases.push_back({pg_label(coll, algorithm), "", P, n, dtype_of<T>(), {}, root, {}});
  std::vector<std::vector<std::vector<T>>> results;
  if (!run_groups<T>(pg_label(coll, algorithm), coll, algorithm, P, results,
                     [&](ProcessGroup& pg, auto& out, std::string& current) {
                       for (const Case& c : cases) {
                         current = c.str();
                         const Tensor t = tensor_of(ref::move_values_of<T>(pg.rank(), c.count));
                         if (pg.rank() == c.root) {
                           std::vector<Tensor> list;
                           for (int d = 0; d < P; ++d)
                             list.push_back(tensor_of(std::vector<T>(c.count, ref::sentinel<T>())));
                           pg.gather(t, list, c.root);
                           out.push_back(concat<T>(list));
                         } else if ((pg.rank() + c.root) % 2 == 0) {
                           pg.gather(t, c.root);  // torch's gather_list=None
                           out.push_back({});
                         } else {
                           std::vector<Tensor> empty;
                           pg.gather(t, empty, c.root);
                           out.push_back({});
                         }
                       }
                     }))
    return;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    ref::PerRank<T> in;
    for (int r = 0; r < P; ++r) in.push_back(ref::move_values_of<T>(r, cases[k].count));
    check_rank(cases[k], cases[k].root, ref::gather(in), results[idx(cases[k].root)][k]);
  }
}

// Expected result of op over ranks, with AVG divided by P.
template <typename T>
std::vector<T> user_reduction(ReduceOp op, const ref::PerRank<T>& in) {
  auto out = ref::reduce_over_ranks(wire_op(op), in);
  if (op == ReduceOp::AVG)
    for (T& v : out) v = static_cast<T>(v / static_cast<T>(in.size()));
  return out;
}

template <typename T>
void pg_reduce(const std::string& algorithm, int P) {
  const Collective coll = Collective::Reduce;
  std::vector<Case> cases;
  for (std::size_t n : pg_counts(P, false))
    for (ReduceOp op : pg_ops(dtype_of<T>(), n))
      for (int root : pg_roots(P, n))
        cases.push_back({pg_label(coll, algorithm), "", P, n, dtype_of<T>(), op, root, {}});
  std::vector<std::vector<std::vector<T>>> results;
  if (!run_groups<T>(pg_label(coll, algorithm), coll, algorithm, P, results,
                     [&](ProcessGroup& pg, auto& out, std::string& current) {
                       for (const Case& c : cases) {
                         current = c.str();
                         Tensor t =
                             tensor_of(ref::op_inputs_of<T>(wire_op(*c.op), pg.rank(), c.count));
                         pg.reduce(t, c.root, *c.op);
                         out.push_back(values_of<T>(t));
                       }
                     }))
    return;
  const std::string effective =
      algorithm.empty() ? std::string(collective_info(coll).default_algorithm) : algorithm;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const auto in = ref::op_inputs<T>(wire_op(*c.op), P, c.count);
    check_rank(c, c.root, user_reduction(*c.op, in), results[idx(c.root)][k]);
    if (effective == "gloo_ring" && *c.op != ReduceOp::AVG) {
      const auto all = ref::gloo_ring_reduce(*c.op, in, c.root);
      for (int r = 0; r < P; ++r)
        if (r != c.root) check_rank(c, r, all[idx(r)], results[idx(r)][k], "(Gloo partial result)");
    }
  }
}

template <typename T>
void pg_all_reduce(const std::string& algorithm, int P) {
  const Collective coll = Collective::AllReduce;
  std::vector<Case> cases;
  for (std::size_t n : pg_counts(P, false))
    for (ReduceOp op : pg_ops(dtype_of<T>(), n))
      cases.push_back({pg_label(coll, algorithm), "", P, n, dtype_of<T>(), op, -1, {}});
  std::vector<std::vector<std::vector<T>>> results;
  if (!run_groups<T>(pg_label(coll, algorithm), coll, algorithm, P, results,
                     [&](ProcessGroup& pg, auto& out, std::string& current) {
                       for (const Case& c : cases) {
                         current = c.str();
                         Tensor t =
                             tensor_of(ref::op_inputs_of<T>(wire_op(*c.op), pg.rank(), c.count));
                         pg.all_reduce(t, *c.op);
                         out.push_back(values_of<T>(t));
                       }
                     }))
    return;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const auto expected = user_reduction(*c.op, ref::op_inputs<T>(wire_op(*c.op), P, c.count));
    for (int r = 0; r < P; ++r) check_rank(c, r, expected, results[idx(r)][k]);
    if (*c.op == ReduceOp::AVG) {  // and against the closed form (P+1)/2 + i % 1021
      std::vector<T> closed(c.count);
      for (std::size_t i = 0; i < c.count; ++i) closed[i] = static_cast<T>(ref::closed_avg(P, i));
      check_rank(c, 0, closed, results[0][k], "(closed-form AVG)");
    }
  }
}

template <typename T>
void pg_all_gather(const std::string& algorithm, int P) {
  const Collective coll = Collective::AllGather;
  std::vector<Case> cases;
  for (std::size_t n : pg_counts(P, true))
    cases.push_back({pg_label(coll, algorithm), "", P, n, dtype_of<T>(), {}, -1, {}});
  std::vector<std::vector<std::vector<T>>> results;
  if (!run_groups<T>(pg_label(coll, algorithm), coll, algorithm, P, results,
                     [&](ProcessGroup& pg, auto& out, std::string& current) {
                       for (const Case& c : cases) {
                         current = c.str();
                         std::vector<Tensor> list;
                         for (int d = 0; d < P; ++d)
                           list.push_back(tensor_of(std::vector<T>(c.count, ref::sentinel<T>())));
                         const Tensor t = tensor_of(ref::move_values_of<T>(pg.rank(), c.count));
                         pg.all_gather(list, t);
                         out.push_back(concat<T>(list));
                       }
                     }))
    return;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    ref::PerRank<T> in;
    for (int r = 0; r < P; ++r) in.push_back(ref::move_values_of<T>(r, cases[k].count));
    const auto expected = ref::gather(in);
    for (int r = 0; r < P; ++r) check_rank(cases[k], r, expected, results[idx(r)][k]);
  }
}

template <typename T>
void pg_reduce_scatter(const std::string& algorithm, int P) {
  const Collective coll = Collective::ReduceScatter;
  std::vector<Case> cases;
  for (std::size_t n : pg_counts(P, true))
    for (ReduceOp op : pg_ops(dtype_of<T>(), n))
      cases.push_back({pg_label(coll, algorithm), "", P, n, dtype_of<T>(), op, -1, {}});
  std::vector<std::vector<std::vector<T>>> results;
  // input_list[b] on rank r holds op_input(r, b*n + j): the blocks differ.
  if (!run_groups<T>(pg_label(coll, algorithm), coll, algorithm, P, results,
                     [&](ProcessGroup& pg, auto& out, std::string& current) {
                       for (const Case& c : cases) {
                         current = c.str();
                         const auto mine =
                             ref::op_inputs_of<T>(wire_op(*c.op), pg.rank(), c.count * idx(P));
                         std::vector<Tensor> list;
                         for (int b = 0; b < P; ++b)
                           list.push_back(tensor_of(std::vector<T>(
                               mine.begin() + static_cast<std::ptrdiff_t>(idx(b) * c.count),
                               mine.begin() + static_cast<std::ptrdiff_t>(idx(b + 1) * c.count))));
                         Tensor t = tensor_of(std::vector<T>(c.count, ref::sentinel<T>()));
                         pg.reduce_scatter(t, list, *c.op);
                         out.push_back(values_of<T>(t));
                       }
                     }))
    return;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const auto reduced =
        user_reduction(*c.op, ref::op_inputs<T>(wire_op(*c.op), P, c.count * idx(P)));
    const auto blocks = equal_blocks(c.count, P);
    for (int r = 0; r < P; ++r)
      check_rank(c, r, ref::reduce_scatter(reduced, blocks, r), results[idx(r)][k]);
  }
}

template <typename T>
void pg_all_to_all(const std::string& algorithm, int P) {
  const Collective coll = Collective::AllToAll;
  // Each count runs: the list form (uneven sizes), all_to_all_single with
  // uneven split sizes, and all_to_all_single with equal splits (no sizes).
  struct A2ACase {
    Case c;
    std::string form;  // "list", "single_splits", "single_even"
  };
  std::vector<A2ACase> cases;
  for (std::size_t n : pg_counts(P, true))
    for (const char* form : {"list", "single_splits", "single_even"})
      cases.push_back({{pg_label(coll, algorithm),
                        "",
                        P,
                        n,
                        dtype_of<T>(),
                        {},
                        -1,
                        form == std::string("single_even") ? "even" : "holes"},
                       form});
  std::vector<std::vector<std::vector<T>>> results;
  if (!run_groups<T>(
          pg_label(coll, algorithm), coll, algorithm, P, results,
          [&](ProcessGroup& pg, auto& out, std::string& current) {
            const int me = pg.rank();
            for (const A2ACase& ac : cases) {
              const Case& c = ac.c;
              current = c.str() + " form=" + ac.form;
              if (ac.form == "single_even") {
                const Tensor in = tensor_of(ref::move_values_of<T>(me, c.count * idx(P)));
                Tensor o = tensor_of(std::vector<T>(c.count * idx(P), ref::sentinel<T>()));
                pg.all_to_all_single(o, in);
                out.push_back(values_of<T>(o));
                continue;
              }
              std::vector<std::int64_t> in_splits, out_splits;
              for (int d = 0; d < P; ++d)
                in_splits.push_back(
                    static_cast<std::int64_t>(a2a_size(c.layout, c.count, P, me, d)));
              for (int s = 0; s < P; ++s)
                out_splits.push_back(
                    static_cast<std::int64_t>(a2a_size(c.layout, c.count, P, s, me)));
              std::size_t in_total = 0, out_total = 0;
              for (auto v : in_splits) in_total += idx(v);
              for (auto v : out_splits) out_total += idx(v);
              const auto mine = ref::move_values_of<T>(me, in_total);
              if (ac.form == "single_splits") {
                const Tensor in = tensor_of(mine);
                Tensor o = tensor_of(std::vector<T>(out_total, ref::sentinel<T>()));
                pg.all_to_all_single(o, in, out_splits, in_splits);
                out.push_back(values_of<T>(o));
              } else {
                std::vector<Tensor> ins, outs;
                std::size_t offset = 0;
                for (int d = 0; d < P; ++d) {
                  const auto n = idx(in_splits[idx(d)]);
                  ins.push_back(tensor_of(
                      std::vector<T>(mine.begin() + static_cast<std::ptrdiff_t>(offset),
                                     mine.begin() + static_cast<std::ptrdiff_t>(offset + n))));
                  offset += n;
                }
                for (int s = 0; s < P; ++s)
                  outs.push_back(
                      tensor_of(std::vector<T>(idx(out_splits[idx(s)]), ref::sentinel<T>())));
                pg.all_to_all(outs, ins);
                out.push_back(concat<T>(outs));
              }
            }
          }))
    return;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k].c;
    // ProcessGroup lays both sides out in rank order, so the reference uses
    // consecutive blocks in rank order on both sides.
    const auto uP = idx(P);
    std::vector<std::vector<Chunk>> send(uP), recv(uP);
    ref::PerRank<T> in;
    for (int s = 0; s < P; ++s) {
      std::vector<std::size_t> sizes, rsizes;
      for (int d = 0; d < P; ++d)
        sizes.push_back(c.layout == "even" ? c.count : a2a_size(c.layout, c.count, P, s, d));
      for (int d = 0; d < P; ++d)
        rsizes.push_back(c.layout == "even" ? c.count : a2a_size(c.layout, c.count, P, d, s));
      send[idx(s)] = chunks_of(sizes);
      recv[idx(s)] = chunks_of(rsizes);
      in.push_back(ref::move_values_of<T>(s, total_of(send[idx(s)])));
    }
    for (int r = 0; r < P; ++r)
      check_rank(c, r, ref::all_to_all(in, send, recv, r), results[idx(r)][k],
                 cases[k].form.c_str());
  }
}

// Runs fn<T>(algorithm, P) for every algorithm name (and the default), world
// size and dtype.
template <typename Fn>
void pg_sweep(Collective c, Fn&& fn) {
  for (const std::string& algorithm : pg_algorithms(c))
    for (int P : kWorlds)
      for_each_dtype([&]<typename T>() { fn.template operator()<T>(algorithm, P); });
}

}  // namespace

// =============================================================================

TEST_SUITE("broadcast") {
  TEST_CASE("every broadcast algorithm x P x count x dtype x root") {
    for (const auto& a : broadcast_algorithms())
      for (int P : kWorlds)
        for (std::size_t n : all_counts(P))
          for (int root : roots(P, n))
            for_each_dtype([&]<typename T>() { broadcast_case<T>(a, P, n, root); });
  }
  TEST_CASE("broadcast through ProcessGroup, every algorithm") {
    pg_sweep(Collective::Broadcast,
             []<typename T>(const std::string& a, int P) { pg_broadcast<T>(a, P); });
  }
}

TEST_SUITE("scatter") {
  TEST_CASE("every scatter algorithm x P x count x dtype x root") {
    for (const auto& a : scatter_algorithms())
      for (int P : kWorlds)
        for (std::size_t n : all_counts(P))
          for (int root : roots(P, n))
            for_each_dtype([&]<typename T>() { scatter_case<T>(a, P, n, root); });
  }
  TEST_CASE("scatter through ProcessGroup (scatter_list), every algorithm") {
    pg_sweep(Collective::Scatter,
             []<typename T>(const std::string& a, int P) { pg_scatter<T>(a, P); });
  }
}

TEST_SUITE("gather") {
  TEST_CASE("every gather algorithm x P x count x dtype x root") {
    for (const auto& a : gather_algorithms())
      for (int P : kWorlds)
        for (std::size_t n : all_counts(P))
          for (int root : roots(P, n))
            for_each_dtype([&]<typename T>() { gather_case<T>(a, P, n, root); });
  }
  TEST_CASE("gather through ProcessGroup (gather_list), every algorithm") {
    pg_sweep(Collective::Gather,
             []<typename T>(const std::string& a, int P) { pg_gather<T>(a, P); });
  }
}

TEST_SUITE("reduce") {
  TEST_CASE("every reduce algorithm x P x count x dtype x op x root") {
    for (const auto& a : reduce_algorithms())
      for (int P : kWorlds)
        for (std::size_t n : all_counts(P))
          for_each_dtype([&]<typename T>() {
            for (ReduceOp op : wire_ops(dtype_of<T>(), n))
              for (int root : roots(P, n)) reduce_case<T>(a, P, n, op, root);
          });
  }
  TEST_CASE("reduce through ProcessGroup (AVG included), every algorithm") {
    pg_sweep(Collective::Reduce,
             []<typename T>(const std::string& a, int P) { pg_reduce<T>(a, P); });
  }

  TEST_CASE("the article's reduce: P=4, int64, dst 3, SUM, default algorithm") {
    // Literal values printed by the article (real PyTorch + Gloo).
    const std::vector<std::vector<std::int64_t>> expected{{16, 20}, {15, 18}, {12, 14}, {16, 20}};
    std::vector<std::vector<std::int64_t>> after(4);
    run_world(
        4,
        [&](Transport& transport) {
          ProcessGroupOptions options;
          options.timeout = kTimeout;
          ProcessGroup pg(std::shared_ptr<Transport>(&transport, [](Transport*) {}), options);
          Tensor t = Tensor::arange(2, DType::Int64) + (1 + 2 * pg.rank());
          pg.reduce(t, 3, ReduceOp::SUM);
          after[idx(pg.rank())] = values_of<std::int64_t>(t);
        },
        kTimeout);
    const Case c{"reduce", "default (article)", 4, 2, DType::Int64, ReduceOp::SUM, 3, {}};
    for (int r = 0; r < 4; ++r) check_rank(c, r, expected[idx(r)], after[idx(r)]);
  }

  TEST_CASE("the article's input on every world size and destination: closed form") {
    // Rank r holds [1+2r, 2+2r]. Both elements lie in chunk 0 for any P (16
    // bytes: segBytes 8, 2P segments, 2 per chunk), so the chain is
    // P-1 -> ... -> 1 -> 0, and a non-root rank q holds the sum over ranks
    // q..P-1: (P-q)(1+k) + (P-1+q)(P-q) for element k. Rank 0 (the owner)
    // and the destination hold the full sum P(1+k) + P(P-1).
    for (int P : kWorlds) {
      for (int dst = 0; dst < P; ++dst) {
        std::vector<std::vector<std::int64_t>> after(idx(P));
        const Case c{"reduce", "default (article input)", P, 2, DType::Int64, ReduceOp::SUM, dst,
                     {}};
        try {
          run_world(
              P,
              [&](Transport& transport) {
                ProcessGroupOptions options;
                options.timeout = kTimeout;
                ProcessGroup pg(std::shared_ptr<Transport>(&transport, [](Transport*) {}), options);
                Tensor t = Tensor::arange(2, DType::Int64) + (1 + 2 * pg.rank());
                pg.reduce(t, dst, ReduceOp::SUM);
                after[idx(pg.rank())] = values_of<std::int64_t>(t);
              },
              kTimeout);
        } catch (const std::exception& e) {
          FAIL_CHECK(c.str() << ": threw: " << std::string(e.what()));
          continue;
        }
        for (int q = 0; q < P; ++q) {
          std::vector<std::int64_t> expected(2);
          for (std::int64_t k = 0; k < 2; ++k)
            expected[idx(k)] = (q == dst || q == 0)
                                   ? P * (1 + k) + std::int64_t{P} * (P - 1)
                                   : (P - q) * (1 + k) + std::int64_t{P - 1 + q} * (P - q);
          check_rank(c, q, expected, after[idx(q)]);
        }
      }
    }
  }

  TEST_CASE("reference: the simulated Gloo loop equals the article's chain summary when spr == 2") {
    // Every n*e <= 2P MiB gives spr == 2; check a spread of such cases.
    for (int P : kWorlds)
      for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{997},
                            std::size_t{4096 + 5}})
        for_each_dtype([&]<typename T>() {
          for (ReduceOp op : wire_ops(dtype_of<T>(), n))
            for (int root : roots(P, n)) {
              const auto in = ref::op_inputs<T>(op, P, n);
              const auto sim = ref::gloo_ring_reduce(op, in, root);
              const auto chain = ref::gloo_ring_chain(op, in, root);
              const Case c{
                  "reference gloo_ring_reduce vs chain", "", P, n, dtype_of<T>(), op, root, {}};
              REQUIRE(ref::gloo_ring_layout(n, sizeof(T), P).segments_per_rank == 2);
              for (int r = 0; r < P; ++r) check_rank(c, r, chain[idx(r)], sim[idx(r)]);
            }
        });
  }

  TEST_CASE(
      "reference: with segBytes capped at 1 MiB (spr >= 3) rank c-1 also gets the full result") {
    // 1<<20 int64 = 8 MiB: P = 2 gives spr 4, P = 3 gives spr 3. The loop's
    // iterations past the chain's last hop send the first spr-2 segments of
    // chunk c from its owner c to c-1, which combines them into its raw value.
    for (int P : {2, 3}) {
      const std::size_t n = kBig;
      for (ReduceOp op : {ReduceOp::SUM, ReduceOp::MIN}) {
        for (int root = 0; root < P; ++root) {
          const auto in = ref::op_inputs<std::int64_t>(op, P, n);
          const auto full = ref::reduce_over_ranks(op, in);
          auto expected = ref::gloo_ring_chain(op, in, root);
          const auto l = ref::gloo_ring_layout(n, 8, P);
          REQUIRE(l.seg_bytes == std::size_t{1} << 20);
          REQUIRE(l.segments_per_rank >= 3);
          const std::size_t seg_elems = l.seg_bytes / 8;
          for (int c = 0; c < P; ++c) {
            const int prev = (c - 1 + P) % P;
            if (prev == root) continue;
            const std::size_t first = idx(c) * l.segments_per_rank * seg_elems;
            for (std::size_t i = first; i < first + (l.segments_per_rank - 2) * seg_elems && i < n;
                 ++i)
              expected[idx(prev)][i] = ref::apply(op, in[idx(prev)][i], full[i]);
          }
          const auto sim = ref::gloo_ring_reduce(op, in, root);
          const Case c{
              "reference gloo_ring_reduce (capped segments)", "", P, n, DType::Int64, op, root, {}};
          for (int r = 0; r < P; ++r) check_rank(c, r, expected[idx(r)], sim[idx(r)]);
        }
      }
    }
  }

  TEST_CASE("reference: Gloo ring layout and chains") {
    // The article's case through the reference itself.
    const ref::PerRank<std::int64_t> in{{1, 2}, {3, 4}, {5, 6}, {7, 8}};
    const auto out = ref::gloo_ring_reduce(ReduceOp::SUM, in, 3);
    const ref::PerRank<std::int64_t> expected{{16, 20}, {15, 18}, {12, 14}, {16, 20}};
    const Case c{"reference gloo_ring_reduce", "", 4, 2, DType::Int64, ReduceOp::SUM, 3, {}};
    for (int r = 0; r < 4; ++r) check_rank(c, r, expected[idx(r)], out[idx(r)]);
    // Layout numbers worked by hand: n = 997 int32 (3988 bytes), P = 3:
    // segBytes = roundUp(min(ceil(3988/6) = 665, 1 MiB), 4) = 668,
    // numSegments = roundUp(max(ceil(3988/668) = 6, 6), 3) = 6, 2 per chunk.
    auto l = ref::gloo_ring_layout(997, 4, 3);
    CHECK(l.seg_bytes == 668);
    CHECK(l.num_segments == 6);
    CHECK(l.segments_per_rank == 2);
    CHECK(ref::gloo_ring_chunk(l, 333, 4) == 0);  // byte 1332 -> segment 1
    CHECK(ref::gloo_ring_chunk(l, 334, 4) == 1);  // byte 1336 -> segment 2
    // 1<<20 float64 on 8 ranks: 8 MiB; segBytes = min(512 KiB, 1 MiB);
    // 16 segments, 2 per chunk.
    l = ref::gloo_ring_layout(std::size_t{1} << 20, 8, 8);
    CHECK(l.seg_bytes == 512 * 1024);
    CHECK(l.num_segments == 16);
    // 1<<20 int64 on 2 ranks: ceil(8 MiB / 4) = 2 MiB, capped at 1 MiB:
    // 8 segments, 4 per chunk.
    l = ref::gloo_ring_layout(std::size_t{1} << 20, 8, 2);
    CHECK(l.seg_bytes == 1024 * 1024);
    CHECK(l.num_segments == 8);
    CHECK(l.segments_per_rank == 4);
  }
}

TEST_SUITE("all_reduce") {
  TEST_CASE("every all_reduce algorithm x P x count x dtype x op") {
    for (const auto& a : all_reduce_algorithms())
      for (int P : kWorlds)
        for (std::size_t n : all_counts(P))
          for_each_dtype([&]<typename T>() {
            for (ReduceOp op : wire_ops(dtype_of<T>(), n)) all_reduce_case<T>(a, P, n, op);
          });
  }
  TEST_CASE("all_reduce through ProcessGroup (AVG included), every algorithm") {
    pg_sweep(Collective::AllReduce,
             []<typename T>(const std::string& a, int P) { pg_all_reduce<T>(a, P); });
  }

  TEST_CASE("reference inputs have the closed forms") {
    for (int P : kWorlds) {
      const std::size_t n = 2 * ref::kSumPeriod + 3;
      const auto sum =
          ref::reduce_over_ranks(ReduceOp::SUM, ref::op_inputs<std::int64_t>(ReduceOp::SUM, P, n));
      const auto prod = ref::reduce_over_ranks(
          ReduceOp::PRODUCT, ref::op_inputs<std::int64_t>(ReduceOp::PRODUCT, P, n));
      std::vector<std::int64_t> closed_sum(n), closed_prod(n);
      for (std::size_t i = 0; i < n; ++i) {
        closed_sum[i] = ref::closed_sum(P, i);
        closed_prod[i] = ref::closed_product(P, i);
      }
      const Case c{"reference closed forms", "", P, n, DType::Int64, {}, -1, {}};
      check_rank(c, 0, closed_sum, sum, "SUM");
      check_rank(c, 0, closed_prod, prod, "PRODUCT");
    }
  }

  TEST_CASE("all_reduce SUM through ProcessGroup equals the closed form P(P+1)/2 + P*(i%1021)") {
    // Checked against the formula, not the reference loops.
    for (const std::string& algorithm : pg_algorithms(Collective::AllReduce)) {
      for (int P : kWorlds) {
        for_each_dtype([&]<typename T>() {
          const std::size_t n = 4099;
          std::vector<std::vector<std::vector<T>>> results;
          if (!run_groups<T>(pg_label(Collective::AllReduce, algorithm) + " closed form",
                             Collective::AllReduce, algorithm, P, results,
                             [&](ProcessGroup& pg, auto& out, std::string&) {
                               Tensor t =
                                   tensor_of(ref::op_inputs_of<T>(ReduceOp::SUM, pg.rank(), n));
                               pg.all_reduce(t, ReduceOp::SUM);
                               out.push_back(values_of<T>(t));
                             }))
            return;
          std::vector<T> closed(n);
          for (std::size_t i = 0; i < n; ++i) closed[i] = static_cast<T>(ref::closed_sum(P, i));
          const Case c{pg_label(Collective::AllReduce, algorithm),
                       "closed form",
                       P,
                       n,
                       dtype_of<T>(),
                       ReduceOp::SUM,
                       -1,
                       {}};
          for (int r = 0; r < P; ++r) check_rank(c, r, closed, results[idx(r)][0]);
        });
      }
    }
  }

  TEST_CASE("all_reduce_async through ProcessGroup, several in flight") {
    for (int P : {1, 3, 4}) {
      std::vector<std::vector<std::vector<float>>> results;
      if (!run_groups<float>(
              "pg.all_reduce_async", Collective::AllReduce, "", P, results,
              [&](ProcessGroup& pg, auto& out, std::string&) {
                std::vector<Tensor> ts;
                for (ReduceOp op : {ReduceOp::SUM, ReduceOp::MAX, ReduceOp::AVG})
                  ts.push_back(tensor_of(ref::op_inputs_of<float>(wire_op(op), pg.rank(), 997)));
                std::vector<Work> works;
                works.push_back(pg.all_reduce_async(ts[0], ReduceOp::SUM));
                works.push_back(pg.all_reduce_async(ts[1], ReduceOp::MAX));
                works.push_back(pg.all_reduce_async(ts[2], ReduceOp::AVG));
                for (auto& w : works) w.wait(kTimeout);
                for (auto& t : ts) out.push_back(values_of<float>(t));
              }))
        continue;
      int k = 0;
      for (ReduceOp op : {ReduceOp::SUM, ReduceOp::MAX, ReduceOp::AVG}) {
        const Case c{"pg.all_reduce_async", "default", P, 997, DType::Float32, op, -1, {}};
        const auto expected = user_reduction(op, ref::op_inputs<float>(wire_op(op), P, 997));
        for (int r = 0; r < P; ++r) check_rank(c, r, expected, results[idx(r)][idx(k)]);
        ++k;
      }
    }
  }
}

TEST_SUITE("all_gather") {
  TEST_CASE("every all_gather algorithm x P x count x dtype x block layout") {
    for (const auto& a : all_gather_algorithms())
      for (int P : kWorlds)
        for (std::size_t n : all_counts(P))
          for (const Layout& layout : block_layouts(n, P))
            for_each_dtype([&]<typename T>() { all_gather_case<T>(a, P, n, layout); });
  }
  TEST_CASE("all_gather through ProcessGroup (tensor_list), every algorithm") {
    pg_sweep(Collective::AllGather,
             []<typename T>(const std::string& a, int P) { pg_all_gather<T>(a, P); });
  }
}

TEST_SUITE("reduce_scatter") {
  TEST_CASE("every reduce_scatter algorithm x P x count x dtype x op x block layout") {
    for (const auto& a : reduce_scatter_algorithms())
      for (int P : kWorlds)
        for (std::size_t n : all_counts(P))
          for (const Layout& layout : block_layouts(n, P))
            for_each_dtype([&]<typename T>() {
              for (ReduceOp op : wire_ops(dtype_of<T>(), n))
                reduce_scatter_case<T>(a, P, n, op, layout);
            });
  }
  TEST_CASE("reduce_scatter through ProcessGroup (input_list, AVG included), every algorithm") {
    pg_sweep(Collective::ReduceScatter,
             []<typename T>(const std::string& a, int P) { pg_reduce_scatter<T>(a, P); });
  }
}

TEST_SUITE("all_to_all") {
  TEST_CASE("every all_to_all algorithm x P x count x dtype x block layout") {
    for (const auto& a : all_to_all_algorithms())
      for (int P : kWorlds)
        for (std::size_t n : all_counts(P))
          for (const char* layout : {"even", "holes"})
            for_each_dtype([&]<typename T>() { all_to_all_case<T>(a, P, n, layout); });
  }
  TEST_CASE("all_to_all and all_to_all_single (uneven splits) through ProcessGroup") {
    pg_sweep(Collective::AllToAll,
             []<typename T>(const std::string& a, int P) { pg_all_to_all<T>(a, P); });
  }
}

TEST_SUITE("barrier") {
  // Rank r arrives r ms late, bumps a shared counter, and passes the barrier;
  // after barrier k every rank must see at least (k+1)*P arrivals.
  TEST_CASE("every barrier algorithm holds every rank until all have arrived") {
    for (const auto& a : barrier_algorithms()) {
      for (int P : kWorlds) {
        constexpr int kRounds = 5;
        std::atomic<int> arrived{0};
        std::mutex mutex;
        std::vector<std::string> early;
        const Case c{"barrier", std::string(a.name), P, 0, DType::Float32, {}, -1, {}};
        const std::uint64_t seq = next_sequence();
        try {
          run_world(
              P,
              [&](Transport& transport) {
                for (int k = 0; k < kRounds; ++k) {
                  std::this_thread::sleep_for(
                      std::chrono::milliseconds((transport.rank() + k) % P));
                  arrived.fetch_add(1);
                  Comm comm(transport, seq + static_cast<std::uint64_t>(k));
                  a.run(comm);
                  const int seen = arrived.load();
                  if (seen < (k + 1) * P) {
                    std::lock_guard lock(mutex);
                    early.push_back("rank " + std::to_string(transport.rank()) + " left barrier " +
                                    std::to_string(k) + " after " + std::to_string(seen) +
                                    " arrivals");
                  }
                }
              },
              kTimeout);
        } catch (const std::exception& e) {
          FAIL_CHECK(c.str() << ": threw: " << std::string(e.what()));
          continue;
        }
        std::string msg;
        for (auto& e : early) msg += "\n  " + e;
        CHECK_MESSAGE(early.empty(), c.str() << ": a rank left before everyone arrived:" << msg);
      }
    }
  }
  TEST_CASE("ProcessGroup barrier and barrier_async, every algorithm") {
    for (const std::string& algorithm : pg_algorithms(Collective::Barrier)) {
      for (int P : kWorlds) {
        std::atomic<int> arrived{0};
        std::atomic<int> early{0};
        std::vector<std::vector<std::vector<int>>> unused;
        run_groups<int>(
            pg_label(Collective::Barrier, algorithm), Collective::Barrier, algorithm, P, unused,
            [&](ProcessGroup& pg, auto&, std::string& current) {
              for (int k = 0; k < 4; ++k) {
                current = "round " + std::to_string(k);
                std::this_thread::sleep_for(std::chrono::milliseconds((pg.rank() * 3 + k) % P));
                arrived.fetch_add(1);
                if (k % 2 == 0)
                  pg.barrier();
                else
                  pg.barrier_async().wait(kTimeout);
                if (arrived.load() < (k + 1) * P) early.fetch_add(1);
              }
            });
        CHECK_MESSAGE(early.load() == 0, pg_label(Collective::Barrier, algorithm)
                                             << " P=" << P << ": " << early.load()
                                             << " rank(s) left a barrier before everyone arrived");
      }
    }
  }
}
