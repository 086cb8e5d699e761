#include "exercises/stages.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <new>
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

// What the learner reads when their function's allocation failed: the cap
// `ringlab exercise check` puts on the program (RLIMIT_DATA), if any.
std::string out_of_memory(int rank) {
  rlimit limit{};
  std::string cap = "this machine's memory";
  if (::getrlimit(RLIMIT_DATA, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    cap = std::to_string(limit.rlim_cur >> 20) +
          " MiB (ringlab exercise check --memory-mb sets it)";
  return "rank " + std::to_string(rank) +
         " ran out of memory in your function (std::bad_alloc): the check lets the exercise's "
         "program use " + cap +
         ", and a case needs only its buffers and a few more of their size: does something "
         "allocate far more?";
}

// Where a rank reports (evidence.hpp); reporter null: nowhere.
struct Reporting {
  const Reporter* reporter = nullptr;
  std::string stage;
  void send(Record::Kind kind, const CaseId& id) const {
    if (reporter) reporter->send({kind, id, ""});
  }
};

// Runs one rank's part of case k, keeping what happened in `mine`; a throw
// (the function's, or a wrong result) goes on to the caller.
void run_rank(const Exercise& exercise, const Function& fn, const Case& c, const RankRun& run,
              RankOutcome& mine, const std::string& where, const Reporting& report,
              std::size_t k) {
  const CaseId id{report.stage, c.ranks, static_cast<int>(k) + 1, run.inner.rank()};
  report.send(Record::Kind::Begin, id);
  try {
    mine = run_case_on_rank(exercise, fn, c, run);
  } catch (const std::exception& e) {
    report.send(Record::Kind::Failed, id);
    const bool memory = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
    mine.ran = true;
    mine.error = memory ? out_of_memory(id.rank) : e.what();
    mine.peer_failed = dynamic_cast<const PeerError*>(&e) != nullptr;
    if (memory) throw RankFailure(where + ": " + mine.error);
    // One rank of a tcp world: say which case, as only this process knows.
    if (backends::is_launched_rank()) throw RankFailure(where + ": " + plain_steps(e.what()));
    throw;  // as it is: the simulator explains a timeout as a deadlock
  }
  if (report.reporter) report.reporter->done(id, mine.result);
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

// One case in the simulator: its failure, if any (ranks cleared for a
// deadlock, which the simulator explains better than the ranks' timeouts).
std::optional<Failure> simulate_case(const Exercise& exercise, const Function& fn,
                                     const std::vector<Case>& cases, std::size_t k,
                                     const Reporting& report) {
  const Case& c = cases[k];
  std::vector<RankOutcome> ranks(static_cast<std::size_t>(c.ranks));
  const std::string where = case_text(exercise, c, k, cases.size());
  std::string error;
  WatchWorld watch;
  try {
    sim::FiberWorld world(c.ranks, /*move_data=*/true);
    KnowledgeWorld knowledge;
    world.run([&](Transport& inner) {
      auto knowing = knowing_transport(inner, knowledge);
      const bool barrier = exercise.shape == Shape::Barrier;
      run_rank(exercise, fn, c,
               {inner, *knowing, nullptr, 0, barrier ? knowing.get() : nullptr, &watch},
               ranks[static_cast<std::size_t>(inner.rank())], where, report, k);
    });
  } catch (const std::exception& e) {
    error = e.what();
  }
  const bool failed = std::any_of(ranks.begin(), ranks.end(),
                                  [](const RankOutcome& o) { return o.ran && !o.ok(); });
  if (!failed && error.empty()) return std::nullopt;
  if (error.rfind("deadlock", 0) == 0) {
    ranks.clear();
    if (every_rank_receives_first(watch)) error = receive_first_deadlock(error);
  }
  return Failure{kSimulatorStage, c, static_cast<int>(k) + 1, static_cast<int>(cases.size()),
                 std::move(ranks), error};
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
                            std::span<const int> worlds, bool large, const Reporter* reporter) {
  StageResult result;
  const Reporting report{reporter, kSimulatorStage};
  for (int P : worlds) {
    report.send(Record::Kind::World, {kSimulatorStage, P});
    const std::vector<Case> cases = cases_for(exercise, P, large);
    for (std::size_t k = 0; k < cases.size(); ++k) {
      result.failure = simulate_case(exercise, fn, cases, k, report);
      if (result.failure) return result;
      ++result.cases;
    }
  }
  return result;
}

StageResult check_on_backend(const Exercise& exercise, const Function& fn,
                             const std::string& backend, std::span<const int> worlds,
                             Duration timeout, const Reporter* reporter) {
  StageResult result;
  ProcessGroupOptions options;
  options.timeout = timeout;
  options.check_arguments = false;
  const Reporting report{reporter, backend};
  for (int P : worlds) {
    report.send(Record::Kind::World, {backend, P});
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
                       case_text(exercise, cases[k], k, cases.size()), report, k);
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
