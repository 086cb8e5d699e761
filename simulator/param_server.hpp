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
