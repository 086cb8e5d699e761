// How a process's ranks come to be (backends/rank_world.hpp): one
// launched-rank test for every launcher's variables, one world-size check,
// one timeout rule; and, end to end, a lesson started the way srun starts
// it (only SLURM_* set) on every backend that runs here: the tcp ranks join
// one world across the processes, as under torchrun's variables, and the
// ranks-as-threads backends run as they do under torchrun's.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/rank_world.hpp"
#include "background_process.hpp"
#include "run_program.hpp"

using namespace ringlab;
using namespace ringlab::backends;
using ringlab::testing::BackgroundProcess;
using ringlab::testing::TemporaryFolder;

namespace {

using Variables = std::map<std::string, std::string>;

EnvironmentLookup lookup_in(const Variables& variables) {
  return [&variables](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

// The variables each launcher gives rank 1 of a world of 3 (local rank 1).
const std::map<std::string, Variables>& launchers() {
  static const std::map<std::string, Variables> all = {
      {"torchrun", {{"RANK", "1"}, {"WORLD_SIZE", "3"}, {"LOCAL_RANK", "1"}}},
      {"srun", {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "3"}, {"SLURM_LOCALID", "1"}}},
      {"mpirun",
       {{"OMPI_COMM_WORLD_RANK", "1"},
        {"OMPI_COMM_WORLD_SIZE", "3"},
        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}},
      {"horovodrun", {{"HOROVOD_RANK", "1"}, {"HOROVOD_SIZE", "3"}, {"HOROVOD_LOCAL_RANK", "1"}}},
  };
  return all;
}

std::string thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

// `ringlab lesson all_reduce --backend BACKEND` started as 2 processes, each
// given `variables(rank)`; what each printed, in rank order.
std::vector<std::string> launched_lesson(const std::string& backend,
                                         const std::function<std::string(int)>& variables) {
  TemporaryFolder folder;
  const std::string port = std::to_string(free_port());
  std::vector<std::unique_ptr<BackgroundProcess>> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.push_back(std::make_unique<BackgroundProcess>(
        ringlab::testing::kCleanEnvironment + "MASTER_PORT=" + port +
            " RINGLAB_JOB_TOKEN=rank-world-test " + variables(rank) + " " + RINGLAB_EXE +
            " lesson all_reduce --backend " + backend + " --timeout-ms 20000",
        folder.path + "/rank" + std::to_string(rank)));
  std::vector<std::string> outputs;
  for (auto& rank : ranks) {
    const int status = rank->wait_exit(std::chrono::seconds(60));
    INFO(rank->output());
    CHECK(status == 0);
    outputs.push_back(rank->output());
  }
  return outputs;
}

std::string srun(int rank) {
  return "SLURM_PROCID=" + std::to_string(rank) +
         " SLURM_NTASKS=2 SLURM_LOCALID=" + std::to_string(rank);
}

std::string torchrun(int rank) {
  return "RANK=" + std::to_string(rank) + " WORLD_SIZE=2 LOCAL_RANK=" + std::to_string(rank);
}

// What rank r of the article's all_reduce prints on 2 ranks: its input
// [1 + 2r, 2 + 2r], then the sum [1 + 3, 2 + 4].
std::string all_reduce_lines(int rank) {
  const std::string r = std::to_string(rank);
  return "before reudce  Rank  " + r + "  has data  tensor([" + std::to_string(1 + 2 * rank) +
         ", " + std::to_string(2 + 2 * rank) + "])\nafter reudce  Rank  " + r +
         "  has data  tensor([4, 6])\n";
}

std::vector<std::string> lines_of(const std::string& output) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at < output.size()) {
    std::size_t end = output.find('\n', at);
    if (end == std::string::npos) end = output.size();
    lines.push_back(output.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// The article's lines (the runner's "# lesson" line goes to stderr).
std::string stdout_lines(const std::string& output) {
  std::string lines;
  for (const std::string& line : lines_of(output))
    if (!line.starts_with("# ")) lines += line + "\n";
  return lines;
}

// The ranks of one process are threads: their lines may come in any order.
std::vector<std::string> sorted_lines(const std::string& output) {
  std::vector<std::string> lines = lines_of(output);
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

TEST_CASE("one launched-rank test, one place, for every launcher's variables") {
  for (const auto& [launcher, variables] : launchers()) {
    CAPTURE(launcher);
    const EnvironmentLookup lookup = lookup_in(variables);
    CHECK(is_launched_rank(lookup));
    const std::optional<tcp::RankPlace> place = launched_place(lookup);
    REQUIRE(place);
    CHECK(place->rank == 1);
    CHECK(place->world_size == 3);
    CHECK(place->local_rank == 1);
    // Launched whatever the backend would do otherwise: never a world of its own.
    CHECK(rank_mode(lookup, [] { return true; }) == RankMode::Launched);
    CHECK(rank_mode(lookup, nullptr) == RankMode::Launched);
  }
  const Variables none;
  CHECK_FALSE(is_launched_rank(lookup_in(none)));
  CHECK_FALSE(launched_place(lookup_in(none)));
  CHECK(rank_mode(lookup_in(none), [] { return true; }) == RankMode::Threads);
  CHECK(rank_mode(lookup_in(none), [] { return false; }) == RankMode::Forked);
  CHECK(rank_mode(lookup_in(none), nullptr) == RankMode::Forked);
  // A world size alone (exported for some other reason) makes no rank.
  const Variables world_only = {{"WORLD_SIZE", "4"}};
  CHECK_FALSE(is_launched_rank(lookup_in(world_only)));
  // A rank that is set but wrong is named.
  const Variables wrong = {{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "2"}};
  CHECK(thrown([&] { launched_place(lookup_in(wrong)); }) ==
        "SLURM_PROCID=5 but SLURM_NTASKS=2: SLURM_PROCID must be in 0..1");
}

TEST_CASE("one world-size check: a rank of a world of 2 asked for 4 says both") {
  CHECK(thrown([] { check_world(1, 2, 2); }).empty());
  CHECK(thrown([] { check_world(1, 2, 4); }) ==
        "this process is rank 1 of a world of 2 (WORLD_SIZE or the launcher's variables), but "
        "it was asked to run 4 ranks: pass --world-size 2 (-n 2), or start 4 ranks (ringlab run "
        "--nproc-per-node 4 -- ...)");
}

TEST_CASE("one timeout rule: RINGLAB_TIMEOUT_MS, when set, wins over the group's") {
  const Duration asked{7000};
  Variables variables = launchers().at("srun");
  variables["MASTER_PORT"] = "29500";
  RankSpec plain = rank_spec(lookup_in(variables), asked);
  CHECK(plain.world.timeout == asked);  // the group's limits the meeting too
  CHECK(plain.group_timeout(asked) == asked);
  RankSpec joined = rank_spec(1, 3, lookup_in(variables), asked);
  CHECK(joined.world.timeout == asked);
  variables["RINGLAB_TIMEOUT_MS"] = "1234";
  for (const RankSpec& spec :
       {rank_spec(lookup_in(variables), asked), rank_spec(1, 3, lookup_in(variables), asked)}) {
    CHECK(spec.world.timeout == Duration(1234));
    CHECK(spec.group_timeout(asked) == Duration(1234));
    CHECK(spec.world.rank == 1);
    CHECK(spec.world.world_size == 3);
  }
  variables["RINGLAB_TIMEOUT_MS"] = "soon";
  CHECK(thrown([&] {
          rank_spec(1, 3, lookup_in(variables), asked);
        }).starts_with("RINGLAB_TIMEOUT_MS=soon is not an integer"));
}

TEST_CASE("under srun (only SLURM_* set) the tcp ranks join one world across the processes") {
  for (const auto& variables : {srun, torchrun}) {
    const std::vector<std::string> outputs = launched_lesson("tcp", variables);
    for (int rank = 0; rank < 2; ++rank) {
      INFO(outputs[rank]);
      // Each process is its own rank of the one world of 2, and prints only that.
      CHECK(stdout_lines(outputs[rank]) == all_reduce_lines(rank));
    }
  }
}

TEST_CASE("under srun the ranks-as-threads backends run as under torchrun's variables") {
  for (const char* backend : {"inproc", "nccl_rules"}) {
    CAPTURE(backend);
    const std::vector<std::string> under_srun = launched_lesson(backend, srun);
    const std::vector<std::string> under_torchrun = launched_lesson(backend, torchrun);
    for (int rank = 0; rank < 2; ++rank) {
      // Each process runs the job's world of 2 as threads of its own.
      INFO(under_srun[rank]);
      CHECK(sorted_lines(under_srun[rank]) == sorted_lines(under_torchrun[rank]));
      CHECK(under_srun[rank].find("after reudce  Rank  1  has data  tensor([4, 6])") !=
            std::string::npos);
    }
  }
}
