// How long each step of a real run took, by the ranks' clocks, beside what
// the cost model predicts for it (`ringlab replay --timings`).
//
// The ranks' times are on one axis: a traced job's ranks share an origin
// (the launcher's steady clock, or rank 0's, passed through the store), and
// the ranks of one machine share its steady clock. A step's events are
// those the rank ran in it (RealWalkthrough::event_steps): on rank r, step
// k ends when its last event of step k ends, and took from the end of its
// previous step (or the collective's start) until then. The job's step k
// ends when the last rank's does: the slowest rank of a step is that last
// one, the rank the others waited for (its own part of the step, from the
// end of its previous one, is slowest_seconds).
#pragma once

#include <vector>

#include "simulator/cost.hpp"
#include "simulator/real_run.hpp"

namespace ringlab::sim {

struct StepTiming {
  Step step = 0;
  bool measured = false;  // some rank ran an event in it (with times)
  double seconds = 0;     // the job's: from the end of the step before
  int slowest_rank = -1;       // the rank that ended the step last
  double slowest_seconds = 0;  // its own part of it
  double predicted_seconds = 0;
};

struct RunTimings {
  std::vector<StepTiming> steps;  // 0 .. run.steps
  double seconds = 0;             // from the first rank's start to the last step's end
  double predicted_seconds = 0;
};

// Needs a kept walkthrough (w.kept).
RunTimings real_timings(const RealWalkthrough& w, const CostModel& model);

}  // namespace ringlab::sim
