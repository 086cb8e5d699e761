// Closed forms (closed_form.hpp) of the regular algorithms.
//
// Notation: P ranks, n elements of e bytes, N = n*e bytes, seg = the 1 MiB
// segment of sendrecv_reduce in elements (primitives/phases.hpp),
// segs(c) = max(1, ceil(c / seg)) (an empty range is still one message),
// piece(c, k) = the k-th segment of a range of c elements. A rank's clock is
// its Lamport step (record.hpp): every rank starts at 0; a message travels in
// max(send stamp, receive stamp) + 1.
//
// A form is found through the algorithm's descriptor: the name is looked up
// in the collective's table (primitives/registry.cpp), and the row's function
// picks the form below, so a renamed or added algorithm cannot be mistaken
// for another. The all_reduce family's forms and their derivations are in
// closed_form_all_reduce.cpp; auto: whichever all_reduce_auto_choice picks,
// under auto's name.
//
// ring all_gather / reduce_scatter, all_to_all pairwise, barrier
//   dissemination: P-1 (or ceil(log2 P)) identical steps, one message per
//   rank each (reduce_scatter: g segments per step, as the ring all_reduce).
// broadcast flat: one step, the root's send port carries P-1 messages.
// broadcast binomial: computed rank by rank.
#include "simulator/closed_form.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>

#include "primitives/algorithms.hpp"
#include "simulator/closed_form_steps.hpp"
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

using namespace forms;

// ---- other collectives ----------------------------------------------------------

// `steps` identical steps in which every rank sends one message of `bytes` to
// another (all_gather ring, all_to_all pairwise, the barrier's tokens).
void uniform_steps(Form& f, u64 steps, u64 bytes) {
  f.out.append(StepShape{});
  StepShape shape;
  shape.messages = f.P;
  shape.bytes = f.P * bytes;
  shape.port(1, bytes);
  f.out.append(shape, static_cast<Step>(steps));
  f.out.steps = static_cast<Step>(steps);
  for (u64 r = 0; r < f.P; ++r) f.sent(r, steps * bytes, steps);
}

bool ring_all_gather(Form& f, std::string&) {
  uniform_steps(f, f.P - 1, f.n * f.e);
  return true;
}

bool pairwise_all_to_all(Form& f, std::string&) {
  uniform_steps(f, f.P - 1, f.n * f.e);
  return true;
}

bool dissemination_barrier(Form& f, std::string&) {
  uniform_steps(f, static_cast<u64>(log2_ceil(f.P)), 0);
  return true;
}

// Equal blocks of n elements: g segments per ring step, in lockstep.
bool ring_reduce_scatter(Form& f, std::string&) {
  const u64 P = f.P, seg = reduce_segment(f.s.dtype);
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
  for (u64 r = 0; r < P; ++r) f.sent(r, (P - 1) * f.n * f.e, (P - 1) * g);
  return true;
}

bool flat_broadcast(Form& f, std::string&) {
  const u64 P = f.P, block = f.n * f.e;
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

// Rank by rank on ranks relative to the root; the per-rank totals are
// rotated back.
bool binomial_broadcast(Form& f, std::string&) {
  binomial_trees(f, false);
  std::rotate(f.out.bytes_sent.rbegin(), f.out.bytes_sent.rbegin() + f.s.root,
              f.out.bytes_sent.rend());
  std::rotate(f.out.messages_sent.rbegin(), f.out.messages_sent.rbegin() + f.s.root,
              f.out.messages_sent.rend());
  return true;
}

// ---- the forms, by descriptor ----------------------------------------------------

// An algorithm's row function (its descriptor's `run`, primitives/registry.cpp)
// and its form.
template <typename Fn>
struct FormRow {
  Fn algorithm;
  FormFn form;
  NoteFn note = nullptr;
  bool neighbours_only = false;  // every message to rank r+1 or r-1 (closed_form.hpp)
};

constexpr FormRow<AllReduceFn> kAllReduceForms[] = {
    {all_reduce_ring, ring_all_reduce, ring_all_reduce_note, true},
    {all_reduce_recursive_doubling, recursive_doubling},
    {all_reduce_rabenseifner, rabenseifner, rabenseifner_note},
    {all_reduce_reduce_broadcast, reduce_broadcast},
    {all_reduce_binary_tree, binary_tree, binary_tree_note},
};
constexpr FormRow<AllGatherFn> kAllGatherForms[] = {
    {all_gather_ring, ring_all_gather, nullptr, true}};
constexpr FormRow<ReduceScatterFn> kReduceScatterForms[] = {
    {reduce_scatter_ring, ring_reduce_scatter, ring_reduce_scatter_note, true}};
constexpr FormRow<AllToAllFn> kAllToAllForms[] = {{all_to_all_pairwise, pairwise_all_to_all}};
constexpr FormRow<BarrierFn> kBarrierForms[] = {{barrier_dissemination, dissemination_barrier}};
constexpr FormRow<BroadcastFn> kBroadcastForms[] = {{broadcast_flat, flat_broadcast},
                                                    {broadcast_binomial, binomial_broadcast}};

// The form row of `name` in collective c's table, or nullptr where it has none.
template <typename Fn>
const FormRow<Fn>* row_of(std::span<const Algorithm<Fn>> table, Collective c,
                          const std::string& name, std::span<const FormRow<Fn>> rows) {
  const Fn run = find_algorithm(table, c, name).run;
  for (const FormRow<Fn>& row : rows)
    if (row.algorithm == run) return &row;
  return nullptr;
}

struct Found {
  FormFn form = nullptr;
  NoteFn note = nullptr;
  bool neighbours_only = false;
};

template <typename Fn>
Found found(const FormRow<Fn>* row) {
  return row ? Found{row->form, row->note, row->neighbours_only} : Found{};
}

Found find_form(Collective c, const std::string& name) {
  switch (c) {
    case Collective::AllReduce:
      return found(row_of(all_reduce_algorithms(), c, name,
                          std::span<const FormRow<AllReduceFn>>(kAllReduceForms)));
    case Collective::AllGather:
      return found(row_of(all_gather_algorithms(), c, name,
                          std::span<const FormRow<AllGatherFn>>(kAllGatherForms)));
    case Collective::ReduceScatter:
      return found(row_of(reduce_scatter_algorithms(), c, name,
                          std::span<const FormRow<ReduceScatterFn>>(kReduceScatterForms)));
    case Collective::AllToAll:
      return found(row_of(all_to_all_algorithms(), c, name,
                          std::span<const FormRow<AllToAllFn>>(kAllToAllForms)));
    case Collective::Barrier:
      return found(row_of(barrier_algorithms(), c, name,
                          std::span<const FormRow<BarrierFn>>(kBarrierForms)));
    case Collective::Broadcast:
      return found(row_of(broadcast_algorithms(), c, name,
                          std::span<const FormRow<BroadcastFn>>(kBroadcastForms)));
    case Collective::Scatter:
    case Collective::Gather:
    case Collective::Reduce:
      break;
  }
  return {};
}

// What runs under `algorithm`: all_reduce_auto's choice for auto, on the
// simulated transport (its messages do not compete for processors:
// Transport::prefers_fewer_messages is false); else the algorithm itself.
std::string runs_as(const Scenario& s, const std::string& algorithm) {
  if (s.collective != Collective::AllReduce ||
      find_algorithm(all_reduce_algorithms(), s.collective, algorithm).run != all_reduce_auto)
    return algorithm;
  return std::string(
      all_reduce_auto_choice(s.count * element_size(s.dtype), s.ranks, /*fewer_messages=*/false));
}

}  // namespace

std::optional<Schedule> closed_form(const Scenario& scenario, std::string* why_not) {
  const std::string algorithm =
      detail::validate(scenario, kMaxPredictionRanks, "the closed-form prediction path");
  check_reported_bytes(scenario);
  Schedule out;
  out.operation = std::string(collective_name(scenario.collective));
  out.algorithm = algorithm;
  out.runs_as = runs_as(scenario, algorithm);
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
  } else if (const Found form = find_form(scenario.collective, out.runs_as); form.form) {
    done = form.form(f, why);
  } else {
    why = "no closed form for " + out.operation + " " + algorithm;
  }
  if (!done) {
    if (why_not) *why_not = why;
    return std::nullopt;
  }
  for (u64 r = 0; r < P; ++r) out.messages += out.messages_sent[r];
  return out;
}

std::string segment_note(const Scenario& scenario) {
  const std::string algorithm =
      detail::validate(scenario, kMaxPredictionRanks, "the closed-form prediction path");
  check_reported_bytes(scenario);
  if (scenario.ranks == 1) return {};
  Scenario s = scenario;
  s.algorithm = runs_as(scenario, algorithm);
  const Found form = find_form(s.collective, s.algorithm);
  return form.note ? form.note(s) : std::string();
}

bool neighbours_only(const Scenario& scenario) {
  const std::string algorithm =
      detail::validate(scenario, kMaxPredictionRanks, "the closed-form prediction path");
  return find_form(scenario.collective, runs_as(scenario, algorithm)).neighbours_only;
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
