// The all_reduce family's closed forms (closed_form.hpp; notation and the
// Lamport rule at the top of closed_form.cpp).
//
// ring (all_reduce.cpp): blocks of q = n/P or q+1 elements (the first n%P).
//   Every rank runs the same sequence of sendrecvs, so the ranks stay in
//   lockstep whenever every block needs the same number g of segments:
//   reduce-scatter step s, segment k is step s*g + k + 1, each rank sending
//   piece k of one block and reducing piece k of another; the all-gather's
//   step s is (P-1)*g + s + 1, each rank sending one block. Steps
//   (P-1)(g+1). Rank r sends every block but r in the reduce-scatter and
//   every block but r+1 in the all-gather. Blocks of q and q+1 elements with
//   different segment counts break the lockstep: no closed form.
// recursive_doubling: pof2 = floor_pow2(P), rem = P - pof2, L = log2 pof2.
//   The fold (rem even ranks to their odd neighbours) is step 1; folded rank
//   f starts at clock 1 if f < rem, else 0. Round j (partners f ^ 2^(j-1))
//   leaves every rank of an aligned block of 2^j folded ranks at j + 1 if the
//   block holds a folded rank below rem, else at j, and its messages travel
//   in that step. The unfold is step L+2. Every message is N bytes, every
//   port carries at most one per step, every exchange reduces N.
// rabenseifner: the same fold and unfold. Halving round (mask) pairs f with
//   f | mask; both partners run max(segs(give), segs(keep)) sendrecvs in
//   lockstep from the later of their clocks; the all-gather's rounds are one
//   sendrecv each, from the later clock. Computed pair by pair (P log P
//   work, plus the segments), one message per port per step.
// reduce_broadcast: binomial reduce to 0 then binomial broadcast from 0,
//   computed rank by rank (2(P-1) messages).
// binary_tree: heap tree (children 2v+1, 2v+2), S = tree_segments(n) segments
//   (algorithms.hpp: at most kTreeSegmentBytes each), h(v) = v's height
//   (leaves 0), d(v) its depth, H = h(0). Up: segment 0 leaves child u in
//   step h(u) + 1; segment j >= 1 reaches node v in step j + h(v), from each
//   child (v reduces each in that step, and segment 0 in step h(v)). Down,
//   from C0 = S - 1 + H: node v sends segment j to each child in step
//   C0 + d(v) + 1 + j. Steps 2(S + H - 1).
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "primitives/algorithms.hpp"
#include "simulator/closed_form_steps.hpp"

namespace ringlab::sim::forms {

bool ring_all_reduce(Form& f, std::string& why) {
  const u64 P = f.P, n = f.n, e = f.e;
  const u64 q = n / P, m = n % P, qmax = q + (m > 0 ? 1 : 0);
  const u64 seg = reduce_segment(f.s.dtype);
  if (m > 0 && segs(q, seg) != segs(q + 1, seg)) {
    why = "the ring's blocks of " + std::to_string(q) + " and " + std::to_string(q + 1) +
          " elements need different numbers of 1 MiB segments, so the ranks do not move in "
          "lockstep";
    return false;
  }
  const u64 g = segs(qmax, seg);
  auto block = [&](u64 i) { return q + (i < m ? 1 : 0); };
  f.out.append(StepShape{});  // step 0
  std::vector<StepShape> rs(g);
  for (u64 k = 0; k < g; ++k) {
    const u64 big = piece(qmax, k, seg), small = piece(q, k, seg);
    StepShape& shape = rs[k];
    shape.messages = P;
    shape.bytes = e * (m * piece(q + 1, k, seg) + (P - m) * small);
    shape.port(1, e * big);
    shape.reduced(e * big);
  }
  for (u64 s = 0; s + 1 < P; ++s)
    for (const StepShape& shape : rs) f.out.append(shape);
  StepShape ag;
  ag.messages = P;
  ag.bytes = e * n;
  ag.port(1, e * qmax);
  f.out.append(ag, static_cast<Step>(P - 1));
  f.out.steps = static_cast<Step>((P - 1) * (g + 1));
  for (u64 r = 0; r < P; ++r)
    f.sent(r, e * (2 * n - block(r) - block((r + 1) % P)), (P - 1) * (g + 1));
  return true;
}

bool recursive_doubling(Form& f, std::string&) {
  const u64 P = f.P, N = f.N;
  const u64 pof2 = u64{1} << log2_floor(P), rem = P - pof2;
  const u64 L = static_cast<u64>(log2_floor(pof2));
  Steps steps;
  steps.at(0);
  auto add = [&](Step k, u64 messages, bool reduces) {
    if (messages == 0) return;
    for (u64 i = 0; i < messages; ++i) steps.one_message_port(k, N);
    if (reduces) steps.at(k).reduced(N);
  };
  if (rem > 0) add(1, rem, true);  // the fold
  for (u64 j = 1; j <= L; ++j) {
    const u64 block = u64{1} << j;
    const u64 late =
        std::min(pof2, (rem + block - 1) / block * block);  // folded ranks in late blocks
    add(static_cast<Step>(j + 1), late, true);
    add(static_cast<Step>(j), pof2 - late, true);
  }
  if (rem > 0) add(static_cast<Step>(L + 2), rem, false);  // the unfold
  steps.into(f.out);
  for (u64 r = 0; r < P; ++r) {
    if (r < 2 * rem && r % 2 == 0)
      f.sent(r, N, 1);
    else if (r < 2 * rem)
      f.sent(r, (L + 1) * N, L + 1);
    else
      f.sent(r, L * N, L);
  }
  return true;
}

// The steps of `pairs` partners of one halving round that start at the same
// clock with the same halves (a keeps keep_a and sends keep_b, b the other
// way round): both run max(segments) sendrecvs in lockstep, each reducing
// what it receives.
void halving_steps(Steps& steps, const std::tuple<Step, u64, u64>& key, u64 pairs, u64 e, u64 seg) {
  const auto [start, keep_a, keep_b] = key;
  const u64 a_sends = segs(keep_b, seg), b_sends = segs(keep_a, seg);
  for (u64 k = 0; k < std::max(a_sends, b_sends); ++k) {
    const Step step = static_cast<Step>(start + k + 1);
    u64 most = 0;
    if (k < a_sends) {  // a -> b, b reduces it
      const u64 bytes = e * piece(keep_b, k, seg);
      steps.one_message_ports(step, pairs, bytes);
      most = std::max(most, bytes);
    }
    if (k < b_sends) {
      const u64 bytes = e * piece(keep_a, k, seg);
      steps.one_message_ports(step, pairs, bytes);
      most = std::max(most, bytes);
    }
    if (most > 0) steps.at(step).reduced(most);
  }
}

bool rabenseifner(Form& f, std::string&) {
  const u64 P = f.P, N = f.N, e = f.e;
  const u64 pof2 = u64{1} << log2_floor(P), rem = P - pof2;
  const u64 seg = reduce_segment(f.s.dtype);
  const u64 q = f.n / pof2, m = f.n % pof2;
  // Elements of groups [a, a + len).
  auto span = [&](u64 a, u64 len) { return len * q + std::min(len, m > a ? m - a : 0); };
  auto rank_of = [&](u64 folded) { return folded < rem ? 2 * folded + 1 : folded + rem; };
  Steps steps;
  steps.at(0);
  std::vector<Step> clock(pof2, 0);
  if (rem > 0) {
    for (u64 i = 0; i < rem; ++i) {
      steps.one_message_port(1, N);
      f.sent(2 * i, N);
      clock[i] = 1;
    }
    if (N > 0) steps.at(1).reduced(N);
  }
  // Recursive halving: clocks and totals pair by pair, the steps of pairs
  // alike (the same start and halves) once for all of them.
  for (u64 mask = pof2 / 2; mask >= 1; mask /= 2) {
    std::map<std::tuple<Step, u64, u64>, u64> alike;  // (start, keep_a, keep_b) -> pairs
    for (u64 a = 0; a < pof2; ++a) {
      if (a & mask) continue;
      const u64 b = a | mask;
      const u64 lo = a & ~(2 * mask - 1);
      const u64 keep_a = span(lo, mask), keep_b = span(lo + mask, mask);  // a keeps the lower half
      const u64 a_sends = segs(keep_b, seg), b_sends = segs(keep_a, seg);
      const Step start = std::max(clock[a], clock[b]);
      ++alike[{start, keep_a, keep_b}];
      clock[a] = clock[b] = static_cast<Step>(start + std::max(a_sends, b_sends));
      f.sent(rank_of(a), e * keep_b, a_sends);
      f.sent(rank_of(b), e * keep_a, b_sends);
    }
    for (const auto& [key, pairs] : alike) halving_steps(steps, key, pairs, e, seg);
  }
  // Recursive doubling of the groups.
  for (u64 mask = 1; mask < pof2; mask *= 2) {
    for (u64 a = 0; a < pof2; ++a) {
      if (a & mask) continue;
      const u64 b = a | mask;
      const Step step = std::max(clock[a], clock[b]) + 1;
      const u64 out_a = e * span(a & ~(mask - 1), mask), out_b = e * span(b & ~(mask - 1), mask);
      steps.one_message_port(step, out_a);
      steps.one_message_port(step, out_b);
      clock[a] = clock[b] = step;
      f.sent(rank_of(a), out_a);
      f.sent(rank_of(b), out_b);
    }
  }
  for (u64 i = 0; i < rem; ++i) {  // the unfold
    steps.one_message_port(std::max<Step>(clock[i], 1) + 1, N);
    f.sent(2 * i + 1, N);
  }
  steps.into(f.out);
  return true;
}

void binomial_trees(Form& f, bool reduce) {
  const u64 P = f.P, N = f.N;
  PortSteps steps;
  std::vector<Step> clock(P, 0);
  if (reduce) {
    for (u64 mask = 1; mask < P; mask *= 2)
      for (u64 v = mask; v < P; v += 2 * mask) {  // lowbit(v) == mask
        const u64 u = v - mask;
        const Step step = std::max(clock[v], clock[u]) + 1;
        steps.message(step, static_cast<int>(v), static_cast<int>(u), N);
        steps.reduced(step, static_cast<int>(u), N);
        clock[u] = step;
        clock[v] += 1;  // its send completes
        f.sent(v, N);
      }
  }
  std::vector<Step> stamp(P, 0);
  u64 top = 1;
  while (top < P) top *= 2;
  for (u64 v = 0; v < P; ++v) {
    const u64 low = v == 0 ? top : (v & (~v + 1));
    if (v > 0) {
      const Step step = std::max(stamp[v], clock[v]) + 1;
      steps.message(step, static_cast<int>(v - low), static_cast<int>(v), N);
      clock[v] = step;
    }
    for (u64 mask = low / 2; mask >= 1; mask /= 2) {
      if (v + mask >= P) continue;
      stamp[v + mask] = clock[v];
      clock[v] += 1;  // a blocking send
      f.sent(v, N);
    }
  }
  steps.into(f.out);
}

bool reduce_broadcast(Form& f, std::string&) {
  binomial_trees(f, true);
  return true;
}

bool binary_tree(Form& f, std::string&) {
  const u64 P = f.P, n = f.n, e = f.e;
  const u64 S = tree_segments(n, f.s.dtype);  // as all_reduce_binary_tree cuts the vector
  const u64 qs = n / S, ms = n % S;
  auto size = [&](u64 j) { return e * (qs + (j < ms ? 1 : 0)); };
  std::vector<int> height(P, 0);
  for (u64 v = P; v-- > 0;)
    for (u64 c : {2 * v + 1, 2 * v + 2})
      if (c < P) height[v] = std::max(height[v], height[c] + 1);
  const u64 H = static_cast<u64>(height[0]);
  const u64 C0 = S - 1 + H;
  auto children = [&](u64 v) { return static_cast<u64>(2 * v + 1 < P) + (2 * v + 2 < P); };
  // Nodes by (height, children) and by (depth, children).
  std::map<std::pair<u64, u64>, u64> by_height, by_depth;
  for (u64 v = 0; v < P; ++v) {
    const u64 c = children(v);
    if (c == 0) continue;
    ++by_height[{static_cast<u64>(height[v]), c}];
    ++by_depth[{static_cast<u64>(log2_floor(v + 1)), c}];
  }
  Steps steps;
  steps.at(0);
  auto add = [&](Step k, u64 count, u64 port_messages, u64 port_bytes) {
    StepShape& s = steps.at(k);
    s.messages += count * port_messages;
    s.bytes += count * port_bytes;
    s.port(port_messages, port_bytes);
    s.port(1, port_bytes / port_messages);  // the other end of each message
  };
  // Up, segments j >= 1: every child of v in step j + h(v); v reduces them.
  for (const auto& [key, count] : by_height) {
    const auto [h, c] = key;
    for (u64 j = 1; j < S; ++j) {
      add(static_cast<Step>(j + h), count, c, c * size(j));
      steps.at(static_cast<Step>(j + h)).reduced(c * size(j));
    }
  }
  // Up, segment 0: child u in step h(u) + 1; v reduces child i once it has
  // waited for children 0..i.
  for (u64 v = 0; v < P; ++v) {
    const u64 c = children(v);
    if (c == 0) continue;
    const u64 left = 2 * v + 1, right = 2 * v + 2;
    const Step l = static_cast<Step>(height[left] + 1);
    if (c == 2 && height[left] == height[right]) {
      add(l, 1, 2, 2 * size(0));
      steps.at(l).reduced(2 * size(0));
      continue;
    }
    add(l, 1, 1, size(0));
    if (c == 1) {
      steps.at(l).reduced(size(0));
      continue;
    }
    const Step r = static_cast<Step>(height[right] + 1);
    add(r, 1, 1, size(0));
    const Step second = std::max(l, r);
    if (second == l) {
      steps.at(l).reduced(2 * size(0));
    } else {
      steps.at(l).reduced(size(0));
      steps.at(second).reduced(size(0));
    }
  }
  // Down: node v (depth d) sends segment j to its children in C0 + d + 1 + j.
  for (const auto& [key, count] : by_depth) {
    const auto [d, c] = key;
    for (u64 j = 0; j < S; ++j) add(static_cast<Step>(C0 + d + 1 + j), count, c, c * size(j));
  }
  steps.into(f.out);
  for (u64 v = 0; v < P; ++v) {
    const u64 sends = (v > 0 ? 1 : 0) + children(v);
    f.sent(v, sends * e * n, sends * S);
  }
  return true;
}

}  // namespace ringlab::sim::forms
