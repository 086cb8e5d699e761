// segment_note (closed_form.hpp): why an algorithm that cuts its messages
// into segments takes more steps than its textbook count. Each segment is a
// message of its own, so a step of its own in the Lamport count (record.hpp):
// the bytes do not change, but every segment pays the latency again.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "primitives/algorithms.hpp"
#include "simulator/closed_form_steps.hpp"

namespace ringlab::sim::forms {

namespace {

std::string size_text(u64 bytes) {
  char text[48];
  if (bytes >= (u64{1} << 30))
    std::snprintf(text, sizeof text, "%.4g GiB", static_cast<double>(bytes) / (1 << 30));
  else if (bytes >= (u64{1} << 20))
    std::snprintf(text, sizeof text, "%.4g MiB", static_cast<double>(bytes) / (1 << 20));
  else if (bytes >= 1024)
    std::snprintf(text, sizeof text, "%.4g KiB", static_cast<double>(bytes) / 1024);
  else
    std::snprintf(text, sizeof text, "%" PRIu64 " bytes", bytes);
  return text;
}

std::string num(u64 v) { return std::to_string(v); }

// "segments of at most 1 MiB (sendrecv_reduce's, ...)"
std::string reduce_segments() {
  return "segments of at most " + size_text(ringlab::detail::kReduceSegmentBytes) +
         " (sendrecv_reduce's, primitives/phases.hpp: each is reduced while it is in cache)";
}

}  // namespace

std::string ring_all_reduce_note(const Scenario& s) {
  const u64 P = static_cast<u64>(s.ranks), n = s.count, e = element_size(s.dtype);
  const u64 q = n / P, m = n % P, qmax = q + (m > 0 ? 1 : 0), seg = reduce_segment(s.dtype);
  if (m > 0 && segs(q, seg) != segs(q + 1, seg))
    return "the ring cuts its blocks of " + num(q) + " and " + num(q + 1) + " elements into " +
           num(segs(q, seg)) + " and " + num(segs(q + 1, seg)) + " " + reduce_segments() +
           ", one step each, so the ranks fall out of lockstep; the steps are counted by running "
           "the algorithm";
  const u64 g = segs(qmax, seg);
  if (g == 1) return {};
  return "the ring cuts each block (n/P elements, up to " + size_text(qmax * e) + ") into " +
         num(g) + " " + reduce_segments() + ", and each segment is a step: the reduce-scatter " +
         "takes (P-1) x " + num(g) + " = " + num((P - 1) * g) +
         " steps and the all-gather, which sends whole blocks, P-1 = " + num(P - 1) + ": " +
         num((P - 1) * (g + 1)) + " steps instead of the unsegmented 2(P-1) = " + num(2 * (P - 1)) +
         ", with the same bytes; each segment pays alpha again";
}

std::string ring_reduce_scatter_note(const Scenario& s) {
  const u64 P = static_cast<u64>(s.ranks), seg = reduce_segment(s.dtype);
  const u64 g = segs(s.count, seg);
  if (g == 1) return {};
  return "the ring cuts each block (" + size_text(s.count * element_size(s.dtype)) + ") into " +
         num(g) + " " + reduce_segments() + ", and each segment is a step: (P-1) x " + num(g) +
         " = " + num((P - 1) * g) + " steps instead of the unsegmented P-1 = " + num(P - 1) +
         ", with the same bytes";
}

std::string rabenseifner_note(const Scenario& s) {
  const u64 P = static_cast<u64>(s.ranks), seg = reduce_segment(s.dtype);
  const u64 pof2 = u64{1} << log2_floor(P), q = s.count / pof2, m = s.count % pof2;
  std::string rounds;
  u64 halving = 0, most = 1;
  for (u64 mask = pof2 / 2; mask >= 1; mask /= 2) {
    // The largest half a partner sends in this round: mask groups from group 0.
    const u64 g = segs(mask * q + std::min(mask, m), seg);
    rounds += (rounds.empty() ? "" : " + ") + num(g);
    halving += g;
    most = std::max(most, g);
  }
  if (most == 1) return {};
  const u64 L = static_cast<u64>(log2_floor(pof2));
  return "Rabenseifner's recursive halving cuts the half each partner sends into " +
         reduce_segments() + ", and each segment is a step: its log2(" + num(pof2) +
         ") = " + num(L) + " rounds take " + rounds + " = " + num(halving) + " steps instead of " +
         num(L) + "; the all-gather's " + num(L) + " rounds send whole ranges, one step each";
}

std::string binary_tree_note(const Scenario& s) {
  const u64 S = tree_segments(s.count, s.dtype);
  if (S == 1) return {};
  const u64 H = static_cast<u64>(log2_floor(static_cast<u64>(s.ranks)));
  return "the binary tree pipelines the vector in " + num(S) + " segments of at most " +
         size_text(kTreeSegmentBytes) +
         " (kTreeSegmentBytes, primitives/algorithms.hpp): each climbs the tree of height " +
         "floor(log2 P) = " + num(H) + " one step behind the one before, and comes down the " +
         "same way: 2(S + H - 1) = " + num(2 * (S + H - 1)) +
         " steps, where the whole vector as one segment would take 2H = " + num(2 * H);
}

}  // namespace ringlab::sim::forms
