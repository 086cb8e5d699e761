// For the train_elastic tests: what the lesson's workers printed, parsed, and
// a float64 reference of the training it does (tests/training_reference.hpp),
// epoch by epoch, at any world size.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "training/checkpoint.hpp"
#include "training/init.hpp"
#include "training/module.hpp"
#include "training_reference.hpp"

namespace ringlab::testing {

// The lines of the lesson's workers, in the order they appear in `output`.
struct TrainElasticLines {
  // By pid: ranks that are threads of one process (inproc) share one.
  struct Worker {
    std::map<std::string, std::string> env;  // the "Initializing process group with" dict
    int rank = -1, local_rank = -1;          // from "train worker starting..."
    std::vector<std::int64_t> epochs;        // in the order printed
    std::vector<double> losses;
  };
  struct Epoch {
    int pid;
    std::int64_t epoch;
    int rank;
    double loss;
  };
  std::map<int, Worker> workers;    // by pid
  std::vector<int> starts;          // pids, in the order of their "starting" lines
  std::vector<Epoch> epochs;        // every epoch line, in order
  std::vector<std::string> loaded;  // the paths of "load checkpoint from PATH"
  // Rank 0's "resuming at epoch E: PATH was saved after ...": E, in order.
  std::vector<std::int64_t> resumed;
  std::vector<std::string> other;  // every line the lesson's workers do not print

  explicit TrainElasticLines(const std::string& output) {
    static const std::regex init(R"(^\[(\d+)\] Initializing process group with: \{(.*)\}$)");
    static const std::regex entry(R"('([A-Z_]+)': '([^']*)')");
    static const std::regex start(
        R"(^\[(\d+)\] \(rank = (\d+), local_rank = (\d+)\) train worker starting\.\.\.$)");
    static const std::regex load(R"(^load checkpoint from (.+)$)");
    static const std::regex resuming(
        R"(^\[\d+\] resuming at epoch (\d+): .+ was saved after epoch (\d+)'s step with "epoch": )"
        R"((\d+) \(the article's save_checkpoint\(i, \.\.\.\)\), and training resumes at the )"
        R"(epoch it holds, so epoch (\d+) runs again and its update is applied a second time$)");
    static const std::regex epoch(
        R"(^\[(\d+)\] epoch (\d+) \(rank = (\d+), local_rank = (\d+)\) loss = (\S+)$)");
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_match(line, m, init)) {
        Worker& w = workers[std::stoi(m[1])];
        const std::string dict = m[2];
        for (auto it = std::sregex_iterator(dict.begin(), dict.end(), entry);
             it != std::sregex_iterator(); ++it)
          w.env[(*it)[1]] = (*it)[2];
      } else if (std::regex_match(line, m, start)) {
        const int pid = std::stoi(m[1]);
        workers[pid].rank = std::stoi(m[2]);
        workers[pid].local_rank = std::stoi(m[3]);
        starts.push_back(pid);
      } else if (std::regex_match(line, m, load)) {
        loaded.push_back(m[1]);
      } else if (std::regex_match(line, m, resuming) && m[1] == m[2] && m[1] == m[3] &&
                 m[1] == m[4]) {
        resumed.push_back(std::stoll(m[1]));
      } else if (std::regex_match(line, m, epoch)) {
        const int pid = std::stoi(m[1]);
        Worker& w = workers[pid];
        w.epochs.push_back(std::stoll(m[2]));
        w.losses.push_back(std::stod(m[5]));
        epochs.push_back({pid, std::stoll(m[2]), std::stoi(m[3]), std::stod(m[5])});
      } else {
        other.push_back(line);
      }
    }
  }

  // The pids whose dict and rank match: {"WORLD_SIZE", "4"}, rank 2.
  std::vector<int> with(const std::map<std::string, std::string>& want, int rank = -1) const {
    std::vector<int> pids;
    for (const auto& [pid, w] : workers)
      if ((rank < 0 || w.rank == rank) &&
          std::all_of(want.begin(), want.end(), [&](const auto& kv) {
            const auto it = w.env.find(kv.first);
            return it != w.env.end() && it->second == kv.second;
          }))
        pids.push_back(pid);
    return pids;
  }
  bool trained(int pid) const {
    const auto it = workers.find(pid);
    return it != workers.end() && !it->second.epochs.empty();
  }
  // The highest epoch any of pids printed (-1: none).
  std::int64_t last_epoch(const std::vector<int>& pids) const {
    std::int64_t last = -1;
    for (int pid : pids)
      if (const auto it = workers.find(pid); it != workers.end())
        for (std::int64_t e : it->second.epochs) last = std::max(last, e);
    return last;
  }
  // The pid of rank `rank` in the n-th round (n = 0, 1, ...) on this output,
  // counting that rank's "starting" lines; 0 when there is none yet.
  int pid_of(int rank, int n) const {
    for (int pid : starts)
      if (workers.at(pid).rank == rank && n-- == 0) return pid;
    return 0;
  }
};

// The workers of one round resume together, at the epoch the checkpoint of
// the previous round holds, as the article's program does: the highest epoch
// that round printed (`last_done`), saved after its step and run again; or
// the one before, when the round stopped between printing it and saving it.
// Each printed its epochs in order from there, without a gap.
inline void check_resume(const TrainElasticLines& lines, const std::vector<int>& round,
                         std::int64_t last_done) {
  REQUIRE(!round.empty());
  std::vector<std::int64_t> firsts;
  for (int pid : round) {
    const auto& epochs = lines.workers.at(pid).epochs;
    REQUIRE_MESSAGE(!epochs.empty(), "pid " << pid << " trained no epoch");
    firsts.push_back(epochs.front());
    for (std::size_t i = 1; i < epochs.size(); ++i) CHECK(epochs[i] == epochs[i - 1] + 1);
  }
  CAPTURE(last_done);
  CHECK(std::adjacent_find(firsts.begin(), firsts.end(), std::not_equal_to<>()) == firsts.end());
  CHECK(firsts.front() >= last_done - 1);
  CHECK(firsts.front() <= last_done);
}

// ---- the reference ---------------------------------------------------------------

inline ref::ToyParams toy_params_of(training::ToyModel& model) {
  ref::ToyParams p;
  const auto copy = [](const training::FloatTensor& t, std::vector<double>& to) {
    REQUIRE(t.numel() == to.size());
    for (std::size_t i = 0; i < to.size(); ++i) to[i] = t[i];
  };
  copy(model.net1().weight.value, p.w1);
  copy(model.net1().bias.value, p.b1);
  copy(model.net2().weight.value, p.w2);
  copy(model.net2().bias.value, p.b2);
  return p;
}

// The lesson's model before its first epoch: training::init_toy_model with
// Generator(42), as the lesson's file comment says.
inline ref::ToyParams train_elastic_start() {
  training::ToyModel model;
  training::Generator g(42);
  training::init_toy_model(model, g);
  return toy_params_of(model);
}

// One epoch at `world` ranks: each rank's loss before the step, and the
// parameters after SGD (lr 0.001) on the gradient averaged over the ranks.
// Rank r's samples in epoch i come from Generator(65536 i + r): 20 inputs of
// 10, then 20 labels of 5 (the lesson's file comment).
inline std::vector<double> train_elastic_epoch(ref::ToyParams& p, std::int64_t epoch, int world) {
  ref::ToyParams sum;
  std::vector<double> losses;
  for (int r = 0; r < world; ++r) {
    training::Generator g(static_cast<std::uint32_t>(epoch) * 65536u +
                          static_cast<std::uint32_t>(r));
    const training::FloatTensor x = training::randn(20, 10, g);
    const training::FloatTensor y = training::randn(20, 5, g);
    const ref::ToyResult result =
        ref::toy_loss_and_grad(p, std::vector<double>(x.values().begin(), x.values().end()),
                               std::vector<double>(y.values().begin(), y.values().end()));
    losses.push_back(result.loss);
    for (auto [s, g_of] :
         {std::pair{&sum.w1, &result.grad.w1}, std::pair{&sum.b1, &result.grad.b1},
          std::pair{&sum.w2, &result.grad.w2}, std::pair{&sum.b2, &result.grad.b2}})
      for (std::size_t i = 0; i < s->size(); ++i) (*s)[i] += (*g_of)[i] / world;
  }
  ref::sgd_step(p, sum, 0.001);
  return losses;
}

// The float64 reference of a run made of rounds (the groups of workers one
// after the other, or runs alone), replayed the way the lesson and the
// article's program resume: a round starts from a checkpoint that an earlier
// round saved after the step of the epoch it resumes at, and runs that epoch
// again. Which earlier round's state it is (a round stopped while it saved
// leaves the one before) is the one that gives the losses its ranks printed
// at that epoch; every later epoch's losses must then follow.
class ReplayedRounds {
 public:
  // One round: the pids of its workers (rank 0's first epoch is the round's).
  void round(const TrainElasticLines& lines, const std::vector<int>& pids, int world) {
    std::int64_t first = -1, last = -1;
    for (int pid : pids) {
      const auto& w = lines.workers.at(pid);
      REQUIRE_MESSAGE(!w.epochs.empty(), "pid " << pid << " trained no epoch");
      if (w.rank == 0) first = w.epochs.front();
      last = std::max(last, w.epochs.back());
    }
    REQUIRE_MESSAGE(first >= 0, "no rank 0 among the round's pids");
    ref::ToyParams p = start_of(lines, pids, world, first);
    for (std::int64_t epoch = first; epoch <= last; ++epoch) {
      const std::vector<double> losses = train_elastic_epoch(p, epoch, world);
      for (int pid : pids) check_loss(lines.workers.at(pid), epoch, losses);
      after_[epoch].insert(after_[epoch].begin(), p);
    }
  }
  // The states after the step of an epoch, the latest round's first.
  const std::vector<ref::ToyParams>& after(std::int64_t epoch) const {
    static const std::vector<ref::ToyParams> none;
    const auto it = after_.find(epoch);
    return it == after_.end() ? none : it->second;
  }

 private:
  // The loss a worker printed at `epoch` (its first time in this round).
  static void check_loss(const TrainElasticLines::Worker& w, std::int64_t epoch,
                         const std::vector<double>& losses) {
    for (std::size_t i = 0; i < w.epochs.size(); ++i)
      if (w.epochs[i] == epoch) {
        CAPTURE(epoch);
        CAPTURE(w.rank);
        REQUIRE(static_cast<std::size_t>(w.rank) < losses.size());
        CHECK(ref::close(w.losses[i], losses[static_cast<std::size_t>(w.rank)], 1e-5));
        return;
      }
  }
  static bool gives(ref::ToyParams p, const TrainElasticLines& lines, const std::vector<int>& pids,
                    int world, std::int64_t epoch) {
    const std::vector<double> losses = train_elastic_epoch(p, epoch, world);
    for (int pid : pids) {
      const auto& w = lines.workers.at(pid);
      if (w.epochs.front() != epoch || static_cast<std::size_t>(w.rank) >= losses.size() ||
          !ref::close(w.losses.front(), losses[static_cast<std::size_t>(w.rank)], 1e-5))
        return false;
    }
    return true;
  }
  ref::ToyParams start_of(const TrainElasticLines& lines, const std::vector<int>& pids, int world,
                          std::int64_t first) const {
    if (after_.empty()) {
      REQUIRE_MESSAGE(first == 0, "the first round starts at epoch " << first);
      return train_elastic_start();
    }
    for (const ref::ToyParams& saved : after(first))
      if (gives(saved, lines, pids, world, first)) return saved;
    FAIL("no earlier round's state after epoch " << first
                                                 << " gives the losses this round printed");
    return {};
  }
  std::map<std::int64_t, std::vector<ref::ToyParams>> after_;
};

// Every value of the checkpoint's model within float32 rounding of p.
inline void check_model(const training::Checkpoint& c, const ref::ToyParams& p) {
  const std::map<std::string, const std::vector<double>*> expected = {
      {"net1.weight", &p.w1}, {"net1.bias", &p.b1}, {"net2.weight", &p.w2}, {"net2.bias", &p.b2}};
  REQUIRE(c.model.size() == 4);
  for (const training::StateEntry& e : c.model) {
    CAPTURE(e.name);
    REQUIRE(expected.count(e.name));
    const std::vector<double>& want = *expected.at(e.name);
    REQUIRE(e.value.numel() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAPTURE(i);
      CHECK(ref::close(e.value[i], want[i], 1e-5, 1e-6));
    }
  }
}

}  // namespace ringlab::testing
