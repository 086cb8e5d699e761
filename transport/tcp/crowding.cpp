#include "transport/tcp/crowding.hpp"

#include <sched.h>

#include <algorithm>
#include <memory>
#include <thread>

namespace ringlab::tcp {

int ranks_on_this_host(const std::vector<boost::asio::ip::tcp::socket>& sockets) {
  int count = 1;
  for (const auto& socket : sockets) {
    if (!socket.is_open()) continue;
    boost::system::error_code local_error, remote_error;
    const auto local = socket.local_endpoint(local_error);
    const auto remote = socket.remote_endpoint(remote_error);
    if (!local_error && !remote_error && local.address() == remote.address()) ++count;
  }
  return count;
}

int processors_here() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

bool any_rank_says(Engine& engine, bool mine, Duration timeout) {
  using SteadyClock = std::chrono::steady_clock;
  const auto deadline = SteadyClock::now() + timeout;
  const auto left = [&deadline] {
    return std::max(Duration::zero(),
                    std::chrono::duration_cast<Duration>(deadline - SteadyClock::now()));
  };
  std::byte answer{mine ? std::uint8_t{1} : std::uint8_t{0}};
  if (engine.rank() != 0) {
    engine.isend(0, kSetupTag, {&answer, 1})->wait(left());
    engine.irecv(0, kSetupTag, {&answer, 1})->wait(left());
    return answer != std::byte{0};
  }
  const auto P = static_cast<std::size_t>(engine.size());
  std::vector<std::byte> said(P);
  std::vector<std::unique_ptr<Request>> requests;
  for (std::size_t q = 1; q < P; ++q)
    requests.push_back(engine.irecv(static_cast<int>(q), kSetupTag, {&said[q], 1}));
  for (auto& request : requests) request->wait(left());
  if (std::any_of(said.begin(), said.end(), [](std::byte b) { return b != std::byte{0}; }))
    answer = std::byte{1};
  requests.clear();
  for (std::size_t q = 1; q < P; ++q)
    requests.push_back(engine.isend(static_cast<int>(q), kSetupTag, {&answer, 1}));
  for (auto& request : requests) request->wait(left());
  return answer != std::byte{0};
}

}  // namespace ringlab::tcp
