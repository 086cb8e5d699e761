// Sequential reference results for every collective, written as plain loops
// over per-rank input vectors, independent of the algorithms in primitives/
// (nothing here calls Comm, a transport or reduce_host), and input generators
// whose reductions have a closed form.
//
// Every generated value is a small integer, so every op is exact in every
// dtype and the order in which an algorithm combines ranks cannot matter (a
// float sum of small integers is exact in any order).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "primitives/comm.hpp"  // Chunk
#include "ops/dtype.hpp"
#include "ops/reduce_op.hpp"

namespace ringlab::ref {

template <typename T>
using PerRank = std::vector<std::vector<T>>;

// ---- input generators --------------------------------------------------------

// Period of the element term of the SUM input. Prime and much larger than 7 so
// that a block landing at a shifted offset changes the values it carries.
inline constexpr std::size_t kSumPeriod = 1021;

// Rank r's element i for a reduction with wire op `op` (AVG uses SUM's input).
//   SUM/AVG:        (r+1) + (i % 1021)                         <= 8 + 1020
//   PRODUCT:        2 if (i + r) % 5 == 0 else 1   (at most 2 twos in any 8 ranks)
//   MIN/MAX:        ((i*7 + r*13) % 23) - 11                   in [-11, 11]
//   BAND/BOR/BXOR:  (i*2654435761 + r*40503) & 0xFFFF          16-bit patterns
template <typename T>
T op_input(ReduceOp op, int r, std::size_t i) {
  const auto ur = static_cast<std::uint64_t>(r);
  const auto ui = static_cast<std::uint64_t>(i);
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      return static_cast<T>((ur + 1) + ui % kSumPeriod);
    case ReduceOp::PRODUCT:
      return static_cast<T>((ui + ur) % 5 == 0 ? 2 : 1);
    case ReduceOp::MIN:
    case ReduceOp::MAX:
      return static_cast<T>(static_cast<std::int64_t>((ui * 7 + ur * 13) % 23) - 11);
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR:
      return static_cast<T>((ui * 2654435761ull + ur * 40503ull) & 0xFFFFull);
  }
  throw std::invalid_argument("op_input: unknown op");
}

// Values for collectives that only move data: unique per (rank, index) for
// P <= 8 and index < 2^21, all below 2^24 so float32 holds them exactly, and
// never 0 or negative (so they differ from kSentinel and from zero-filled memory).
template <typename T>
T move_value(int r, std::size_t i) {
  return static_cast<T>(static_cast<std::int64_t>(r) * (std::int64_t{1} << 21) +
                        static_cast<std::int64_t>(i % (std::size_t{1} << 21)) + 1);
}

// What output memory holds before a collective writes it.
template <typename T>
constexpr T sentinel() {
  return static_cast<T>(-99);
}

template <typename T>
std::vector<T> op_inputs_of(ReduceOp op, int r, std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = op_input<T>(op, r, i);
  return v;
}
template <typename T>
PerRank<T> op_inputs(ReduceOp op, int P, std::size_t n) {
  PerRank<T> in;
  for (int r = 0; r < P; ++r) in.push_back(op_inputs_of<T>(op, r, n));
  return in;
}
template <typename T>
std::vector<T> move_values_of(int r, std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = move_value<T>(r, i);
  return v;
}

// ---- the ops -------------------------------------------------------------------

// a op b, written out here rather than taken from reduce_op.cpp.
template <typename T>
T apply(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      return static_cast<T>(a + b);
    case ReduceOp::PRODUCT:
      return static_cast<T>(a * b);
    case ReduceOp::MIN:
      return b < a ? b : a;
    case ReduceOp::MAX:
      return a < b ? b : a;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case ReduceOp::BAND:
        return static_cast<T>(a & b);
      case ReduceOp::BOR:
        return static_cast<T>(a | b);
      case ReduceOp::BXOR:
        return static_cast<T>(a ^ b);
      default:
        break;
    }
  }
  throw std::invalid_argument("ref::apply: op does not apply to this type");
}

// ---- closed forms of the generated inputs' reductions over P ranks -------------

// SUM: sum_{r<P} (r+1) + P*(i % 1021) = P(P+1)/2 + P*(i % 1021).
inline std::int64_t closed_sum(int P, std::size_t i) {
  return std::int64_t{P} * (P + 1) / 2 +
         std::int64_t{P} * static_cast<std::int64_t>(i % kSumPeriod);
}
// AVG = SUM / P = (P+1)/2 + (i % 1021), a half-integer (exact in float).
inline double closed_avg(int P, std::size_t i) {
  return (P + 1) / 2.0 + static_cast<double>(i % kSumPeriod);
}
// PRODUCT: 2^(number of r < P with (i + r) % 5 == 0).
inline std::int64_t closed_product(int P, std::size_t i) {
  // r = (5 - i % 5) % 5 is the first such rank, then every 5th.
  const int first = static_cast<int>((5 - i % 5) % 5);
  const int twos = first >= P ? 0 : 1 + (P - 1 - first) / 5;
  return std::int64_t{1} << twos;
}

// ---- references ------------------------------------------------------------------

// The reduction over ranks 0..P-1, element-wise.
template <typename T>
std::vector<T> reduce_over_ranks(ReduceOp op, const PerRank<T>& in) {
  std::vector<T> out = in.at(0);
  for (std::size_t r = 1; r < in.size(); ++r)
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = apply(op, out[i], in[r][i]);
  return out;
}

// broadcast: everybody ends with root's buffer.
template <typename T>
std::vector<T> broadcast(const PerRank<T>& in, int root) {
  return in.at(static_cast<std::size_t>(root));
}

// scatter: rank r receives block r of the root's buffer (blocks of `block`).
template <typename T>
std::vector<T> scatter(const std::vector<T>& root_send, std::size_t block, int r) {
  auto first = root_send.begin() + static_cast<std::ptrdiff_t>(block * static_cast<std::size_t>(r));
  return {first, first + static_cast<std::ptrdiff_t>(block)};
}

// gather: the root receives every rank's block, in rank order.
template <typename T>
std::vector<T> gather(const PerRank<T>& in) {
  std::vector<T> out;
  for (const auto& v : in) out.insert(out.end(), v.begin(), v.end());
  return out;
}

// all_gather with blocks: rank r contributes in[r][blocks[r]]; everybody ends
// with the whole buffer.
template <typename T>
std::vector<T> all_gather(const PerRank<T>& in, const std::vector<Chunk>& blocks) {
  std::vector<T> out(in.at(0).size(), sentinel<T>());
  for (std::size_t r = 0; r < blocks.size(); ++r)
    for (std::size_t i = blocks[r].offset; i < blocks[r].end(); ++i) out[i] = in[r][i];
  return out;
}

// reduce_scatter: rank r's block of the element-wise reduction.
template <typename T>
std::vector<T> reduce_scatter(const std::vector<T>& reduced, const std::vector<Chunk>& blocks,
                              int r) {
  const Chunk b = blocks.at(static_cast<std::size_t>(r));
  return {reduced.begin() + static_cast<std::ptrdiff_t>(b.offset),
          reduced.begin() + static_cast<std::ptrdiff_t>(b.end())};
}

// all_to_all: rank d's receive buffer. send[s] is rank s's send buffer,
// send_blocks[s][d] the part of it for d, recv_blocks[d][s] where it lands on d.
template <typename T>
std::vector<T> all_to_all(const PerRank<T>& send,
                          const std::vector<std::vector<Chunk>>& send_blocks,
                          const std::vector<std::vector<Chunk>>& recv_blocks, int d) {
  const auto ud = static_cast<std::size_t>(d);
  std::size_t total = 0;
  for (const Chunk& c : recv_blocks[ud]) total = std::max(total, c.end());
  std::vector<T> out(total, sentinel<T>());
  for (std::size_t s = 0; s < send.size(); ++s) {
    const Chunk from = send_blocks[s][ud];
    const Chunk to = recv_blocks[ud][s];
    if (from.count != to.count) throw std::logic_error("ref::all_to_all: block sizes disagree");
    for (std::size_t j = 0; j < from.count; ++j) out[to.offset + j] = send[s][from.offset + j];
  }
  return out;
}

// ---- Gloo's ring reduce: what every rank holds afterwards --------------------------
//
// From the description in shared/reference/article-outputs.md (n elements of
// e bytes, P ranks):
//   segBytes    = roundUp(min(ceil(n*e / (2P)), 1 MiB), e)
//   numSegments = roundUp(max(ceil(n*e / segBytes), 2P), P),  spr = numSegments / P
//   chunk c = segments [c*spr, (c+1)*spr), owned by rank c; segments past the
//   end of the data are empty.
//   Ring: for i = 0 .. numSegments-3, rank r sends segment ((r+1)*spr + i) mod N
//   to rank r-1 and receives segment ((r+2)*spr + i) mod N from rank r+1; what
//   arrives at iteration i is combined into the local buffer at iteration i+2
//   (before that segment is forwarded). Then every non-root rank sends its own
//   chunk to the root.
//
// gloo_ring_reduce() simulates exactly that loop. Its summary in the article
// notes -- "a segment of chunk c starts raw at rank c-1 and travels
// c-1 -> c-2 -> ... -> c", so non-root rank q holds op over ranks c-1, ..., q
// -- is gloo_ring_chain() below. The two agree whenever spr == 2, which is
// every case where segBytes is not capped at 1 MiB (n*e <= 2P MiB). With the
// cap, spr >= 3 and the loop runs (P-1)*spr .. N-3 past the last chain hop: in
// those spr-2 extra iterations rank c sends the first spr-2 segments of its
// (fully reduced) chunk to c-1, which combines them into its raw value, so
// rank c-1 ends with x[c-1] op FULL there. Both facts are checked in the
// "reference" test cases.

struct GlooRingLayout {
  std::size_t seg_bytes = 0;
  std::size_t num_segments = 0;
  std::size_t segments_per_rank = 0;
};

inline std::size_t round_up(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }
inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

inline GlooRingLayout gloo_ring_layout(std::size_t n, std::size_t e, int P) {
  const std::size_t p = static_cast<std::size_t>(P);
  const std::size_t bytes = n * e;
  GlooRingLayout l;
  l.seg_bytes = round_up(std::min<std::size_t>(ceil_div(bytes, 2 * p), std::size_t{1} << 20), e);
  l.num_segments = round_up(std::max(ceil_div(bytes, l.seg_bytes), 2 * p), p);
  l.segments_per_rank = l.num_segments / p;
  return l;
}

// The chunk (owner rank) of element i.
inline int gloo_ring_chunk(const GlooRingLayout& l, std::size_t i, std::size_t e) {
  return static_cast<int>((i * e / l.seg_bytes) / l.segments_per_rank);
}

// Every rank's buffer after reduce_gloo_ring(op, root) on inputs in: the ring
// loop above, simulated message by message.
template <typename T>
PerRank<T> gloo_ring_reduce(ReduceOp op, const PerRank<T>& in, int root) {
  const int P = static_cast<int>(in.size());
  const std::size_t n = in.at(0).size();
  PerRank<T> buf = in;
  if (n == 0 || P == 1) return buf;
  const GlooRingLayout l = gloo_ring_layout(n, sizeof(T), P);
  const std::size_t N = l.num_segments, spr = l.segments_per_rank;
  const std::size_t seg_elems = l.seg_bytes / sizeof(T);
  auto first_of = [&](std::size_t s) { return std::min(s * seg_elems, n); };
  auto end_of = [&](std::size_t s) { return std::min((s + 1) * seg_elems, n); };
  auto up = [&](int r) { return static_cast<std::size_t>(r); };

  struct Message {
    std::size_t segment = 0;
    std::vector<T> data;
  };
  // in_flight[t % 3][r]: what rank r received at iteration t (sent by r+1).
  std::vector<std::vector<Message>> in_flight(3, std::vector<Message>(up(P)));
  for (std::size_t t = 0; t < N; ++t) {
    if (t >= 2) {  // combine what arrived two iterations ago
      for (int r = 0; r < P; ++r) {
        const Message& m = in_flight[(t - 2) % 3][up(r)];
        const std::size_t first = first_of(m.segment);
        for (std::size_t k = 0; k < m.data.size(); ++k)
          buf[up(r)][first + k] = apply(op, buf[up(r)][first + k], m.data[k]);
      }
    }
    if (t + 2 < N) {  // rank r sends to r-1
      for (int r = 0; r < P; ++r) {
        const std::size_t segment = ((up(r) + 1) * spr + t) % N;
        const int to = (r - 1 + P) % P;
        // rank `to` expects segment ((to+2)*spr + t) mod N: the same one.
        Message& m = in_flight[t % 3][up(to)];
        m.segment = segment;
        m.data.assign(buf[up(r)].begin() + static_cast<std::ptrdiff_t>(first_of(segment)),
                      buf[up(r)].begin() + static_cast<std::ptrdiff_t>(end_of(segment)));
      }
    }
  }
  // Every non-root rank sends its chunk to the root.
  for (int c = 0; c < P; ++c) {
    if (c == root) continue;
    const std::size_t first = first_of(up(c) * spr), end = first_of(up(c + 1) * spr);
    std::copy(buf[up(c)].begin() + static_cast<std::ptrdiff_t>(first),
              buf[up(c)].begin() + static_cast<std::ptrdiff_t>(end),
              buf[up(root)].begin() + static_cast<std::ptrdiff_t>(first));
  }
  return buf;
}

// The article's summary of the same: chunk c's value travels c-1 -> ... -> c,
// so non-root rank q holds op over ranks c-1, c-2, ..., q (cyclically), and
// the root the full reduction. Equal to gloo_ring_reduce() when spr == 2.
template <typename T>
PerRank<T> gloo_ring_chain(ReduceOp op, const PerRank<T>& in, int root) {
  const int P = static_cast<int>(in.size());
  const std::size_t n = in.at(0).size();
  PerRank<T> out = in;
  if (n == 0) return out;
  const GlooRingLayout l = gloo_ring_layout(n, sizeof(T), P);
  for (std::size_t i = 0; i < n; ++i) {
    const int c = gloo_ring_chunk(l, i, sizeof(T));
    int q = ((c - 1) % P + P) % P;
    T acc = in[static_cast<std::size_t>(q)][i];
    out[static_cast<std::size_t>(q)][i] = acc;
    for (int k = 1; k < P; ++k) {
      q = (q - 1 + P) % P;
      acc = apply(op, acc, in[static_cast<std::size_t>(q)][i]);
      out[static_cast<std::size_t>(q)][i] = acc;
    }
    out[static_cast<std::size_t>(root)][i] = acc;
  }
  return out;
}

}  // namespace ringlab::ref
