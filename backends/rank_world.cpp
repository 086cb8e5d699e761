#include "backends/rank_world.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "backends/backends.hpp"

namespace ringlab::backends {

namespace {

// The one connection of a launched process (rank_world.hpp). Plain data
// behind a pointer: nothing is made before main, and what it holds is
// destroyed by the atexit handler that releases it, not after it.
struct LaunchedSeat {
  std::string name;  // ProcessWorld::name of the world that made it
  RankSpec me;
  std::unique_ptr<RankConnection> connection;
};
constinit LaunchedSeat* launched_seat = nullptr;

// This process is one rank of a launched job: its one connection (made by
// the first world), this world run on it.
std::vector<std::string> run_launched(const ProcessWorld& w) {
  if (!launched_seat) {
    const EnvironmentLookup environment = process_environment();
    RankSpec me = rank_spec(environment, w.timeout);
    check_world(me.world.rank, me.world.world_size, w.world);
    std::unique_ptr<RankConnection> connection = w.connect(me, environment);
    launched_seat = new LaunchedSeat{w.name, std::move(me), std::move(connection)};
    std::atexit(release_launched_seat);
  }
  LaunchedSeat& seat = *launched_seat;
  if (seat.name != w.name)
    throw std::invalid_argument("this process is rank " + std::to_string(seat.me.world.rank) +
                                " of a job it joined for the " + seat.name +
                                ", and one process is one rank of one job: run every world of "
                                "this program there (this one asked for the " +
                                w.name + ")");
  check_world(seat.me.world.rank, seat.me.world.world_size, w.world);
  std::vector<std::string> answers(static_cast<std::size_t>(w.world));
  answers[static_cast<std::size_t>(seat.me.world.rank)] = w.run(*seat.connection, seat.me);
  return answers;
}

// No launcher: `world` forks of this process, each connecting and running
// the world on its rank, waited for (rank_processes.hpp).
std::vector<std::string> run_forked(const ProcessWorld& w) {
  TraceSession* session = w.trace;
  if (w.before_fork) w.before_fork();
  RankProcessOptions options = w.forks;
  if (session) options.trace = next_traced_world(*session);
  RankProcesses ranks = run_rank_processes(w.world, options, [&](const RankStart& start) {
    const EnvironmentLookup lookup = start.lookup();
    const RankSpec me = rank_spec(lookup, w.timeout);
    const std::unique_ptr<RankConnection> connection = w.connect(me, lookup);
    return w.run(*connection, me);
  });
  const launch::LaunchResult& result = ranks.launch;
  if (session) end_traced_world(*session, ranks.traced, options.name, result.exit_code == 0);
  if (result.exit_code != 0) {
    // "Its error is above" only when the rank blamed wrote one.
    const bool said_why = result.first_failure && !result.first_failure->error.empty();
    const std::string hint = w.failure_hint.empty() ? "" : "; " + w.failure_hint;
    throw std::runtime_error(w.name + ": " + result.message +
                             (said_why ? " (its error is above" : " (it printed no error") + hint +
                             ")");
  }
  return ranks.answers;
}

}  // namespace

EnvironmentLookup process_environment() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

bool is_launched_rank(const EnvironmentLookup& lookup) { return tcp::names_a_rank(lookup); }

std::optional<tcp::RankPlace> launched_place(const EnvironmentLookup& lookup) {
  if (!is_launched_rank(lookup)) return std::nullopt;
  return tcp::place_from_environment(lookup);
}

int launched_world_size() {
  const std::optional<tcp::RankPlace> place = launched_place();
  return place ? place->world_size : 0;
}

void check_world(int rank, int world_size, int asked) {
  if (world_size == asked) return;
  const std::string size = std::to_string(world_size), wanted = std::to_string(asked);
  throw std::invalid_argument(
      "this process is rank " + std::to_string(rank) + " of a world of " + size +
      " (WORLD_SIZE or the launcher's variables), but it was asked to run " + wanted +
      " ranks: pass --world-size " + size + " (-n " + size + "), or start " + wanted +
      " ranks (ringlab run --nproc-per-node " + wanted + " -- ...)");
}

RankSpec rank_spec(const EnvironmentLookup& lookup, Duration group_timeout) {
  RankSpec spec;
  spec.world = tcp::from_environment(lookup);  // names a missing or bad variable
  spec.timeout_from_environment = lookup("RINGLAB_TIMEOUT_MS") != nullptr;
  if (!spec.timeout_from_environment) spec.world.timeout = group_timeout;
  return spec;
}

RankSpec rank_spec(int rank, int world_size, const EnvironmentLookup& lookup,
                   Duration group_timeout) {
  RankSpec spec;
  spec.world.rank = rank;
  spec.world.world_size = world_size;
  tcp::read_settings(lookup, spec.world);
  spec.timeout_from_environment = lookup("RINGLAB_TIMEOUT_MS") != nullptr;
  if (!spec.timeout_from_environment) spec.world.timeout = group_timeout;
  return spec;
}

RankMode rank_mode(const EnvironmentLookup& lookup, const std::function<bool()>& wants_threads) {
  if (is_launched_rank(lookup)) return RankMode::Launched;
  if (wants_threads && wants_threads()) return RankMode::Threads;
  return RankMode::Forked;
}

std::vector<std::string> run_process_world(const ProcessWorld& w) {
  switch (rank_mode(process_environment(), w.wants_threads)) {
    case RankMode::Launched:
      return run_launched(w);
    case RankMode::Threads:
      w.run_threads();
      return {};
    case RankMode::Forked:
      return run_forked(w);
  }
  return {};
}

void release_launched_seat() {
  delete launched_seat;
  launched_seat = nullptr;
}

}  // namespace ringlab::backends
