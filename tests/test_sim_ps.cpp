// The parameter server: servers apply SGD to exactly the pushed keys.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "simulator/param_server.hpp"
#include "transport/inproc.hpp"

using namespace ringlab;
using namespace ringlab::sim;

namespace {

PsScenario small_scenario() {
  PsScenario s;
  s.servers = 3;
  s.workers = 4;
  s.keys = 20;
  s.push_per_worker = 3;
  s.pull_per_worker = 5;
  s.iterations = 2;
  s.learning_rate = 0.5;
  s.seed = 11;
  return s;
}

}  // namespace

TEST_CASE("the plan is sparse and deterministic") {
  const PsScenario s = small_scenario();
  const PsPlan a = plan_parameter_server(s), b = plan_parameter_server(s);
  CHECK(a.push_keys == b.push_keys);
  for (const auto& per_worker : a.push_keys)
    for (const auto& keys : per_worker) {
      CHECK(keys.size() == 3);
      CHECK(std::set<std::size_t>(keys.begin(), keys.end()).size() == 3);  // distinct
      CHECK(std::is_sorted(keys.begin(), keys.end()));
    }
}

TEST_CASE("servers update exactly the pushed keys; pulls see the new values") {
  const PsScenario s = small_scenario();
  const PsPlan plan = plan_parameter_server(s);
  // The independent expectation: plain loops over the plan.
  std::vector<double> params = plan.initial_params;
  std::set<std::size_t> touched;
  std::vector<std::vector<double>> expected_pulls(static_cast<std::size_t>(s.workers));
  std::vector<std::set<int>> contributors(s.keys);
  for (std::size_t it = 0; it < static_cast<std::size_t>(s.iterations); ++it) {
    for (std::size_t w = 0; w < static_cast<std::size_t>(s.workers); ++w)
      for (std::size_t j = 0; j < plan.push_keys[it][w].size(); ++j) {
        const std::size_t k = plan.push_keys[it][w][j];
        params[k] -= s.learning_rate * plan.gradients[it][w][j];
        touched.insert(k);
        contributors[k].insert(s.servers + static_cast<int>(w));
      }
    for (std::size_t w = 0; w < static_cast<std::size_t>(s.workers); ++w)
      for (std::size_t k : plan.pull_keys[it][w]) expected_pulls[w].push_back(params[k]);
  }
  REQUIRE(touched.size() < s.keys);  // the check below means something

  const Run run = simulate_parameter_server(s);
  CHECK(run.operation == "parameter_server");
  CHECK(run.roles[0] == "server 0");
  CHECK(run.roles[3] == "worker 0");
  Replay end(run);
  end.seek(run.steps);
  for (int server = 0; server < s.servers; ++server) {
    const Chunk range = plan.key_ranges[static_cast<std::size_t>(server)];
    const int region = run.buffer_of(server, "params");
    REQUIRE(region >= 0);
    const Tensor t = end.tensor(region);
    for (std::size_t i = 0; i < range.count; ++i) {
      const std::size_t k = range.offset + i;
      CAPTURE(k);
      CHECK(t.item_as_double(i) == params[k]);
      // Provenance: the server's own value plus exactly the workers that pushed k.
      RankSet want = RankSet::single(server);
      for (int w : contributors[k]) want = want.unite(RankSet::single(w));
      CHECK(end.provenance_at(region, i) == want);
    }
  }
  // Only pushed keys were ever written on a server's params.
  for (const Write& w : run.writes) {
    const Region& region = run.regions[static_cast<std::size_t>(w.dst.region)];
    if (region.name != "params") continue;
    CHECK(w.kind == WriteKind::Reduce);
    const Chunk range = plan.key_ranges[static_cast<std::size_t>(region.rank)];
    for (std::size_t i = w.dst.offset; i < w.dst.offset + w.dst.count; ++i) CHECK(touched.count(range.offset + i) == 1);
  }
  for (int w = 0; w < s.workers; ++w) {
    const Tensor pulled = end.tensor(run.buffer_of(s.servers + w, "pulled"));
    REQUIRE(pulled.numel() == expected_pulls[static_cast<std::size_t>(w)].size());
    for (std::size_t i = 0; i < pulled.numel(); ++i)
      CHECK(pulled.item_as_double(i) == expected_pulls[static_cast<std::size_t>(w)][i]);
  }
}

TEST_CASE("it runs unchanged on the in-process transport (threads)") {
  PsScenario s = small_scenario();
  s.execution = RankExecution::Threads;
  const Run threads = simulate_parameter_server(s);
  s.execution = RankExecution::Fibers;
  const Run fibers = simulate_parameter_server(s);
  CHECK(threads.messages.size() == fibers.messages.size());
  CHECK(threads.steps == fibers.steps);
  CHECK(threads.values == fibers.values);
  // And without any recorder at all.
  const PsPlan plan = plan_parameter_server(s);
  run_world(s.servers + s.workers, [&](Transport& t) { run_parameter_server(t, s, plan); });
}

TEST_CASE("sparse pushes move fewer bytes than a dense all_reduce") {
  PsScenario s;
  s.servers = 2;
  s.workers = 4;
  s.keys = 4096;
  s.push_per_worker = 64;
  s.pull_per_worker = 64;
  const Run run = simulate_parameter_server(s);
  const PsTraffic t = parameter_server_traffic(run, s);
  CHECK(t.push_bytes == 4u * 64u * 4u);  // 4 workers x 64 keys x float32
  CHECK(t.pull_bytes == 4u * 64u * 4u);
  CHECK(t.key_bytes == 2u * 4u * 64u * 8u);  // push and pull keys, int64
  CHECK(t.header_bytes == 2u * 4u * 2u * 8u);  // 2 phases x 4 workers x 2 servers
  CHECK(t.total_bytes == t.push_bytes + t.pull_bytes + t.key_bytes + t.header_bytes);
  // Ring all_reduce among W = 4 workers: each sends 2(W-1)/W * K * 4 bytes.
  CHECK(t.dense_all_reduce_bytes == 4u * 2u * 3u * 4096u * 4u / 4u);
  CHECK(t.total_bytes < t.dense_all_reduce_bytes);
}
