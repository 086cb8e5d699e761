// Helpers for the TCP backend's tests: a world of ranks that are threads of
// this process but talk only over TCP (each calls tcp::connect() with the
// same WorldSpec, as separate processes would), and the store's test helpers
// (store_util.hpp: a free port, a log capture, a raw client).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "primitives/process_group.hpp"
#include "store_util.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::tcp::testing {

using namespace std::chrono_literals;
// free_port(), LogCapture, RawClient.
using namespace ringlab::store::testing;

inline WorldSpec local_rendezvous(int world, int rank, int port, Duration timeout = 10s) {
  WorldSpec r;
  r.master_addr = "127.0.0.1";
  r.master_port = port;
  r.rank = rank;
  r.world_size = world;
  r.timeout = timeout;
  r.handshake_timeout = 300ms;
  return r;
}

// Runs rank_body(rank) on `world` threads and joins them. Returns each
// rank's error ("" if it finished; "(empty error)" for an exception whose
// what() is empty, so it still counts as a failure).
inline std::vector<std::string> run_rank_threads(int world,
                                                 const std::function<void(int rank)>& rank_body) {
  std::vector<std::string> errors(static_cast<std::size_t>(world));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      std::string& error = errors[static_cast<std::size_t>(rank)];
      try {
        rank_body(rank);
      } catch (const std::exception& e) {
        error = e.what();
        if (error.empty()) error = "(empty error)";
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

// Runs body(transport) on `world` threads, each connecting over TCP. Returns
// each rank's error ("" if it finished). A rank's transport is destroyed as
// soon as its body ends or throws, as a process that exits would close it.
inline std::vector<std::string> run_tcp(int world, const std::function<void(TcpTransport&)>& body,
                                        Duration timeout = 10s,
                                        const std::function<void(WorldSpec&)>& adjust = {}) {
  const int port = free_port();
  return run_rank_threads(world, [&](int rank) {
    WorldSpec r = local_rendezvous(world, rank, port, timeout);
    if (adjust) adjust(r);
    auto transport = connect(r);
    body(*transport);
  });
}

inline std::string first_error(const std::vector<std::string>& errors) {
  for (std::size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty()) return "rank " + std::to_string(r) + ": " + errors[r];
  return {};
}

}  // namespace ringlab::tcp::testing

namespace ringlab::tcp::testing {

// Like run_tcp, with a ProcessGroup per rank over its TCP transport.
inline std::vector<std::string> run_tcp_groups(int world,
                                               const std::function<void(ProcessGroup&)>& body,
                                               ProcessGroupOptions options = {},
                                               Duration timeout = 10s) {
  if (options.timeout == kDefaultTimeout) options.timeout = timeout;
  const int port = free_port();
  return run_rank_threads(world, [&](int rank) {
    ProcessGroup pg(connect(local_rendezvous(world, rank, port, timeout)), options);
    body(pg);
  });
}

}  // namespace ringlab::tcp::testing
