// Gloo's all_reduce on float32, timed like `ringlab bench` (see peer_rows.hpp),
// one process per rank over Gloo's TCP transport on 127.0.0.1.
//
//   gloo_allreduce --rank R --size N --store DIR [--sizes 4K:64M]
//                  [--warmup 3] [--iters 10] [--algorithms a,b] [--timeout-ms 60000]
//
// Rank and size may come from RANK and WORLD_SIZE instead. The ranks meet in
// DIR (a gloo::rendezvous::FileStore: each rank writes its address there), so
// no port needs choosing; DIR must be empty and the same for every rank.
//
// Algorithms (all of this Gloo version's CPU all_reduce implementations):
//   allreduce                 gloo::allreduce, default algorithm: what PyTorch's
//                             ProcessGroupGloo calls for a dense CPU tensor
//   allreduce_bcube           gloo::allreduce with AllreduceOptions::BCUBE
//   AllreduceRing             the older algorithm classes (gloo/allreduce_*.h)
//   AllreduceRingChunked
//   AllreduceHalvingDoubling
//   AllreduceBcube
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include "peer_rows.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Context = std::shared_ptr<gloo::Context>;
using ReduceFn = void (*)(void*, const void*, const void*, std::size_t);

const char* const kUsage =
    "usage: gloo_allreduce --rank R --size N --store DIR [--sizes 4K:64M] [--warmup 3]\n"
    "       [--iters 10] [--algorithms allreduce,allreduce_bcube,AllreduceRing,\n"
    "       AllreduceRingChunked,AllreduceHalvingDoubling,AllreduceBcube] [--timeout-ms 60000]\n";

const std::vector<std::string> kAlgorithms = {
    "allreduce",     "allreduce_bcube",          "AllreduceRing",
    "AllreduceRingChunked", "AllreduceHalvingDoubling", "AllreduceBcube"};

// gloo::allreduce on `count` values of T in place, reduced with `fn`.
template <typename T>
void new_api_allreduce(const Context& context, T* data, std::size_t count, ReduceFn fn,
                       gloo::AllreduceOptions::Algorithm algorithm) {
  gloo::AllreduceOptions opts(context);
  opts.setOutput(data, count);
  opts.setReduceFunction(fn);
  opts.setAlgorithm(algorithm);
  gloo::allreduce(opts);
}

double max_over_ranks(const Context& context, double value) {
  new_api_allreduce(context, &value, 1, &gloo::max<double>,
                    gloo::AllreduceOptions::Algorithm::UNSPECIFIED);
  return value;
}

double sum_over_ranks(const Context& context, double value) {
  new_api_allreduce(context, &value, 1, &gloo::sum<double>,
                    gloo::AllreduceOptions::Algorithm::UNSPECIFIED);
  return value;
}

void barrier(const Context& context) {
  gloo::BarrierOptions opts(context);
  gloo::barrier(opts);
}

// Returns a callable that runs one all_reduce of `algorithm` in place on
// data[0..count). The older classes connect their buffers when constructed,
// which every rank must do in the same order, so they are built here, once
// per size, outside the timed loop (as Caffe2 did).
std::function<void()> make_allreduce(const std::string& algorithm, const Context& context,
                                     float* data, std::size_t count) {
  using Algorithm = gloo::AllreduceOptions::Algorithm;
  const std::vector<float*> ptrs{data};
  const int elements = static_cast<int>(count);
  auto wrap = [](std::shared_ptr<gloo::Algorithm> a) { return [a] { a->run(); }; };
  if (algorithm == "allreduce")
    return [=] { new_api_allreduce(context, data, count, &gloo::sum<float>, Algorithm::UNSPECIFIED); };
  if (algorithm == "allreduce_bcube")
    return [=] { new_api_allreduce(context, data, count, &gloo::sum<float>, Algorithm::BCUBE); };
  if (algorithm == "AllreduceRing")
    return wrap(std::make_shared<gloo::AllreduceRing<float>>(context, ptrs, elements));
  if (algorithm == "AllreduceRingChunked")
    return wrap(std::make_shared<gloo::AllreduceRingChunked<float>>(context, ptrs, elements));
  if (algorithm == "AllreduceHalvingDoubling")
    return wrap(std::make_shared<gloo::AllreduceHalvingDoubling<float>>(context, ptrs, elements));
  if (algorithm == "AllreduceBcube")
    return wrap(std::make_shared<gloo::AllreduceBcube<float>>(context, ptrs, elements));
  throw std::invalid_argument("unknown Gloo algorithm '" + algorithm + "'\n" + kUsage);
}

void fill(std::vector<float>& data, float value) {
  for (float& v : data) v = value;
}

void bench_algorithm(const std::string& algorithm, const Context& context,
                     const peers::Options& o) {
  const int rank = context->rank;
  const int ranks = context->size;
  if (rank == 0) peers::print_header("gloo", algorithm, ranks, "tcp");
  for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> data(count);
    fill(data, static_cast<float>(rank + 1));
    auto allreduce_once = make_allreduce(algorithm, context, data.data(), count);
    for (int i = 0; i < o.warmup; ++i) allreduce_once();
    barrier(context);
    const auto start = Clock::now();
    for (int i = 0; i < o.iters; ++i) allreduce_once();
    const double local_us =
        std::chrono::duration<double, std::micro>(Clock::now() - start).count() / o.iters;
    const double time_us = max_over_ranks(context, local_us);

    fill(data, static_cast<float>(rank + 1));
    allreduce_once();
    long long wrong = 0;
    for (float v : data) wrong += v != peers::expected_sum(ranks);
    wrong = static_cast<long long>(sum_over_ranks(context, static_cast<double>(wrong)));
    if (rank == 0) peers::print_row(bytes, ranks, time_us, wrong);
  }
}

}  // namespace

int main(int argc, char** argv) {
  peers::Options o;
  try {
    o = peers::parse_options(argc, argv, kUsage);
    if (o.rank < 0) o.rank = peers::env_int("RANK", -1);
    if (o.size < 0) o.size = peers::env_int("WORLD_SIZE", -1);
    if (o.rank < 0 || o.size < 1 || o.rank >= o.size || o.store.empty())
      throw std::invalid_argument("need --rank R --size N (0 <= R < N; or RANK, WORLD_SIZE) and --store DIR\n" +
                                  std::string(kUsage));
    const auto algorithms = o.algorithms.empty() ? kAlgorithms : peers::split_commas(o.algorithms);

    gloo::transport::tcp::attr loopback("127.0.0.1");
    auto device = gloo::transport::tcp::CreateDevice(loopback);
    auto context = std::make_shared<gloo::rendezvous::Context>(o.rank, o.size);
    // Bounds every Gloo wait (connect, send, recv), so a lost peer ends the run.
    context->setTimeout(std::chrono::milliseconds(o.timeout_ms));
    gloo::rendezvous::FileStore store(o.store);
    context->connectFullMesh(store, device);

    for (const auto& algorithm : algorithms) bench_algorithm(algorithm, context, o);
    // Nobody leaves while a peer may still read its last reply.
    barrier(context);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo_allreduce rank %d of %d: %s\n", o.rank, o.size, e.what());
    return 1;
  }
  return 0;
}
