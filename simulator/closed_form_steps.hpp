// What the closed forms (closed_form.hpp) are built from: segment arithmetic,
// step shapes collected by step number, and one form per algorithm.
// Internal to simulator/: closed_form.cpp picks a form by the algorithm's
// descriptor (primitives/registry.cpp), closed_form_all_reduce.cpp holds the
// all_reduce family's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "primitives/phases.hpp"
#include "simulator/closed_form.hpp"

namespace ringlab::sim::forms {

using u64 = std::uint64_t;

// Segments of at most `seg` elements in a range of c (an empty range is
// still one message), and the k-th of them.
inline u64 segs(u64 c, u64 seg) { return c == 0 ? 1 : (c - 1) / seg + 1; }
inline u64 piece(u64 c, u64 k, u64 seg) {
  const u64 offset = k == 0 ? 0 : std::min(c, k * seg);
  return std::min(seg, c - offset);
}
// sendrecv_reduce's segment, in elements (host memory).
inline u64 reduce_segment(DType dtype) {
  return std::max<u64>(1, ringlab::detail::kReduceSegmentBytes / element_size(dtype));
}
inline int log2_floor(u64 v) {
  int k = 0;
  while ((u64{2} << k) <= v) ++k;
  return k;
}
inline int log2_ceil(u64 v) {
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
  void one_message_port(Step k, u64 bytes) { one_message_ports(k, 1, bytes); }
  // `count` such messages of `bytes` each.
  void one_message_ports(Step k, u64 count, u64 bytes) {
    StepShape& s = at(k);
    s.messages += count;
    s.bytes += count * bytes;
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

// One scenario being derived: P ranks, n elements of e bytes, N = n*e.
struct Form {
  const Scenario& s;
  u64 P, n, e, N;
  Schedule& out;

  void sent(u64 rank, u64 bytes, u64 messages = 1) {
    out.bytes_sent[rank] += bytes;
    out.messages_sent[rank] += messages;
  }
};

// A closed form: fills f.out, or returns false and says why (the case is
// not regular).
using FormFn = bool (*)(Form& f, std::string& why);

// Why an algorithm that cuts its messages into segments takes the steps it
// does (closed_form.hpp, segment_note); s.algorithm is the one that runs.
using NoteFn = std::string (*)(const Scenario& s);

// closed_form_all_reduce.cpp
bool ring_all_reduce(Form& f, std::string& why);
bool recursive_doubling(Form& f, std::string& why);
bool rabenseifner(Form& f, std::string& why);
bool reduce_broadcast(Form& f, std::string& why);
bool binary_tree(Form& f, std::string& why);
// Binomial reduce to 0 (with reduce), then binomial broadcast from 0, rank
// by rank.
void binomial_trees(Form& f, bool reduce);

// closed_form_notes.cpp
std::string ring_all_reduce_note(const Scenario& s);
std::string ring_reduce_scatter_note(const Scenario& s);
std::string rabenseifner_note(const Scenario& s);
std::string binary_tree_note(const Scenario& s);

}  // namespace ringlab::sim::forms
