#include "exercises/stages.hpp"

#include <algorithm>
#include <stdexcept>

#include "backends/backends.hpp"
#include "backends/rank_world.hpp"
#include "exercises/explain.hpp"
#include "simulator/fiber_world.hpp"

namespace ringlab::exercises {

namespace {

// A rank's failure in one case: its outcome is kept, this goes through the
// world so every other rank stops waiting at once.
class RankFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string case_text(const Exercise& exercise, const Case& c, std::size_t k, std::size_t of) {
  return "case " + std::to_string(k + 1) + " of " + std::to_string(of) + " (" +
         describe(exercise, c) + ")";
}

// Runs one rank's part of a case, keeping what happened in `mine`; a throw
// (the function's, or a wrong result) goes on to the caller.
void run_rank(const Exercise& exercise, const Function& fn, const Case& c, const RankRun& run,
              RankOutcome& mine, const std::string& where) {
  try {
    mine = run_case_on_rank(exercise, fn, c, run);
  } catch (const std::exception& e) {
    mine.ran = true;
    mine.error = e.what();
    mine.peer_failed = dynamic_cast<const PeerError*>(&e) != nullptr;
    // One rank of a tcp world: say which case, as only this process knows.
    if (backends::is_launched_rank()) throw RankFailure(where + ": " + plain_steps(e.what()));
    throw;  // as it is: the simulator explains a timeout as a deadlock
  }
  if (!mine.ok()) throw RankFailure(where + ": " + describe(mine, run.inner.rank(), c.dtype));
}

// The first case any rank got wrong, else the world's error, as a Failure.
std::optional<Failure> first_failure(const std::vector<Case>& cases,
                                     std::vector<std::vector<RankOutcome>> outcomes,
                                     const std::string& stage, const std::string& error) {
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const auto& ranks = outcomes[k];
    const bool failed = std::any_of(ranks.begin(), ranks.end(),
                                    [](const RankOutcome& o) { return o.ran && !o.ok(); });
    if (!failed) continue;
    return Failure{stage,
                   cases[k],
                   static_cast<int>(k) + 1,
                   static_cast<int>(cases.size()),
                   std::move(outcomes[k]),
                   error};
  }
  if (error.empty()) return std::nullopt;
  // The ranks were processes of their own: which case failed, their errors
  // above say (case_number 0: unknown here).
  return Failure{stage, cases.front(), 0, static_cast<int>(cases.size()), {}, error};
}

}  // namespace

std::vector<std::string> check_backends() {
  const std::vector<std::string> table = backends::backend_names();
  std::vector<std::string> chosen;
  for (const char* name : {"inproc", "nccl_rules", "tcp"})
    if (std::find(table.begin(), table.end(), name) != table.end()) chosen.emplace_back(name);
  return chosen;
}

StageResult check_simulated(const Exercise& exercise, const Function& fn,
                            std::span<const int> worlds, bool large) {
  StageResult result;
  for (int P : worlds) {
    const std::vector<Case> cases = cases_for(exercise, P, large);
    for (std::size_t k = 0; k < cases.size(); ++k) {
      std::vector<RankOutcome> ranks(static_cast<std::size_t>(P));
      const std::string where = case_text(exercise, cases[k], k, cases.size());
      std::string error;
      try {
        sim::FiberWorld world(P, /*move_data=*/true);
        KnowledgeWorld knowledge;
        world.run([&](Transport& inner) {
          auto knowing = knowing_transport(inner, knowledge);
          const bool barrier = exercise.shape == Shape::Barrier;
          run_rank(exercise, fn, cases[k],
                   {inner, *knowing, nullptr, 0, barrier ? knowing.get() : nullptr},
                   ranks[static_cast<std::size_t>(inner.rank())], where);
        });
      } catch (const std::exception& e) {
        error = e.what();
      }
      const bool failed = std::any_of(ranks.begin(), ranks.end(),
                                      [](const RankOutcome& o) { return o.ran && !o.ok(); });
      if (!failed && error.empty()) {
        ++result.cases;
        continue;
      }
      // A deadlock: the simulator says who waited for whom better than the
      // ranks' timeouts do.
      if (error.rfind("deadlock", 0) == 0) ranks.clear();
      result.failure = Failure{kSimulatorStage,         cases[k],
                               static_cast<int>(k) + 1, static_cast<int>(cases.size()),
                               std::move(ranks),        error};
      return result;
    }
  }
  return result;
}

StageResult check_on_backend(const Exercise& exercise, const Function& fn,
                             const std::string& backend, std::span<const int> worlds,
                             Duration timeout) {
  StageResult result;
  ProcessGroupOptions options;
  options.timeout = timeout;
  options.check_arguments = false;
  for (int P : worlds) {
    const std::vector<Case> cases = cases_for(exercise, P);
    std::vector<std::vector<RankOutcome>> outcomes(cases.size(),
                                                   std::vector<RankOutcome>(std::size_t(P)));
    std::string error;
    try {
      backends::run_ranks(
          backend, P,
          [&](ProcessGroup& pg) {
            Transport& transport = pg.transport();
            for (std::size_t k = 0; k < cases.size(); ++k)
              run_rank(exercise, fn, cases[k], {transport, transport, nullptr, k},
                       outcomes[k][std::size_t(pg.rank())],
                       case_text(exercise, cases[k], k, cases.size()));
          },
          options);
    } catch (const std::exception& e) {
      if (backends::is_launched_rank()) throw;  // one rank of the job: its error is its own report
      error = e.what();
    }
    if (auto failure = first_failure(cases, std::move(outcomes), backend, error)) {
      result.failure = std::move(failure);
      return result;
    }
    result.cases += static_cast<int>(cases.size());
  }
  return result;
}

std::string describe(const Exercise& exercise, const Failure& failure) {
  if (failure.case_number == 0)
    return "FAILED on " + failure.stage + " in the world of " + std::to_string(failure.c.ranks) +
           " ranks:\n  " + plain_steps(failure.error) + "\n";
  std::string text = "FAILED on " + failure.stage + ": case " +
                     std::to_string(failure.case_number) + " of " +
                     std::to_string(failure.cases_in_world) + " in a world of " +
                     std::to_string(failure.c.ranks) + ": " + describe(exercise, failure.c) + "\n";
  bool any = false;
  std::vector<std::string> said;
  for (std::size_t r = 0; r < failure.ranks.size(); ++r) {
    const RankOutcome& o = failure.ranks[r];
    if (!o.ran || o.ok()) continue;
    // After a hang each rank says whom it waited for; a report of the whole
    // world (a deadlock found by the transport) comes once, not once a rank.
    const std::string line = plain_steps(describe(o, static_cast<int>(r), failure.c.dtype));
    if (std::find(said.begin(), said.end(), line) != said.end()) continue;
    said.push_back(line);
    text += "  " + line + "\n";
    any = true;
  }
  if (!any && !failure.error.empty()) text += "  " + plain_steps(failure.error) + "\n";
  return text;
}

}  // namespace ringlab::exercises
