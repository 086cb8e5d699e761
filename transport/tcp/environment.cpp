// from_environment(): who this process is and where rank 0 listens, from the
// variables a launcher sets. torchrun's names come first (ringlab run sets
// them too), then Slurm's and Open MPI's, so `srun` and `mpirun` work without
// a wrapper. Every error names the variable it read and says what to export.
#include <charconv>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "transport/tcp/tcp.hpp"

namespace ringlab::tcp {

namespace {

// A variable found in the environment: which name supplied it, and its value.
struct Found {
  std::string name;
  std::string value;
};

std::optional<Found> first_of(const EnvironmentLookup& lookup,
                              std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const char* value = lookup(name)) return Found{name, value};
  return std::nullopt;
}

// An integer too large (or small) for long long comes back as the largest
// (smallest) one, so that the caller's range check refuses it as such.
long long parse_integer(const Found& found, const std::string& what_to_set) {
  long long value = 0;
  const char* begin = found.value.data();
  const char* end = begin + found.value.size();
  auto [ptr, error] = std::from_chars(begin, end, value);
  if (error == std::errc::result_out_of_range && ptr == end)
    return found.value.front() == '-' ? std::numeric_limits<long long>::min()
                                      : std::numeric_limits<long long>::max();
  if (found.value.empty() || error != std::errc() || ptr != end)
    throw std::invalid_argument(found.name + "=" + found.value + " is not an integer: export " +
                                found.name + "=" + what_to_set);
  return value;
}

Duration parse_milliseconds(const Found& found) {
  const long long ms = parse_integer(found, "<milliseconds, e.g. 30000>");
  if (ms <= 0)
    throw std::invalid_argument(found.name + "=" + found.value +
                                " must be a positive number of milliseconds, e.g. " + found.name +
                                "=30000");
  if (ms > kMaxTimeout.count())
    throw std::invalid_argument(found.name + "=" + found.value + " is too long: export " +
                                found.name + "=<1 to " + std::to_string(kMaxTimeout.count()) +
                                " milliseconds (about 24.8 days)>");
  return Duration(ms);
}

// torchrun's agent hosts a c10d TCPStore at MASTER_ADDR:MASTER_PORT and says
// so (TORCHELASTIC_USE_AGENT_STORE=True); its workers' keys live under
// /worker/attempt_<TORCHELASTIC_RESTART_COUNT>/ (torch/distributed/rendezvous.py).
void read_agent_store(const EnvironmentLookup& lookup, WorldSpec& r) {
  const auto agent = first_of(lookup, {"TORCHELASTIC_USE_AGENT_STORE"});
  if (!agent || agent->value != "True") return;
  r.agent_store = true;
  long long attempt = 0;
  if (const auto restarts = first_of(lookup, {"TORCHELASTIC_RESTART_COUNT"})) {
    attempt = parse_integer(*restarts, "<the launcher's restart count, e.g. 0>");
    if (attempt < 0)
      throw std::invalid_argument("TORCHELASTIC_RESTART_COUNT=" + restarts->value +
                                  " is negative: it counts the launcher's restarts, from 0");
  }
  r.store_prefix = "/worker/attempt_" + std::to_string(attempt) + "/";
}

// The names from_environment() reads a rank's place under, in the order it
// tries them: torchrun's (and ringlab run's), Slurm's (srun), Open MPI's
// (mpirun), Horovod's (horovodrun's Gloo mode; its MPI mode is mpirun's).
constexpr std::initializer_list<const char*> kWorldSizeNames = {
    "WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "HOROVOD_SIZE"};
constexpr std::initializer_list<const char*> kRankNames = {"RANK", "SLURM_PROCID",
                                                           "OMPI_COMM_WORLD_RANK", "HOROVOD_RANK"};
constexpr std::initializer_list<const char*> kLocalRankNames = {
    "LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "HOROVOD_LOCAL_RANK"};

}  // namespace

bool names_a_rank(const EnvironmentLookup& lookup) {
  return first_of(lookup, kWorldSizeNames) && first_of(lookup, kRankNames);
}

RankPlace place_from_environment(const EnvironmentLookup& lookup) {
  RankPlace place;
  const auto world = first_of(lookup, kWorldSizeNames);
  if (!world)
    throw std::invalid_argument(
        "WORLD_SIZE is not set: export WORLD_SIZE=<number of processes> (or start the job with "
        "ringlab run, torchrun, srun or mpirun, which set it)");
  const long long world_size = parse_integer(*world, "<number of processes, e.g. 4>");
  if (world_size < 1 || world_size > kMaxWorldSize)
    throw std::invalid_argument(world->name + "=" + world->value +
                                " is not a number of processes ringlab runs: export " +
                                world->name + "=<1 to " + std::to_string(kMaxWorldSize) + ">");
  place.world_size = static_cast<int>(world_size);

  const auto rank = first_of(lookup, kRankNames);
  const std::string valid_ranks = "0.." + std::to_string(world_size - 1);
  if (!rank)
    throw std::invalid_argument("RANK is not set: export RANK=<this process's rank, " +
                                valid_ranks +
                                "> (or start the job with ringlab run, torchrun, srun or mpirun, "
                                "which set it)");
  const long long rank_value = parse_integer(*rank, "<this process's rank, " + valid_ranks + ">");
  if (rank_value < 0 || rank_value >= world_size)
    throw std::invalid_argument(rank->name + "=" + rank->value + " but " + world->name + "=" +
                                world->value + ": " + rank->name + " must be in " + valid_ranks);
  place.rank = static_cast<int>(rank_value);

  if (const auto local = first_of(lookup, kLocalRankNames)) {
    const long long local_rank = parse_integer(*local, "<this process's rank on its machine>");
    if (local_rank < 0 || local_rank >= world_size)
      throw std::invalid_argument(local->name + "=" + local->value + " but " + world->name + "=" +
                                  world->value + ": " + local->name + " must be in " +
                                  valid_ranks);
    place.local_rank = static_cast<int>(local_rank);
  }
  return place;
}

void read_settings(const EnvironmentLookup& lookup, WorldSpec& r) {
  if (const auto bind = first_of(lookup, {"RINGLAB_BIND_ADDR"})) {
    if (bind->value.empty())
      throw std::invalid_argument(
          "RINGLAB_BIND_ADDR is empty: unset it (loopback) or export RINGLAB_BIND_ADDR=<this "
          "host's address the other ranks can reach, or 0.0.0.0>");
    r.bind_addr = bind->value;
  }
  if (const auto timeout = first_of(lookup, {"RINGLAB_TIMEOUT_MS"}))
    r.timeout = parse_milliseconds(*timeout);
  if (const auto handshake = first_of(lookup, {"RINGLAB_HANDSHAKE_TIMEOUT_MS"}))
    r.handshake_timeout = parse_milliseconds(*handshake);
  if (const auto token = first_of(lookup, {"RINGLAB_JOB_TOKEN"})) {
    if (token->value.empty())
      throw std::invalid_argument(
          "RINGLAB_JOB_TOKEN is empty: unset it, or export the same secret to every rank, e.g. "
          "RINGLAB_JOB_TOKEN=$(openssl rand -hex 32)");
    r.job_token = token->value;
  }
}

WorldSpec from_environment() {
  return from_environment([](const char* name) { return std::getenv(name); });
}

WorldSpec from_environment(const EnvironmentLookup& lookup) {
  WorldSpec r;
  const RankPlace place = place_from_environment(lookup);
  r.world_size = place.world_size;
  r.rank = place.rank;
  r.local_rank = place.local_rank;

  if (const auto addr = first_of(lookup, {"MASTER_ADDR"})) {
    if (addr->value.empty())
      throw std::invalid_argument(
          "MASTER_ADDR is empty: export MASTER_ADDR=<rank 0's host, e.g. 127.0.0.1>");
    r.master_addr = addr->value;
  }

  const auto port = first_of(lookup, {"MASTER_PORT"});
  if (!port)
    throw std::invalid_argument(
        "MASTER_PORT is not set: export MASTER_PORT=29500 (the port rank 0's store listens on)");
  const long long port_value = parse_integer(*port, "29500 (the port rank 0's store listens on)");
  if (port_value < 1 || port_value > 65535)
    throw std::invalid_argument("MASTER_PORT=" + port->value +
                                " is not a TCP port: export MASTER_PORT=<1..65535, e.g. 29500>");
  r.master_port = static_cast<int>(port_value);

  read_settings(lookup, r);
  read_agent_store(lookup, r);
  return r;
}

}  // namespace ringlab::tcp
