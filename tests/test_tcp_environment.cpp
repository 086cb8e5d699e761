// tcp::from_environment(): torchrun's variables, the Slurm and Open MPI
// fallbacks, and errors that name the variable and say what to export; plus
// the errors a rank sees when rank 0 cannot be reached, and
// init_process_group() read from the real environment.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <map>

#include "backends/backends.hpp"
#include "test_tcp_util.hpp"

using namespace ringlab;
using namespace ringlab::tcp;
using namespace std::chrono_literals;

namespace {
WorldSpec read(const std::map<std::string, std::string>& variables) {
  return from_environment([&](const char* name) -> const char* {
    auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  });
}
std::string error_of(const std::map<std::string, std::string>& variables) {
  try {
    read(variables);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(no error)";
}
const std::map<std::string, std::string> kTorchrun = {
    {"MASTER_ADDR", "10.1.2.3"}, {"MASTER_PORT", "29501"}, {"RANK", "2"},
    {"WORLD_SIZE", "4"},         {"LOCAL_RANK", "1"}};
std::map<std::string, std::string> with(std::map<std::string, std::string> base,
                                        const std::map<std::string, std::string>& changes) {
  for (const auto& [name, value] : changes) base[name] = value;
  return base;
}
std::map<std::string, std::string> without(std::map<std::string, std::string> base,
                                           const std::string& name) {
  base.erase(name);
  return base;
}
}  // namespace

TEST_SUITE("tcp_environment") {

TEST_CASE("torchrun's variables") {
  const WorldSpec r = read(kTorchrun);
  CHECK(r.master_addr == "10.1.2.3");
  CHECK(r.master_port == 29501);
  CHECK(r.rank == 2);
  CHECK(r.world_size == 4);
  CHECK(r.local_rank == 1);
  CHECK(r.bind_addr == "127.0.0.1");
  CHECK(r.timeout == kDefaultTimeout);
}

TEST_CASE("torchrun's agent store: every rank its client, keys under the attempt's prefix") {
  const WorldSpec plain = read(kTorchrun);
  CHECK_FALSE(plain.agent_store);
  CHECK(plain.store_prefix.empty());
  // torch 1.13's --standalone says False: rank 0 hosts a store as usual.
  CHECK_FALSE(read(with(kTorchrun, {{"TORCHELASTIC_USE_AGENT_STORE", "False"}})).agent_store);
  const WorldSpec agent = read(with(kTorchrun, {{"TORCHELASTIC_USE_AGENT_STORE", "True"}}));
  CHECK(agent.agent_store);
  CHECK(agent.store_prefix == "/worker/attempt_0/");
  const WorldSpec restarted = read(with(
      kTorchrun, {{"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "3"}}));
  CHECK(restarted.store_prefix == "/worker/attempt_3/");
  const std::string negative = error_of(with(
      kTorchrun, {{"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "-1"}}));
  CHECK(negative.find("TORCHELASTIC_RESTART_COUNT=-1") != std::string::npos);
}

TEST_CASE("MASTER_ADDR defaults to loopback; LOCAL_RANK to 0") {
  const WorldSpec r = read(without(without(kTorchrun, "MASTER_ADDR"), "LOCAL_RANK"));
  CHECK(r.master_addr == "127.0.0.1");
  CHECK(r.local_rank == 0);
}

TEST_CASE("Slurm's and Open MPI's names when torchrun's are absent; torchrun's win") {
  const std::map<std::string, std::string> slurm = {
      {"MASTER_PORT", "29500"}, {"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}};
  WorldSpec r = read(slurm);
  CHECK(r.rank == 3);
  CHECK(r.world_size == 8);
  CHECK(r.local_rank == 1);
  const std::map<std::string, std::string> ompi = {{"MASTER_PORT", "29500"},
                                                   {"OMPI_COMM_WORLD_RANK", "5"},
                                                   {"OMPI_COMM_WORLD_SIZE", "6"},
                                                   {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}};
  r = read(ompi);
  CHECK(r.rank == 5);
  CHECK(r.world_size == 6);
  CHECK(r.local_rank == 2);
  r = read(with(slurm, {{"RANK", "0"}, {"WORLD_SIZE", "2"}}));
  CHECK(r.rank == 0);
  CHECK(r.world_size == 2);
}

TEST_CASE("ringlab's own variables") {
  const WorldSpec r = read(with(kTorchrun, {{"RINGLAB_BIND_ADDR", "0.0.0.0"},
                                             {"RINGLAB_TIMEOUT_MS", "1500"},
                                             {"RINGLAB_HANDSHAKE_TIMEOUT_MS", "250"}}));
  CHECK(r.bind_addr == "0.0.0.0");
  CHECK(r.timeout == 1500ms);
  CHECK(r.handshake_timeout == 250ms);
}

TEST_CASE("missing or invalid variables: the error names the variable and what to export") {
  CHECK(error_of(without(kTorchrun, "MASTER_PORT")) ==
        "MASTER_PORT is not set: export MASTER_PORT=29500 (the port rank 0's store listens on)");
  CHECK(error_of(with(kTorchrun, {{"RANK", "4"}})) ==
        "RANK=4 but WORLD_SIZE=4: RANK must be in 0..3");
  CHECK(error_of(with(kTorchrun, {{"RANK", "-1"}})) ==
        "RANK=-1 but WORLD_SIZE=4: RANK must be in 0..3");
  CHECK(error_of(without(kTorchrun, "RANK")).find("RANK is not set: export RANK=") == 0);
  CHECK(error_of(without(kTorchrun, "WORLD_SIZE")).find("WORLD_SIZE is not set: export WORLD_SIZE=") == 0);
  CHECK(error_of(with(kTorchrun, {{"RANK", "two"}})).find("RANK=two is not an integer: export RANK=") == 0);
  CHECK(error_of(with(kTorchrun, {{"WORLD_SIZE", "0"}})).find("WORLD_SIZE=0 is not a number of processes") == 0);
  CHECK(error_of(with(kTorchrun, {{"MASTER_PORT", "70000"}})).find("MASTER_PORT=70000 is not a TCP port") == 0);
  CHECK(error_of(with(kTorchrun, {{"MASTER_PORT", "29500x"}})).find("MASTER_PORT=29500x is not an integer") == 0);
  CHECK(error_of(with(kTorchrun, {{"RINGLAB_TIMEOUT_MS", "0"}})).find("RINGLAB_TIMEOUT_MS=0 must be a positive") == 0);
  // A fallback's error names the variable that was actually read.
  CHECK(error_of({{"MASTER_PORT", "1"}, {"SLURM_PROCID", "8"}, {"SLURM_NTASKS", "8"}}) ==
        "SLURM_PROCID=8 but SLURM_NTASKS=8: SLURM_PROCID must be in 0..7");
}

// Issue 12, items 3 and 10: WORLD_SIZE=1048577 said "must be at least 1", and
// a timeout of INT64_MAX ms was taken, overflowed and timed out at once.
TEST_CASE("numbers out of range: the error says the range") {
  CHECK(error_of(with(kTorchrun, {{"WORLD_SIZE", "1048577"}})) ==
        "WORLD_SIZE=1048577 is not a number of processes ringlab runs: export WORLD_SIZE=<1 to "
        "1048576>");
  CHECK(error_of(with(kTorchrun, {{"WORLD_SIZE", "0"}})) ==
        "WORLD_SIZE=0 is not a number of processes ringlab runs: export WORLD_SIZE=<1 to "
        "1048576>");
  CHECK(read(with(kTorchrun, {{"WORLD_SIZE", "1048576"}, {"RANK", "1048575"}})).world_size ==
        1048576);
  for (const char* name : {"RINGLAB_TIMEOUT_MS", "RINGLAB_HANDSHAKE_TIMEOUT_MS"}) {
    CHECK(error_of(with(kTorchrun, {{name, "9223372036854775807"}})) ==
          std::string(name) + "=9223372036854775807 is too long: export " + name +
              "=<1 to 2147483647 milliseconds (about 24.8 days)>");
    CHECK(error_of(with(kTorchrun, {{name, "99999999999999999999"}})) ==
          std::string(name) + "=99999999999999999999 is too long: export " + name +
              "=<1 to 2147483647 milliseconds (about 24.8 days)>");
  }
  CHECK(read(with(kTorchrun, {{"RINGLAB_TIMEOUT_MS", "2147483647"}})).timeout == kMaxTimeout);
}

TEST_CASE("the job token comes from RINGLAB_JOB_TOKEN") {
  CHECK(read(kTorchrun).job_token.empty());
  CHECK(read(with(kTorchrun, {{"RINGLAB_JOB_TOKEN", "s3cret"}})).job_token == "s3cret");
  CHECK(error_of(with(kTorchrun, {{"RINGLAB_JOB_TOKEN", ""}})) ==
        "RINGLAB_JOB_TOKEN is empty: unset it, or export the same secret to every rank, e.g. "
        "RINGLAB_JOB_TOKEN=$(openssl rand -hex 32)");
}

TEST_CASE("an unreachable master: the store's address and what to check") {
  const int port = testing::free_port();
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    connect(testing::local_rendezvous(2, 1, port, 300ms));
  } catch (const CommError& error) {
    message = error.what();
  }
  const auto took = std::chrono::steady_clock::now() - start;
  // Rank 0 hosts the store: it is named first.
  CHECK(message.find("rank 1: could not reach rank 0, which hosts the store: could not reach the "
                     "store at 127.0.0.1:" +
                     std::to_string(port) +
                     " within 300 ms: is rank 0 running and MASTER_ADDR/MASTER_PORT right?") == 0);
  CHECK(took >= 300ms);
  CHECK(took < 3s);
}

TEST_CASE("a rendezvous where a rank never comes names it") {
  // World of 3, only ranks 0 and 1 start.
  const int port = testing::free_port();
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      // A rank that times out first tells the other (an abort frame), which
      // may then fail with that rank's reason before its own time is up: a
      // PeerError rather than a TimeoutError, both naming rank 2. Which rank
      // is first depends on timing (under ASan, often rank 0).
      try {
        connect(testing::local_rendezvous(3, rank, port, 600ms));
      } catch (const CommError& error) {
        errors[static_cast<std::size_t>(rank)] = error.what();
      }
    });
  for (auto& thread : threads) thread.join();
  for (int rank = 0; rank < 2; ++rank) {
    const std::string& message = errors[static_cast<std::size_t>(rank)];
    INFO("rank " << rank << ": " << message);
    CHECK(message.find("rank " + std::to_string(rank) + ": ") == 0);
    CHECK(message.find("timed out after 600 ms") != std::string::npos);
    CHECK(message.find("rank 2 did not show up") != std::string::npos);
  }
}

TEST_CASE("init_process_group(\"tcp\") reads the real environment (world of one)") {
  const int port = testing::free_port();
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  ::setenv("RANK", "0", 1);
  ::setenv("WORLD_SIZE", "1", 1);
  ::setenv("RINGLAB_TIMEOUT_MS", "2000", 1);
  auto pg = init_process_group("tcp");
  for (const char* name : {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "RINGLAB_TIMEOUT_MS"})
    ::unsetenv(name);
  CHECK(pg->rank() == 0);
  CHECK(pg->size() == 1);
  CHECK(pg->backend() == "tcp");
  CHECK(pg->options().timeout == 2000ms);
  Tensor t = Tensor::of({3, 4});
  pg->all_reduce(t);
  CHECK(t.data<std::int64_t>()[0] == 3);
  CHECK(t.data<std::int64_t>()[1] == 4);
}

}  // TEST_SUITE
