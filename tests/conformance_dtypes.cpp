// Part of the transport conformance suite: every algorithm of every
// collective in every dtype (ops/dtype.hpp's table) and, for the reducing
// ones, with every op that applies to it, on the binding's transport, at 2,
// 3 and 4 ranks and 1, 7 and 33 elements (small: conformance_algorithms.cpp
// runs the sizes).
//
// Inputs are small numbers that every dtype holds exactly, chosen so that
// every sum, product, minimum and average is exact whatever order an
// algorithm combines the ranks in: the expected values are worked out here in
// double, by hand, independent of ops/reduce_op.cpp. The floating dtypes'
// MIN and MAX put a nan on one rank in some elements (rank j % P for element
// j, where j % 5 == 1): torch.maximum and torch.minimum propagate it, and so
// must every algorithm, whichever rank holds it.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/tensor.hpp"
#include "primitives/algorithms.hpp"
#include "primitives/collectives.hpp"
#include "transport_conformance.hpp"

using namespace ringlab;
using namespace ringlab::conformance;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kSizes[] = {1, 7, 33};
constexpr int kWorlds[] = {2, 3, 4};
const double kNan = std::numeric_limits<double>::quiet_NaN();

// What one element is: the dtype's kind decides which numbers it can hold.
struct Values {
  DType dtype;
  int P;
  bool bools() const { return dtype == DType::Bool; }
  bool unsigned_ints() const { return dtype == DType::UInt8; }

  // Collectives that only move data: distinct where the dtype allows
  // (bool: alternating), all within [-50, 50] (uint8: [0, 100]).
  double moved(int r, std::size_t j) const {
    const int v = static_cast<int>((static_cast<std::size_t>(r) * 16 + j) % 101);
    if (bools()) return v % 2;
    return unsigned_ints() ? v : v - 50;
  }

  // A reduction's input on rank r, element j.
  double input(ReduceOp op, int r, std::size_t j) const {
    const auto ur = static_cast<std::size_t>(r);
    const int small = static_cast<int>((ur * 7 + j * 3) % 11);  // 0..10
    switch (op) {
      case ReduceOp::PRODUCT:  // 1, 2 and -1 (3 unsigned): at most 3^4 = 81
        if (bools()) return (ur + j) % 4 != 0;
        return std::vector<double>{1, 2, unsigned_ints() ? 3.0 : -1.0}[(ur + j) % 3];
      case ReduceOp::BAND:
      case ReduceOp::BOR:
      case ReduceOp::BXOR:
        if (bools()) return (ur * j) % 2;
        return static_cast<double>((ur * 37 + j * 11) & 0x7F);
      case ReduceOp::MIN:
      case ReduceOp::MAX:
        if (is_floating(dtype) && j % 5 == 1 && static_cast<int>(j % static_cast<std::size_t>(P)) == r)
          return kNan;
        [[fallthrough]];
      default:  // SUM, AVG: sums of at most 4 values within [-20, 40]
        if (bools()) return small % 3 == 0;
        return unsigned_ints() ? small : small - 5;
    }
  }

  // The reduction over ranks 0..P-1 of element j, as torch computes it.
  double reduced(ReduceOp op, std::size_t j) const {
    double acc = input(op, 0, j);
    for (int r = 1; r < P; ++r) {
      const double x = input(op, r, j);
      const auto a = static_cast<std::int64_t>(std::isnan(acc) ? 0 : acc);
      const auto b = static_cast<std::int64_t>(std::isnan(x) ? 0 : x);
      switch (op) {
        case ReduceOp::SUM:
        case ReduceOp::AVG: acc = bools() ? (acc != 0 || x != 0) : acc + x; break;
        case ReduceOp::PRODUCT: acc = bools() ? (acc != 0 && x != 0) : acc * x; break;
        case ReduceOp::MIN: acc = std::isnan(acc) || std::isnan(x) ? kNan : std::min(acc, x); break;
        case ReduceOp::MAX: acc = std::isnan(acc) || std::isnan(x) ? kNan : std::max(acc, x); break;
        case ReduceOp::BAND: acc = static_cast<double>(a & b); break;
        case ReduceOp::BOR: acc = static_cast<double>(a | b); break;
        case ReduceOp::BXOR: acc = static_cast<double>(a ^ b); break;
      }
    }
    if (op != ReduceOp::AVG) return acc;
    // AVG: the exact sum divided by P, rounded once to the dtype (float16's
    // and bfloat16's division in float rounds to the same value).
    return visit_dtype(dtype, [&]<typename T>() {
      return static_cast<double>(static_cast<T>(acc / P));
    });
  }
};

Tensor filled(DType dtype, std::size_t n, const std::function<double(std::size_t)>& value) {
  Tensor t(dtype, {static_cast<std::int64_t>(n)});
  visit_dtype(dtype, [&]<typename T>() {
    for (std::size_t i = 0; i < n; ++i) t.data<T>()[i] = static_cast<T>(value(i));
  });
  return t;
}

// The first element where got differs from expected (nan equal to nan), as
// text; "" when all agree.
std::string mismatch(const Tensor& got, const std::vector<double>& expected) {
  if (got.numel() != expected.size())
    return std::to_string(got.numel()) + " elements, expected " + std::to_string(expected.size());
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double g = got.item_as_double(i), e = expected[i];
    const bool same = std::isnan(e) ? std::isnan(g) : g == e;
    if (!same && wrong++ == 0) first = i;
  }
  if (wrong == 0) return "";
  return std::to_string(wrong) + " of " + std::to_string(expected.size()) + " elements wrong; [" +
         std::to_string(first) + "] is " + std::to_string(got.item_as_double(first)) +
         ", expected " + std::to_string(expected[first]);
}

struct CaseSpec {
  const CollectiveInfo& row;
  std::string algorithm;
  DType dtype;
  ReduceOp op;
  std::size_t n;
};

// Rank r's buffer for spec, filled as its `input` says.
Tensor initial(const CaseSpec& c, const BufferSpec& spec, const Values& v, int r, bool is_root) {
  const std::size_t count = spec.count(v.P, c.n, is_root);
  const auto n = c.n;
  auto value = [&](std::size_t i) -> double {
    switch (spec.input) {
      case Input::None: return 0;
      case Input::OwnBlock: return i / n == static_cast<std::size_t>(r) ? v.moved(r, i % n) : 0;
      case Input::PerRank: return v.moved(static_cast<int>(i / n), i % n);
      case Input::Whole: break;
    }
    return c.row.reduces ? v.input(c.op, r, i) : v.moved(r, i);
  };
  return filled(c.dtype, count, value);
}

// What rank r's two buffers hold afterwards (nothing where undefined).
struct Expected {
  std::optional<std::vector<double>> first, second;
};

Expected expected_for(const CaseSpec& c, const Values& v, int r, int root) {
  const std::size_t n = c.n, P = static_cast<std::size_t>(v.P);
  auto whole = [&](auto of) {
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = of(i);
    return out;
  };
  auto blocks = [&](auto of) {
    std::vector<double> out(P * n);
    for (std::size_t i = 0; i < P * n; ++i) out[i] = of(static_cast<int>(i / n), i % n);
    return out;
  };
  auto moved = [&](int s, std::size_t i) { return v.moved(s, i); };
  Expected e;
  switch (c.row.id) {
    case Collective::Broadcast: e.first = whole([&](std::size_t i) { return v.moved(root, i); }); break;
    case Collective::Scatter: e.second = whole([&](std::size_t i) { return v.moved(r, i); }); break;
    case Collective::Gather: if (r == root) e.second = blocks(moved); break;
    case Collective::AllGather: e.first = blocks(moved); break;
    case Collective::Reduce:
    case Collective::AllReduce:
      if (c.row.id == Collective::AllReduce || r == root)
        e.first = whole([&](std::size_t i) { return v.reduced(c.op, i); });
      break;
    case Collective::ReduceScatter:
      e.first = whole([&](std::size_t i) { return v.reduced(c.op, static_cast<std::size_t>(r) * n + i); });
      break;
    case Collective::AllToAll:
      e.second = blocks([&](int s, std::size_t i) { return v.moved(s, static_cast<std::size_t>(r) * n + i); });
      break;
    case Collective::Barrier: break;
  }
  return e;
}

Tensor read_back(Memory& memory, const Buffer& buffer, DType dtype) {
  Tensor t(dtype, {static_cast<std::int64_t>(buffer.size / element_size(dtype))});
  const auto bytes = memory.read_bytes(buffer);
  std::memcpy(t.bytes().data(), bytes.data(), bytes.size());
  return t;
}

void run_case(const Binding& b, Transport& t, const CaseSpec& c, std::uint64_t sequence) {
  const Values v{c.dtype, t.size()};
  const int r = t.rank(), root = c.row.rooted ? v.P - 1 : 0;
  const bool is_root = r == root;
  const std::string what = std::string(c.row.name) + "[" + c.algorithm + "] " +
                           std::string(dtype_name(c.dtype)) +
                           (c.row.reduces ? " " + std::string(op_name(c.op)) : "") +
                           " P=" + std::to_string(v.P) + " n=" + std::to_string(c.n) + " rank " +
                           std::to_string(r);
  Memory memory(b, t);
  const Buffer first = memory.holding_bytes(initial(c, c.row.first, v, r, is_root).bytes());
  const Buffer second = memory.holding_bytes(initial(c, c.row.second, v, r, is_root).bytes());
  const auto blocks = equal_blocks(c.n, v.P);
  const std::size_t esize = element_size(c.dtype);
  CollectiveCall call;
  call.first = {first.storage.get(), first.size / esize, c.dtype};
  call.second = {second.storage.get(), second.size / esize, c.dtype};
  if (c.row.first.extent == Extent::Blocks || c.row.first.extent == Extent::BlocksOnRoot)
    call.blocks = blocks;
  if (c.row.second.extent == Extent::Blocks) call.second_blocks = blocks;
  call.root = root;
  call.op = c.op;
  try {
    Comm comm(t, sequence);
    c.row.run(comm, c.algorithm, call);
  } catch (const std::exception& error) {
    FAIL_CHECK(what << " threw: " << std::string(error.what()));
    throw;
  }
  const Expected e = expected_for(c, v, r, root);
  if (e.first) {
    Tensor got = read_back(memory, first, c.dtype);
    if (c.row.id == Collective::ReduceScatter) {  // only block r is defined
      Tensor block(c.dtype, {static_cast<std::int64_t>(c.n)});
      std::memcpy(block.bytes().data(), got.bytes().data() + static_cast<std::size_t>(r) * c.n * esize,
                  c.n * esize);
      got = block;
    }
    const std::string wrong = mismatch(got, *e.first);
    CHECK_MESSAGE(wrong.empty(), what << ": " << c.row.first.name << ": " << wrong);
  }
  if (e.second) {
    const std::string wrong = mismatch(read_back(memory, second, c.dtype), *e.second);
    CHECK_MESSAGE(wrong.empty(), what << ": " << c.row.second.name << ": " << wrong);
  }
}

// Every case, one after another, on one rank of one world.
void run_all(const Binding& b, Transport& t) {
  std::uint64_t sequence = 1;
  for (const CollectiveInfo& row : collective_table()) {
    if (row.id == Collective::Barrier) continue;
    for (const std::string& name : algorithm_names(row.id))
      for (DType dtype : kAllDTypes)
        for (ReduceOp op : kAllReduceOps) {
          if (row.reduces ? !op_applies(op, dtype) : op != ReduceOp::SUM) continue;
          for (std::size_t n : kSizes) run_case(b, t, {row, name, dtype, op, n}, sequence++);
        }
  }
}

}  // namespace

TEST_CASE(
    "every algorithm of every collective in every dtype, with every op that applies, gives "
    "torch's exact result; nan survives MIN and MAX whichever rank holds it") {
  for (const Binding& b : bindings()) {
    for (int P : kWorlds) {
      if (P > b.max_ranks) {
        MESSAGE(b.name << ": world " << P << " skipped, it can start " << b.max_ranks << " ranks");
        continue;
      }
      CAPTURE(b.name);
      CAPTURE(P);
      const auto outcomes = b.run(P, 20s, [&b](Transport& t) { run_all(b, t); });
      for (std::size_t rank = 0; rank < outcomes.size(); ++rank)
        CHECK_MESSAGE(outcomes[rank].kind == RankOutcome::Kind::Finished,
                      b.name << " P=" << P << " rank " << rank << ": " << outcomes[rank].what);
    }
  }
}
