#include "simulator/forecast.hpp"

#include <optional>
#include <stdexcept>

#include "primitives/algorithms.hpp"
#include "simulator/closed_form.hpp"
#include "simulator/rank_program.hpp"
#include "simulator/traffic.hpp"

namespace ringlab::sim {

std::string_view path_name(PredictionPath path) {
  switch (path) {
    case PredictionPath::Auto:
      return "auto";
    case PredictionPath::Recorded:
      return "recorded";
    case PredictionPath::MessageLevel:
      return "message-level";
    case PredictionPath::ClosedForm:
      return "closed form";
  }
  return "?";
}

PredictionPath parse_path(std::string_view name) {
  if (name == "auto") return PredictionPath::Auto;
  if (name == "recorded" || name == "record") return PredictionPath::Recorded;
  if (name == "messages" || name == "message-level") return PredictionPath::MessageLevel;
  if (name == "closed" || name == "closed-form") return PredictionPath::ClosedForm;
  throw std::invalid_argument("unknown prediction path '" + std::string(name) +
                              "': use auto, recorded, messages or closed");
}

int max_ranks(PredictionPath path) {
  switch (path) {
    case PredictionPath::Recorded:
      return 1024;
    case PredictionPath::MessageLevel:
      return kMaxTrafficRanks;
    case PredictionPath::Auto:
    case PredictionPath::ClosedForm:
      return kMaxPredictionRanks;
  }
  return 1024;
}

std::string check_scenario(const Scenario& scenario, PredictionPath path) {
  if (path == PredictionPath::MessageLevel) return check_traffic(scenario);
  const std::string what =
      path == PredictionPath::Recorded ? "the recorded simulator" : "prediction";
  const std::string algorithm = detail::validate(scenario, max_ranks(path), what);
  if (path != PredictionPath::Recorded) check_reported_bytes(scenario);
  return algorithm;
}

namespace {

template <typename Sizes>
std::vector<std::uint64_t> widen(const Sizes& v) {
  return {v.begin(), v.end()};
}

Forecast from_traffic(const Scenario& s, const CostModel& model) {
  const Traffic traffic = simulate_traffic(s);
  Forecast f;
  f.path = PredictionPath::MessageLevel;
  f.algorithm = f.runs_as = traffic.algorithm;
  f.steps = traffic.steps;
  f.messages = traffic.messages.size();
  f.bytes_sent = traffic.bytes_sent;
  f.prediction = predict(traffic, model);
  return f;
}

// forecast() of one algorithm (auto: as the simulated transport runs it).
Forecast forecast_as_named(Scenario s, const CostModel& model, PredictionPath path) {
  if (path == PredictionPath::Recorded) {
    const Run run = simulate(s);
    Forecast f;
    f.path = path;
    f.algorithm = f.runs_as = run.algorithm;
    f.steps = run.steps;
    f.messages = run.messages.size();
    f.bytes_sent = widen(run.bytes_sent);
    f.prediction = predict(run, model);
    return f;
  }
  if (path == PredictionPath::MessageLevel) return from_traffic(s, model);

  std::string why;
  if (model.topology == Topology::Switch ||
      (model.topology == Topology::Ring && !neighbours_only(s))) {
    why =
        "closed forms are for the fully connected topology (and, for algorithms that only talk "
        "to ring neighbours, the ring), not " +
        std::string(topology_name(model.topology));
  } else if (!model.full_duplex) {
    why =
        "closed forms price full-duplex ports, and this model's ranks share their bandwidth "
        "between sending and receiving";
  } else if (model.cores > 0 && s.ranks > model.cores) {
    why = "more ranks than the model's " + std::to_string(model.cores) +
          " cores: the cores term counts the ranks busy in each step, which closed forms do not";
  } else if (auto schedule = closed_form(s, &why)) {
    Forecast f;
    f.path = PredictionPath::ClosedForm;
    f.algorithm = schedule->algorithm;
    f.runs_as = schedule->runs_as;
    f.steps = schedule->steps;
    f.messages = schedule->messages;
    f.bytes_sent = schedule->bytes_sent;
    f.prediction = predict(*schedule, model);
    return f;
  }
  if (path == PredictionPath::ClosedForm)
    throw std::invalid_argument(why + " (the message-level path answers up to " +
                                std::to_string(kMaxTrafficRanks) + " ranks: --path messages)");
  if (s.ranks > kMaxTrafficRanks)
    throw std::invalid_argument(why + "; the message-level path runs up to " +
                                std::to_string(kMaxTrafficRanks) + " ranks, not " +
                                std::to_string(s.ranks));
  Forecast f = from_traffic(s, model);
  f.why = why;
  return f;
}

// auto: every other algorithm of the table priced by `path`, the fastest
// kept (the first on a tie); those the path cannot price are noted.
Forecast fastest(const Scenario& s, const CostModel& model, PredictionPath path) {
  Scenario named = s;
  std::optional<Forecast> best;
  std::vector<std::string> unpriced;
  for (const Algorithm<AllReduceFn>& a : all_reduce_algorithms()) {
    if (a.run == all_reduce_auto) continue;
    named.algorithm = std::string(a.name);
    try {
      Forecast f = forecast_as_named(named, model, path);
      if (!best || f.prediction.total_s < best->prediction.total_s) best = std::move(f);
    } catch (const std::invalid_argument& error) {
      unpriced.push_back(named.algorithm + ": " + error.what());
    }
  }
  if (!best)
    throw std::invalid_argument("auto could price none of the algorithms: " + unpriced.front());
  best->algorithm = "auto";
  best->unpriced = std::move(unpriced);
  return *best;
}

}  // namespace

bool is_all_reduce_auto(const Scenario& s) {
  return s.collective == Collective::AllReduce && !s.algorithm.empty() &&
         find_algorithm(all_reduce_algorithms(), s.collective, s.algorithm).run == all_reduce_auto;
}

std::string measured_auto_choice(const Scenario& s, const CostModel& model) {
  // TCP ranks that outnumber their host's processors make auto send fewer
  // messages (all_reduce.cpp); here the model's cores say whether they do.
  const bool crowded = model.cores > 0 && s.ranks > model.cores;
  return std::string(all_reduce_auto_choice(s.count * element_size(s.dtype), s.ranks, crowded));
}

Forecast forecast(const Scenario& scenario, const CostModel& model, PredictionPath path) {
  Scenario s = scenario;
  s.values = ValueMode::Off;
  if (!is_all_reduce_auto(s)) return forecast_as_named(s, model, path);
  // The path's own limits apply to each algorithm (fastest notes those it
  // refuses), not to auto's name.
  check_scenario(s, path == PredictionPath::Recorded ? path : PredictionPath::ClosedForm);
  Forecast f = fastest(s, model, path);
  f.rule = measured_auto_choice(s, model);
  if (f.rule == f.runs_as) {
    f.rule_s = f.prediction.total_s;
  } else {
    Scenario rule = s;
    rule.algorithm = f.rule;
    try {
      f.rule_s = forecast_as_named(rule, model, path).prediction.total_s;
    } catch (const std::invalid_argument&) {
      f.rule_s = 0;  // unpriced: listed there
    }
  }
  return f;
}

}  // namespace ringlab::sim
