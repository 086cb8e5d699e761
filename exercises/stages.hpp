// The checks of `ringlab exercise check`, one stage at a time: the simulator
// first (every rank a fiber on one thread: the same answer every time, and
// the only stage that can tell a barrier that lets a rank out early), then
// each backend of the table that runs on a CPU: inproc, nccl_rules where this
// build has it, tcp. A stage stops at its first failing case.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "exercises/evidence.hpp"
#include "exercises/rank_run.hpp"

namespace ringlab::exercises {

inline constexpr const char* kSimulatorStage = "simulator";

struct Failure {
  std::string stage;  // "simulator" or a backend's name
  Case c;
  int case_number = 0;  // 1-based, within its world; 0: not known here (a tcp world)
  int cases_in_world = 0;
  std::vector<RankOutcome> ranks;  // per rank, where the ranks ran in this process
  std::string error;               // what the world's run threw ("" if it returned)
};

// A deadlock of the simulator where every rank is blocked receiving
// (watch.hpp) gets this ending instead of the simulator's question.
inline constexpr const char* kReceiveFirst =
    "every rank is blocked receiving, and would send only after its receive";

struct StageResult {
  int cases = 0;  // cases that passed
  std::optional<Failure> failure;
};

// The backends `check` runs, in order, after the simulator: those of
// inproc, nccl_rules and tcp that this build's backend table has.
std::vector<std::string> check_backends();

// In the simulator, worlds in order; with large, the 100,003-element cases too.
// With a reporter, every world, every case's start on each rank and every
// rank's result is reported as it happens (evidence.hpp).
StageResult check_simulated(const Exercise& exercise, const Function& fn,
                            std::span<const int> worlds, bool large,
                            const Reporter* reporter = nullptr);

// On a backend: one world per size, every case of it in that world, each
// wait limited to `timeout`. A process that is itself one rank of the world
// (the tcp backend's, RANK and WORLD_SIZE set) lets its failure through.
StageResult check_on_backend(const Exercise& exercise, const Function& fn,
                             const std::string& backend, std::span<const int> worlds,
                             Duration timeout, const Reporter* reporter = nullptr);

// The failure as a learner reads it: where, which case, and what every rank
// that went wrong was left with (or what it waited for).
std::string describe(const Exercise& exercise, const Failure& failure);

}  // namespace ringlab::exercises
