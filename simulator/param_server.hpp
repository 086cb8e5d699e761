// A parameter server with partial updates, answering the articles' question
// "how does a parameter server update only part of the parameters".
//
// Nomenclature (S servers, W workers, K keys = length of the parameter vector):
//   ranks       0 .. S-1 are servers, S .. S+W-1 are workers.
//   key range   server s owns keys split_even(K, S)[s]; its "params" buffer
//               holds exactly those.
//   push set    the sorted keys worker w sends a gradient for in an
//               iteration (a deterministic pseudo-random subset of
//               push_per_worker keys); pull set likewise (pull_per_worker).
//   update      the worker sends -lr * gradient, so the server's SGD step
//               params[k] = params[k] - lr * g is a SUM reduction of exactly
//               the pushed keys; every other key is left alone.
// Protocol, per iteration, written only against Transport (so it runs on the
// in-process, fiber and TCP transports and is recorded like a collective):
//   1. push: worker w -> each server s: a header (how many keys of s's range
//      it pushes, int64), then the keys (int64, local to s's range) and
//      the update values, if any. Servers take workers in rank order.
//   2. apply: the server reduces each pushed run of consecutive keys into
//      params (Transport::reduce, SUM), worker by worker.
//   3. pull: worker w -> each server s: a header and the keys it wants; the
//      server answers with those values, which land in the worker's "pulled"
//      buffer (the values of its pull set, in key order).
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/record.hpp"

namespace ringlab::sim {

struct PsScenario {
  int servers = 2;
  int workers = 3;
  std::size_t keys = 16;             // K
  std::size_t push_per_worker = 4;   // keys each worker pushes per iteration
  std::size_t pull_per_worker = 4;   // keys each worker pulls per iteration
  int iterations = 1;
  double learning_rate = 0.5;
  std::uint64_t seed = 1;
  DType dtype = DType::Float32;      // Float32 or Float64
  RankExecution execution = RankExecution::Fibers;
};

// The largest scenario the simulator takes; validate() refuses more, naming
// the options and the limit. The recorded run keeps every key's value and
// every message (about 2 KiB each, with their named buffers), and its
// provenance of the servers' "params" is a flat list of runs that each
// update splits and shifts (provenance.hpp), so time grows with the keys
// moved times the keys touched. Measured at the limits (`ringlab sim
// parameter_server --bench`, 2 shared cores): 4 Mi keys, 145 MiB and 2 s;
// 65,536 keys moved over 10,922 iterations, 3.8 s; 131,072 messages, 2 s
// and 200 MiB. Before, `--keys 18446744073709551615` took 6 GB in 16 s
// before it was killed, and 100 iterations of 10 workers over 100,000 keys
// took 1.5 GB moving none.
inline constexpr std::size_t kMaxPsKeys = std::size_t{1} << 22;           // --keys
inline constexpr std::uint64_t kMaxPsKeysMoved = std::uint64_t{1} << 16;  // iterations x workers x (push + pull)
inline constexpr std::uint64_t kMaxPsMessages = std::uint64_t{1} << 17;   // iterations x workers x servers x 6

// Everything the protocol does, decided up front (so tests have an
// independent expectation). Keys are global (0 .. K-1).
struct PsPlan {
  std::vector<Chunk> key_ranges;                        // per server
  std::vector<double> initial_params;                   // K values: 100 + k
  // [iteration][worker]: sorted keys and the gradient for each pushed key.
  std::vector<std::vector<std::vector<std::size_t>>> push_keys, pull_keys;
  std::vector<std::vector<std::vector<double>>> gradients;
};
PsPlan plan_parameter_server(const PsScenario& scenario);

// The protocol on one rank of an (S + W)-rank world. params (servers) is the
// rank's key range; pulled (workers) receives its last iteration's pull set.
// updates (workers): per iteration, -lr * gradient for its push set.
void run_parameter_server(Transport& transport, const PsScenario& scenario, const PsPlan& plan);

// Recorded run on S + W virtual ranks: regions "params" (servers), "update"
// and "pulled" (workers), plus the key/header messages' buffers.
Run simulate_parameter_server(const PsScenario& scenario);

// Bytes moved by the parameter server against a dense ring all_reduce of the
// same K-element vector among the W workers.
struct PsTraffic {
  std::size_t push_bytes = 0, pull_bytes = 0, header_bytes = 0, key_bytes = 0, total_bytes = 0;
  std::size_t dense_all_reduce_bytes = 0;  // 2(W-1)/W * K * e per worker, times W
};
PsTraffic parameter_server_traffic(const Run& run, const PsScenario& scenario);

}  // namespace ringlab::sim
