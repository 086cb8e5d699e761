#include "gui/walkthrough.hpp"

#include <algorithm>
#include <stdexcept>

#include "gui/training_walk.hpp"
#include "primitives/algorithms.hpp"
#include "simulator/param_server.hpp"

namespace ringlab::gui {

namespace {

constexpr const char* kRingAllReduce = "ring_allreduce";

// The parameter server's split of a world: two fifths of the ranks (at least
// one, at most half) serve, the rest are workers; 5 ranks give the
// simulator's default of 2 servers and 3 workers.
int ps_servers(int ranks) { return std::clamp(ranks * 2 / 5, 1, std::max(1, ranks / 2)); }

sim::PsScenario ps_scenario(const Settings& settings) {
  sim::PsScenario ps;
  ps.servers = ps_servers(settings.ranks);
  ps.workers = settings.ranks - ps.servers;
  ps.keys = static_cast<std::size_t>(settings.elements) * static_cast<std::size_t>(ps.servers);
  // Partial updates: each worker touches a quarter of the keys.
  ps.push_per_worker = std::max<std::size_t>(1, ps.keys / 4);
  ps.pull_per_worker = ps.push_per_worker;
  ps.dtype = DType::Float32;
  return ps;
}


sim::Scenario collective_scenario(const Settings& settings, Collective collective,
                                  const std::string& algorithm) {
  sim::Scenario scenario;
  scenario.collective = collective;
  scenario.algorithm = algorithm;
  scenario.ranks = settings.ranks;
  scenario.count = static_cast<std::size_t>(settings.elements);
  scenario.dtype = collective_dtype(settings);
  scenario.op = settings.op;
  scenario.root = effective_root(settings);
  scenario.values = sim::ValueMode::On;
  if (collective == Collective::Scatter) {
    // The article's scatter_list: block d is tensor([d, d, ...]).
    scenario.input = [](int rank, std::size_t) { return static_cast<double>(rank); };
  } else if (collective == Collective::AllToAll) {
    // As the all_to_all lesson: entry j of rank r's input list is 10r + j
    // (100r + j past ten ranks), so each value says who sent it (its tens)
    // and to whom (its units), and the output lists show the transpose.
    const std::size_t count = scenario.count;
    const double base = settings.ranks <= 10 ? 10.0 : 100.0;
    scenario.input = [count, base](int rank, std::size_t i) {
      return base * rank + static_cast<double>(i / count);
    };
  } else {
    scenario.input = sim::default_input;
  }
  return scenario;
}

std::string act_title(const sim::Run& run) {
  std::string title = run.operation + " (" + run.algorithm;
  const CollectiveInfo* collective = find_collective(run.operation);
  if (collective && collective->rooted) title += ", root " + std::to_string(run.root);
  if (collective && collective->reduces) title += ", " + std::string(op_name(run.op));
  return title + ")";
}

Act make_act(sim::Run run) {
  Act act;
  act.title = act_title(run);
  act.prediction = sim::predict(run, gui_cost_model());
  act.run = std::move(run);
  return act;
}

void check_settings(const Settings& settings) {
  if (settings.ranks < kMinRanks || settings.ranks > kMaxRanks)
    throw std::invalid_argument("world size " + std::to_string(settings.ranks) +
                                " is out of range: pick 2 to 16 ranks");
  if (settings.elements < 1 || settings.elements > kMaxElements)
    throw std::invalid_argument("elements per rank " + std::to_string(settings.elements) +
                                " is out of range: pick 1 to 64");
  if (settings.root >= settings.ranks)
    throw std::invalid_argument("root " + std::to_string(settings.root) + " is not a rank of a " +
                                std::to_string(settings.ranks) + "-rank world");
}

}  // namespace

std::vector<std::string> primitive_names() {
  std::vector<std::string> names;
  names.emplace_back("all_reduce");
  for (Collective c : kAllCollectives)
    if (c != Collective::AllReduce) names.emplace_back(collective_name(c));
  names.emplace_back(kScatterGather);
  names.emplace_back(kParameterServer);
  names.emplace_back(kDdpStep);
  names.emplace_back(kHorovodStep);
  return names;
}

bool is_training_step(const std::string& primitive) {
  return primitive == kDdpStep || primitive == kHorovodStep;
}

std::vector<std::string> algorithm_names(const std::string& primitive) {
  if (primitive == kParameterServer) return {"partial_updates"};
  // A training step's process group: any all_reduce.
  if (is_training_step(primitive)) return ringlab::algorithm_names(Collective::AllReduce);
  if (primitive == kScatterGather) return ringlab::algorithm_names(Collective::Scatter);
  return ringlab::algorithm_names(parse_collective(primitive));
}

std::vector<std::string> scenario_names() {
  std::vector<std::string> names{kRingAllReduce, kScatterGather, kParameterServer, kDdpStep,
                                 kHorovodStep};
  for (Collective c : kAllCollectives) names.emplace_back(collective_name(c));
  return names;
}

Settings primitive_defaults(const std::string& primitive) {
  Settings settings;
  settings.primitive = primitive;
  if (primitive == kParameterServer) {
    settings.ranks = 5;     // 2 servers, 3 workers (ps_servers)
    settings.elements = 8;  // keys per server: 16 keys in all
  }
  if (is_training_step(primitive)) {
    settings.ranks = 2;
    settings.algorithm = "ring";
    // DDP: two buckets of two layers each. Horovod: the first fusion buffer
    // takes three layers, the last one waits for step().
    settings.elements = primitive == kDdpStep ? 4 : 6;
  }
  return settings;
}

Settings scenario_settings(const std::string& name, int ranks) {
  const std::vector<std::string> names = scenario_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown scenario '" + name + "': pick one of " + list);
  }
  Settings settings = primitive_defaults(name == kRingAllReduce ? "all_reduce" : name);
  if (ranks > 0) settings.ranks = ranks;
  if (name == kRingAllReduce) {
    settings.algorithm = "ring";
    settings.elements = settings.ranks;  // one element per chunk: every message carries one value
  }
  return settings;
}

DType collective_dtype(const Settings& settings) {
  // The articles print integer tensors; AVG needs a floating type.
  if (settings.dtype) return *settings.dtype;
  return settings.op == ReduceOp::AVG ? DType::Float32 : DType::Int64;
}

int effective_root(const Settings& settings) {
  if (settings.root >= 0) return settings.root;
  // The reduce article uses dst = 3 on 4 ranks: the last rank.
  return settings.primitive == "reduce" ? settings.ranks - 1 : 0;
}

sim::CostModel gui_cost_model() { return sim::CostModel{}; }

std::vector<Act> record_acts(const Settings& settings) {
  check_settings(settings);
  std::vector<Act> acts;
  if (is_training_step(settings.primitive)) {
    acts.push_back(record_training_act(settings));
    return acts;
  }
  if (settings.primitive == kParameterServer) {
    acts.push_back(make_act(sim::simulate_parameter_server(ps_scenario(settings))));
    acts.back().title = "parameter server, partial updates (" +
                        std::to_string(ps_servers(settings.ranks)) + " servers, " +
                        std::to_string(settings.ranks - ps_servers(settings.ranks)) +
                        " workers)";
    return acts;
  }
  check_op(settings.op, collective_dtype(settings));
  if (settings.primitive == kScatterGather) {
    // The algorithm control picks the scatter's; the gather uses the same
    // name when it has one (flat/binomial both exist), else its default.
    const std::vector<std::string> gathers = ringlab::algorithm_names(Collective::Gather);
    const std::string gather_algorithm =
        std::find(gathers.begin(), gathers.end(), settings.algorithm) != gathers.end()
            ? settings.algorithm
            : std::string();
    acts.push_back(make_act(
        sim::simulate(collective_scenario(settings, Collective::Scatter, settings.algorithm))));
    acts.push_back(make_act(
        sim::simulate(collective_scenario(settings, Collective::Gather, gather_algorithm))));
    return acts;
  }
  const Collective collective = parse_collective(settings.primitive);
  acts.push_back(make_act(sim::simulate(collective_scenario(settings, collective,
                                                            settings.algorithm))));
  return acts;
}

}  // namespace ringlab::gui
