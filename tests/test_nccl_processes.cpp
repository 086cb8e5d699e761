// The collectives check of test_nccl_collectives.cpp across 2, 3 and 4
// processes on one GPU: wherever CUDA shows a GPU, GPU 0 is shared by all of
// them. NCCL refuses two ranks on one device only when both say they are on
// the same host, so each process is started with its own NCCL_HOSTID
// (rank-$RANK, and NCCL_SOCKET_IFNAME=lo): NCCL then carries the messages
// over its network transport on loopback, every buffer in GPU memory. This is
// the test that catches stream races (device_memory.hpp's rule), which a
// single rank cannot show. Its main() skips (77) where there is no GPU.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "background_process.hpp"
#include "beside_this_program.hpp"
#include "run_program.hpp"
#include "store_util.hpp"

using namespace std::chrono_literals;
using ringlab::testing::BackgroundProcess;
using ringlab::testing::TemporaryFolder;

namespace {

// Generous for a GPU under load: one world of 4 ranks runs every check in
// well under a minute on an H100.
constexpr auto kLimit = 240s;

std::string rank_command(int rank, int world, int port) {
  const std::string r = std::to_string(rank);
  return ringlab::testing::kCleanEnvironment + "NCCL_HOSTID=rank-" + r +
         " NCCL_SOCKET_IFNAME=lo RANK=" + r + " WORLD_SIZE=" + std::to_string(world) +
         " LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
         std::to_string(port) + " RINGLAB_TIMEOUT_MS=120000 " +
         ringlab::testing::beside_this_program("test_nccl_collectives") +
         " --test-case='as one process of a job*'";
}

}  // namespace

TEST_CASE("the collectives check across 2, 3 and 4 processes sharing GPU 0") {
  for (int world : {2, 3, 4}) {
    CAPTURE(world);
    TemporaryFolder folder;
    const int port = ringlab::store::testing::free_port();
    std::vector<std::unique_ptr<BackgroundProcess>> ranks;
    for (int rank = 0; rank < world; ++rank)
      ranks.push_back(std::make_unique<BackgroundProcess>(
          rank_command(rank, world, port), folder.path + "/rank" + std::to_string(rank) + ".txt"));
    const auto deadline = std::chrono::steady_clock::now() + kLimit;
    for (int rank = 0; rank < world; ++rank) {
      BackgroundProcess& process = *ranks[static_cast<std::size_t>(rank)];
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      const int status = process.wait_exit(std::max(left, std::chrono::milliseconds(0)));
      const std::string output = process.output();
      INFO("rank " << rank << " of " << world << " printed:\n" << output);
      CHECK_MESSAGE(status == 0, "rank " << rank << " exit status " << status
                                         << (status == -1 ? " (still running: killed)" : ""));
      // The case ran (a filter that matched nothing would pass too).
      CHECK(output.find("| 1 passed | 0 failed") != std::string::npos);
    }
  }
}
