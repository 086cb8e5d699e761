// Closed forms (closed_form.hpp) of the regular algorithms.
//
// Notation: P ranks, n elements of e bytes, N = n*e bytes, seg = the 1 MiB
// segment of sendrecv_reduce in elements (primitives/phases.hpp),
// segs(c) = max(1, ceil(c / seg)) (an empty range is still one message),
// piece(c, k) = the k-th segment of a range of c elements. A rank's clock is
// its Lamport step (record.hpp): every rank starts at 0; a message travels in
// max(send stamp, receive stamp) + 1.
//
// ring all_reduce (all_reduce.cpp): blocks of q = n/P or q+1 elements (the
//   first n%P). Every rank runs the same sequence of sendrecvs, so the ranks
//   stay in lockstep whenever every block needs the same number g of
//   segments: reduce-scatter step s, segment k is step s*g + k + 1, each rank
//   sending piece k of one block and reducing piece k of another; the
//   all-gather's step s is (P-1)*g + s + 1, each rank sending one block.
//   Steps (P-1)(g+1). Rank r sends every block but r in the reduce-scatter and
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
// binary_tree: heap tree (children 2v+1, 2v+2), S segments of at most
//   256 KiB, h(v) = v's height (leaves 0), d(v) its depth, H = h(0). Up:
//   segment 0 leaves child u in step h(u) + 1; segment j >= 1 reaches node
//   v in step j + h(v), from each child (v reduces each in that step, and
//   segment 0 in step h(v)). Down, from C0 = S - 1 + H: node v sends segment
//   j to each child in step C0 + d(v) + 1 + j. Steps 2(S + H - 1).
// auto: whichever it picks (all_reduce.cpp), under auto's name.
// ring all_gather / reduce_scatter, all_to_all pairwise, barrier
//   dissemination: P-1 (or ceil(log2 P)) identical steps, one message per
//   rank each (reduce_scatter: g segments per step, as the ring above).
// broadcast flat: one step, the root's send port carries P-1 messages.
// broadcast binomial: computed rank by rank.
#include "simulator/closed_form.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "primitives/algorithms.hpp"
#include "primitives/phases.hpp"
#include "simulator/rank_program.hpp"

namespace ringlab::sim {

void StepShape::port(std::uint64_t port_messages, std::uint64_t port_bytes) {
  for (const auto& [m, b] : ports)
    if (m >= port_messages && b >= port_bytes) return;  // no busier than one we have
  std::erase_if(ports, [&](const auto& load) {
    return load.first <= port_messages && load.second <= port_bytes;
  });
  ports.emplace_back(port_messages, port_bytes);
  std::sort(ports.begin(), ports.end());
}

void Schedule::append(const StepShape& shape, Step repeat) {
  if (repeat == 0) return;
  if (!runs.empty() && runs.back().first == shape)
    runs.back().second += repeat;
  else
    runs.emplace_back(shape, repeat);
}

namespace {

using u64 = std::uint64_t;

u64 segs(u64 c, u64 seg) { return c == 0 ? 1 : (c - 1) / seg + 1; }
u64 piece(u64 c, u64 k, u64 seg) {
  const u64 offset = k == 0 ? 0 : std::min(c, k * seg);
  return std::min(seg, c - offset);
}
// sendrecv_reduce's segment, in elements (host memory).
u64 reduce_segment(DType dtype) {
  return std::max<u64>(1, ringlab::detail::kReduceSegmentBytes / element_size(dtype));
}
int log2_floor(u64 v) {
  int k = 0;
  while ((u64{2} << k) <= v) ++k;
  return k;
}
int log2_ceil(u64 v) {
  int k = 0;
  while ((u64{1} << k) < v) ++k;
  return k;
}

// Step shapes by step number, for the forms that compute them one by one.
class Steps {
 public:
  StepShape& at(Step k) {
    if (shapes_.size() <= k) shapes_.resize(static_cast<std::size_t>(k) + 1);
    return shapes_[k];
  }
  void message(Step k, u64 bytes) {
    StepShape& s = at(k);
    ++s.messages;
    s.bytes += bytes;
  }
  // Single-message ports (every port carries at most one message a step).
  void one_message_port(Step k, u64 bytes) {
    message(k, bytes);
    StepShape& s = at(k);
    if (s.ports.empty())
      s.ports.emplace_back(1, bytes);
    else
      s.ports.front().second = std::max(s.ports.front().second, bytes);
  }
  void into(Schedule& out) const {
    out.steps = shapes_.empty() ? 0 : static_cast<Step>(shapes_.size() - 1);
    if (shapes_.empty()) out.append(StepShape{});
    for (const StepShape& s : shapes_) out.append(s);
  }

 private:
  std::vector<StepShape> shapes_;
};

// Messages with senders and receivers, for the forms computed rank by rank:
// ports are summed exactly, however many messages one carries in a step.
class PortSteps {
 public:
  void message(Step k, int src, int dst, u64 bytes) {
    auto& step = ports_[k];
    auto& out = step[2 * static_cast<u64>(src)];
    ++out.first;
    out.second += bytes;
    auto& in = step[2 * static_cast<u64>(dst) + 1];
    ++in.first;
    in.second += bytes;
    steps_.message(k, bytes);
  }
  void reduced(Step k, int rank, u64 bytes) {
    if (bytes == 0) return;
    reduced_[k][rank] += bytes;
    steps_.at(k);
  }
  void into(Schedule& out) {
    for (const auto& [k, ports] : ports_)
      for (const auto& [port, load] : ports) steps_.at(k).port(load.first, load.second);
    for (const auto& [k, ranks] : reduced_)
      for (const auto& [rank, bytes] : ranks) steps_.at(k).reduced(bytes);
    steps_.into(out);
  }

 private:
  Steps steps_;
  std::map<Step, std::map<u64, std::pair<u64, u64>>> ports_;
  std::map<Step, std::map<int, u64>> reduced_;
};

struct Form {
  const Scenario& s;
  u64 P, n, e, N;
  Schedule& out;

  void sent(u64 rank, u64 bytes, u64 messages = 1) {
    out.bytes_sent[rank] += bytes;
    out.messages_sent[rank] += messages;
  }
};

// ---- all_reduce ---------------------------------------------------------------

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

void recursive_doubling(Form& f) {
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
}

void rabenseifner(Form& f) {
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
  // Recursive halving.
  for (u64 mask = pof2 / 2; mask >= 1; mask /= 2) {
    for (u64 a = 0; a < pof2; ++a) {
      if (a & mask) continue;
      const u64 b = a | mask;
      const u64 lo = a & ~(2 * mask - 1);
      const u64 keep_a = span(lo, mask), keep_b = span(lo + mask, mask);  // a keeps the lower half
      const u64 a_sends = segs(keep_b, seg), b_sends = segs(keep_a, seg);
      const u64 rounds = std::max(a_sends, b_sends);
      const Step start = std::max(clock[a], clock[b]);
      for (u64 k = 0; k < rounds; ++k) {
        const Step step = static_cast<Step>(start + k + 1);
        u64 most = 0;
        if (k < a_sends) {  // a -> b, b reduces it
          const u64 bytes = e * piece(keep_b, k, seg);
          steps.one_message_port(step, bytes);
          most = std::max(most, bytes);
        }
        if (k < b_sends) {
          const u64 bytes = e * piece(keep_a, k, seg);
          steps.one_message_port(step, bytes);
          most = std::max(most, bytes);
        }
        if (most > 0) steps.at(step).reduced(most);
      }
      clock[a] = clock[b] = static_cast<Step>(start + rounds);
      f.sent(rank_of(a), e * keep_b, a_sends);
      f.sent(rank_of(b), e * keep_a, b_sends);
    }
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
}

// Binomial reduce to 0, then binomial broadcast from 0, rank by rank. With
// reduce = false, the broadcast alone.
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

void binary_tree(Form& f) {
  const u64 P = f.P, n = f.n, e = f.e;
  // all_reduce.cpp: segments of at most 256 KiB, at most 2^18 of them.
  const u64 seg_elems = std::max<u64>(1, (256 * 1024) / e);
  const u64 S = std::clamp<u64>((n + seg_elems - 1) / seg_elems, 1, u64{1} << 18);
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
}

// all_reduce_auto's choice, on the simulated transport: its messages do not
// compete for processors (Transport::prefers_fewer_messages is false).
std::string auto_choice(u64 bytes, u64 P) {
  return std::string(all_reduce_auto_choice(bytes, static_cast<int>(P), false));
}

bool all_reduce_form(Form& f, const std::string& algorithm, std::string& why) {
  if (algorithm == "ring") return ring_all_reduce(f, why);
  if (algorithm == "recursive_doubling")
    recursive_doubling(f);
  else if (algorithm == "rabenseifner")
    rabenseifner(f);
  else if (algorithm == "reduce_broadcast")
    binomial_trees(f, true);
  else if (algorithm == "binary_tree")
    binary_tree(f);
  else
    return false;
  return true;
}

// ---- other collectives ----------------------------------------------------------

// P-1 identical steps in which every rank sends one message of `bytes` to
// another (all_gather ring, all_to_all pairwise), reducing `reduced`.
void uniform_steps(Form& f, u64 steps, u64 bytes, u64 reduced) {
  f.out.append(StepShape{});
  StepShape shape;
  shape.messages = f.P;
  shape.bytes = f.P * bytes;
  shape.port(1, bytes);
  shape.reduced(reduced);
  f.out.append(shape, static_cast<Step>(steps));
  f.out.steps = static_cast<Step>(steps);
  for (u64 r = 0; r < f.P; ++r) f.sent(r, steps * bytes, steps);
}

bool other_form(Form& f, Collective c, const std::string& algorithm, std::string& why) {
  const u64 P = f.P, block = f.n * f.e;
  if (c == Collective::AllGather && algorithm == "ring") {
    uniform_steps(f, P - 1, block, 0);
    return true;
  }
  if (c == Collective::AllToAll && algorithm == "pairwise") {
    uniform_steps(f, P - 1, block, 0);
    return true;
  }
  if (c == Collective::Barrier && algorithm == "dissemination") {
    uniform_steps(f, static_cast<u64>(log2_ceil(P)), 0, 0);
    return true;
  }
  if (c == Collective::ReduceScatter && algorithm == "ring") {
    // Equal blocks of n elements: g segments per ring step, in lockstep.
    const u64 seg = reduce_segment(f.s.dtype);
    const u64 g = segs(f.n, seg);
    f.out.append(StepShape{});
    for (u64 s = 0; s + 1 < P; ++s)
      for (u64 k = 0; k < g; ++k) {
        StepShape shape;
        const u64 bytes = f.e * piece(f.n, k, seg);
        shape.messages = P;
        shape.bytes = P * bytes;
        shape.port(1, bytes);
        shape.reduced(bytes);
        f.out.append(shape);
      }
    f.out.steps = static_cast<Step>((P - 1) * g);
    for (u64 r = 0; r < P; ++r) f.sent(r, (P - 1) * block, (P - 1) * g);
    return true;
  }
  if (c == Collective::Broadcast && algorithm == "flat") {
    f.out.append(StepShape{});
    StepShape shape;
    shape.messages = P - 1;
    shape.bytes = (P - 1) * block;
    shape.port(P - 1, (P - 1) * block);
    shape.port(1, block);
    f.out.append(shape);
    f.out.steps = 1;
    f.sent(static_cast<u64>(f.s.root), (P - 1) * block, P - 1);
    return true;
  }
  if (c == Collective::Broadcast && algorithm == "binomial") {
    // Rank by rank on ranks relative to the root; the per-rank totals are
    // rotated back.
    binomial_trees(f, false);
    std::rotate(f.out.bytes_sent.rbegin(), f.out.bytes_sent.rbegin() + f.s.root,
                f.out.bytes_sent.rend());
    std::rotate(f.out.messages_sent.rbegin(), f.out.messages_sent.rbegin() + f.s.root,
                f.out.messages_sent.rend());
    return true;
  }
  why = "no closed form for " + std::string(collective_name(c)) + " " + algorithm;
  return false;
}

}  // namespace

std::optional<Schedule> closed_form(const Scenario& scenario, std::string* why_not) {
  const std::string algorithm =
      detail::validate(scenario, kMaxPredictionRanks, "the closed-form prediction path");
  Schedule out;
  out.operation = std::string(collective_name(scenario.collective));
  out.algorithm = algorithm;
  out.runs_as = algorithm;
  out.ranks = scenario.ranks;
  out.count = scenario.count;
  out.dtype = scenario.dtype;
  const auto P = static_cast<u64>(scenario.ranks);
  out.bytes_sent.assign(P, 0);
  out.messages_sent.assign(P, 0);
  const u64 e = element_size(scenario.dtype);
  Form f{scenario, P, scenario.count, e, scenario.count * e, out};
  std::string why;
  bool done = false;
  if (P == 1) {
    out.append(StepShape{});  // one rank: every algorithm sends nothing
    done = true;
  } else if (scenario.collective == Collective::AllReduce) {
    if (algorithm == "auto") out.runs_as = auto_choice(f.N, P);
    done = all_reduce_form(f, out.runs_as, why);
    if (!done && why.empty()) why = "no closed form for all_reduce " + algorithm;
  } else {
    done = other_form(f, scenario.collective, algorithm, why);
  }
  if (!done) {
    if (why_not) *why_not = why;
    return std::nullopt;
  }
  for (u64 r = 0; r < P; ++r) out.messages += out.messages_sent[r];
  return out;
}

Prediction predict(const Schedule& schedule, const CostModel& given) {
  const CostModel model =
      for_run(given, schedule.ranks,
              reported_bytes(schedule.operation, schedule.count, schedule.dtype, schedule.ranks));
  if (model.bandwidth_Bps <= 0) throw std::invalid_argument("bandwidth must be positive");
  if (!model.full_duplex)
    throw std::invalid_argument("closed forms price full-duplex ports; this model is half duplex");
  if (model.cores > 0 && schedule.ranks > model.cores)
    throw std::invalid_argument(
        "closed forms do not count the ranks busy in a step, which the "
        "cores term needs");
  Prediction out;
  out.steps.reserve(static_cast<std::size_t>(schedule.steps) + 1);
  double t = 0;
  Step k = 0;
  for (const auto& [shape, repeat] : schedule.runs) {
    StepCost cost;
    cost.messages = shape.messages;
    cost.bytes = shape.bytes;
    for (const auto& [messages, bytes] : shape.ports) {
      const double busy = port_time(model, messages, bytes);
      if (busy > cost.comm_s) {
        cost.comm_s = busy;
        cost.bottleneck = "a port with " + std::to_string(messages) +
                          (messages == 1 ? " message, " : " messages, ") + std::to_string(bytes) +
                          " bytes";
      }
    }
    cost.reduce_s = reduce_time(model, shape.most_reduced);
    cost.seconds = cost.comm_s + cost.reduce_s;
    for (Step i = 0; i < repeat; ++i, ++k) {
      cost.step = k;
      cost.start_s = t;
      out.steps.push_back(cost);
      t += cost.seconds;
    }
  }
  out.total_s = t;
  finish_prediction(out, schedule.operation, schedule.count, schedule.dtype, schedule.ranks);
  return out;
}

}  // namespace ringlab::sim
