// Every primitive through NCCL's own collectives (NcclGroup) and through the
// hand-written algorithms on GPU memory (NcclTransport), at world size 1 on
// GPU 0; with two or more GPUs, also across them (ranks as threads); and,
// started as the ranks of a job (test_nccl_processes.cpp does that with 2, 3
// and 4 processes on one GPU), across processes.
//
// Expected values are closed forms: at world size 1 every collective is the
// identity on its data (a reduction over one rank is that rank's data; a
// gather or scatter of one block is that block), and outputs start zeroed so
// a collective that writes nothing is caught. Across P ranks, rank r's input
// is x_r[i] = i + 1000 r, so the sum is P i + 1000 P (P - 1) / 2.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backends/nccl_join.hpp"
#include "primitives/algorithms.hpp"
#include "primitives/process_group.hpp"
#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/nccl_group.hpp"
#include "transport/nccl/nccl_transport.hpp"
#include "transport/nccl/nccl_world.hpp"
#include "transport/nccl/staged_transport.hpp"

using namespace ringlab;
using nccl::DeviceTensor;
using nccl::NcclCommunicator;

namespace {

constexpr Duration kTimeout = std::chrono::seconds(60);

// A DeviceTensor's elements as the algorithms of primitives/ see them.
Elems elems_of(const DeviceTensor& t) { return {t.data(), t.numel(), t.dtype()}; }

std::shared_ptr<NcclCommunicator> single_rank() {
  nccl::check_cuda(cudaSetDevice(0), 0, "cudaSetDevice(0)");
  return std::make_shared<NcclCommunicator>(nccl::make_unique_id(), 0, 1, 0, kTimeout);
}

// x_r[i] = i + 1000 r as dtype.
Tensor input_of(int rank, std::size_t n, DType dtype = DType::Float32) {
  Tensor t(dtype, {static_cast<std::int64_t>(n)});
  for (std::size_t i = 0; i < n; ++i) t.set_from_double(i, static_cast<double>(i) + 1000.0 * rank);
  return t;
}

// Rank r's block b of a scatter/all_to_all input: 100000 r + 1000 b + i.
Tensor blocks_of(int rank, int world, std::size_t block) {
  Tensor t(DType::Float32, {static_cast<std::int64_t>(block * static_cast<std::size_t>(world))});
  for (int b = 0; b < world; ++b)
    for (std::size_t i = 0; i < block; ++i)
      t.set_from_double(static_cast<std::size_t>(b) * block + i, 100000.0 * rank + 1000.0 * b +
                                                                     static_cast<double>(i));
  return t;
}

Tensor sum_over_ranks(int world, std::size_t n) {
  Tensor t(DType::Float32, {static_cast<std::int64_t>(n)});
  for (std::size_t i = 0; i < n; ++i)
    t.set_from_double(i, world * static_cast<double>(i) + 1000.0 * world * (world - 1) / 2);
  return t;
}

Tensor concat(const std::vector<Tensor>& parts) {
  std::size_t n = 0;
  for (const auto& p : parts) n += p.numel();
  Tensor t(parts.front().dtype(), {static_cast<std::int64_t>(n)});
  std::size_t at = 0;
  for (const auto& p : parts) {
    std::copy(p.bytes().begin(), p.bytes().end(), t.bytes().begin() + static_cast<std::ptrdiff_t>(at));
    at += p.nbytes();
  }
  return t;
}

Tensor slice(const Tensor& t, std::size_t offset, std::size_t n) {
  Tensor out(t.dtype(), {static_cast<std::int64_t>(n)});
  const std::size_t e = element_size(t.dtype());
  std::copy_n(t.bytes().begin() + static_cast<std::ptrdiff_t>(offset * e), n * e, out.bytes().begin());
  return out;
}

// Every native collective on `group`, checked against the closed forms.
void check_native(nccl::NcclGroup& group) {
  const int P = group.size();
  const int r = group.rank();
  const int dev = group.device();
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20}) {
    CAPTURE(n);
    // broadcast from the last rank
    auto t = DeviceTensor::upload(input_of(r, n), dev);
    group.broadcast(t, P - 1);
    CHECK(t.download().same_values(input_of(P - 1, n)));
    // all_reduce: SUM, and AVG = SUM / P
    t = DeviceTensor::upload(input_of(r, n), dev);
    group.all_reduce(t, ReduceOp::SUM);
    CHECK(t.download().same_values(sum_over_ranks(P, n)));
    if (P == 1) {
      for (ReduceOp op : {ReduceOp::PRODUCT, ReduceOp::MIN, ReduceOp::MAX, ReduceOp::AVG}) {
        CAPTURE(op_name(op));
        t = DeviceTensor::upload(input_of(r, n), dev);
        group.all_reduce(t, op);
        CHECK(t.download().same_values(input_of(r, n)));
      }
    }
    // reduce to rank 0
    t = DeviceTensor::upload(input_of(r, n), dev);
    group.reduce(t, 0, ReduceOp::SUM);
    if (r == 0) CHECK(t.download().same_values(sum_over_ranks(P, n)));
    // all_gather: block q is rank q's input
    std::vector<Tensor> everyone;
    for (int q = 0; q < P; ++q) everyone.push_back(input_of(q, n));
    auto gathered = DeviceTensor::zeros(static_cast<std::int64_t>(n) * P, DType::Float32, dev);
    group.all_gather(gathered, DeviceTensor::upload(input_of(r, n), dev));
    CHECK(gathered.download().same_values(concat(everyone)));
    // reduce_scatter: rank r gets block r of the sum of every rank's blocks_of
    const auto blocks_in = DeviceTensor::upload(blocks_of(r, P, n), dev);
    auto mine = DeviceTensor::zeros(static_cast<std::int64_t>(n), DType::Float32, dev);
    group.reduce_scatter(mine, blocks_in, ReduceOp::SUM);
    Tensor expected(DType::Float32, {static_cast<std::int64_t>(n)});
    for (int q = 0; q < P; ++q) {
      const Tensor theirs = slice(blocks_of(q, P, n), static_cast<std::size_t>(r) * n, n);
      for (std::size_t i = 0; i < n; ++i)
        expected.set_from_double(i, expected.item_as_double(i) + theirs.item_as_double(i));
    }
    CHECK(mine.download().same_values(expected));
    for (bool fallback : {false, true}) {
      CAPTURE(fallback);
      group.set_point_to_point_fallback(fallback);
      // all_to_all: output block q is rank q's block r
      auto out = DeviceTensor::zeros(static_cast<std::int64_t>(n) * P, DType::Float32, dev);
      group.all_to_all(out, blocks_in);
      std::vector<Tensor> from;
      for (int q = 0; q < P; ++q) from.push_back(slice(blocks_of(q, P, n), static_cast<std::size_t>(r) * n, n));
      CHECK(out.download().same_values(concat(from)));
      // gather to the last rank
      auto all = DeviceTensor::zeros(static_cast<std::int64_t>(n) * P, DType::Float32, dev);
      group.gather(DeviceTensor::upload(input_of(r, n), dev), r == P - 1 ? &all : nullptr, P - 1);
      if (r == P - 1) CHECK(all.download().same_values(concat(everyone)));
      // scatter from rank 0: rank r gets rank 0's block r
      auto part = DeviceTensor::zeros(static_cast<std::int64_t>(n), DType::Float32, dev);
      const auto source = DeviceTensor::upload(blocks_of(0, P, n), dev);
      group.scatter(part, r == 0 ? &source : nullptr, 0);
      CHECK(part.download().same_values(slice(blocks_of(0, P, n), static_cast<std::size_t>(r) * n, n)));
    }
    group.set_point_to_point_fallback(NCCL_VERSION_CODE < NCCL_VERSION(2, 28, 0));
    // send/recv around a ring (needs two ranks)
    if (P > 1) {
      auto got = DeviceTensor::zeros(static_cast<std::int64_t>(n), DType::Float32, dev);
      const auto outgoing = DeviceTensor::upload(input_of(r, n), dev);
      if (r % 2 == 0) {
        group.send(outgoing, (r + 1) % P);
        group.recv(got, (r - 1 + P) % P);
      } else {
        group.recv(got, (r - 1 + P) % P);
        group.send(outgoing, (r + 1) % P);
      }
      if (P % 2 == 0) CHECK(got.download().same_values(input_of((r - 1 + P) % P, n)));
    }
    group.barrier();
  }
}

// Every hand-written algorithm of primitives/ on GPU buffers of `transport`.
void check_hand_written(nccl::NcclTransport& transport) {
  const int P = transport.size();
  const int r = transport.rank();
  const int dev = transport.communicator().device();
  std::uint64_t sequence = 0;
  auto done = [&](const DeviceTensor& t) {
    transport.synchronize();
    return t.download();
  };
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20}) {
    CAPTURE(n);
    for (const auto& algorithm : all_reduce_algorithms()) {
      CAPTURE(algorithm.name);
      auto t = DeviceTensor::upload(input_of(r, n), dev);
      Comm comm(transport, sequence++);
      algorithm.run(comm, elems_of(t), ReduceOp::SUM);
      CHECK(done(t).same_values(sum_over_ranks(P, n)));
    }
    for (const auto& algorithm : reduce_algorithms()) {
      CAPTURE(algorithm.name);
      auto t = DeviceTensor::upload(input_of(r, n), dev);
      Comm comm(transport, sequence++);
      algorithm.run(comm, elems_of(t), ReduceOp::SUM, 0);
      const Tensor got = done(t);
      if (r == 0) CHECK(got.same_values(sum_over_ranks(P, n)));
    }
    for (const auto& algorithm : broadcast_algorithms()) {
      CAPTURE(algorithm.name);
      auto t = DeviceTensor::upload(input_of(r, n), dev);
      Comm comm(transport, sequence++);
      algorithm.run(comm, elems_of(t), P - 1);
      CHECK(done(t).same_values(input_of(P - 1, n)));
    }
    std::vector<Tensor> everyone;
    for (int q = 0; q < P; ++q) everyone.push_back(input_of(q, n));
    const auto blocks = equal_blocks(n, P);
    for (const auto& algorithm : all_gather_algorithms()) {
      CAPTURE(algorithm.name);
      // Zeros everywhere but this rank's block, which holds its input.
      auto buf = DeviceTensor::zeros(static_cast<std::int64_t>(n) * P, DType::Float32, dev);
      auto own = DeviceTensor::upload(input_of(r, n), dev);
      transport.copy(elems_of(buf).slice(static_cast<std::size_t>(r) * n, n).bytes(),
                     elems_of(own).bytes());
      Comm comm(transport, sequence++);
      algorithm.run(comm, elems_of(buf), blocks);
      CHECK(done(buf).same_values(concat(everyone)));
    }
    for (const auto& algorithm : reduce_scatter_algorithms()) {
      CAPTURE(algorithm.name);
      auto buf = DeviceTensor::upload(blocks_of(r, P, n), dev);
      Comm comm(transport, sequence++);
      algorithm.run(comm, elems_of(buf), blocks, ReduceOp::SUM);
      Tensor expected(DType::Float32, {static_cast<std::int64_t>(n)});
      for (int q = 0; q < P; ++q) {
        const Tensor theirs = slice(blocks_of(q, P, n), static_cast<std::size_t>(r) * n, n);
        for (std::size_t i = 0; i < n; ++i)
          expected.set_from_double(i, expected.item_as_double(i) + theirs.item_as_double(i));
      }
      CHECK(slice(done(buf), static_cast<std::size_t>(r) * n, n).same_values(expected));
    }
    for (const auto& algorithm : all_to_all_algorithms()) {
      CAPTURE(algorithm.name);
      const auto send = DeviceTensor::upload(blocks_of(r, P, n), dev);
      auto recv = DeviceTensor::zeros(static_cast<std::int64_t>(n) * P, DType::Float32, dev);
      Comm comm(transport, sequence++);
      algorithm.run(comm, elems_of(send), blocks, elems_of(recv), blocks);
      std::vector<Tensor> from;
      for (int q = 0; q < P; ++q) from.push_back(slice(blocks_of(q, P, n), static_cast<std::size_t>(r) * n, n));
      CHECK(done(recv).same_values(concat(from)));
    }
    for (const auto& algorithm : gather_algorithms()) {
      CAPTURE(algorithm.name);
      const auto in = DeviceTensor::upload(input_of(r, n), dev);
      auto all = DeviceTensor::zeros(r == 0 ? static_cast<std::int64_t>(n) * P : 0, DType::Float32, dev);
      Comm comm(transport, sequence++);
      algorithm.run(comm, elems_of(in), elems_of(all), 0);
      const Tensor got = done(all);
      if (r == 0) CHECK(got.same_values(concat(everyone)));
    }
    for (const auto& algorithm : scatter_algorithms()) {
      CAPTURE(algorithm.name);
      const auto source = DeviceTensor::upload(blocks_of(0, P, n), dev);
      auto part = DeviceTensor::zeros(static_cast<std::int64_t>(n), DType::Float32, dev);
      Comm comm(transport, sequence++);
      algorithm.run(comm, r == 0 ? elems_of(source) : Elems{}, elems_of(part), 0);
      CHECK(done(part).same_values(slice(blocks_of(0, P, n), static_cast<std::size_t>(r) * n, n)));
    }
    for (const auto& algorithm : barrier_algorithms()) {
      CAPTURE(algorithm.name);
      Comm comm(transport, sequence++);
      algorithm.run(comm);
    }
  }
}

}  // namespace

TEST_CASE("NCCL's own collectives at world size 1") {
  nccl::NcclGroup group(single_rank());
  check_native(group);
}

TEST_CASE("NcclGroup refuses bitwise ops and sends to itself, before calling NCCL") {
  nccl::NcclGroup group(single_rank());
  auto t = DeviceTensor::zeros(4, DType::Int32, 0);
  CHECK_THROWS_WITH_AS(group.all_reduce(t, ReduceOp::BAND), doctest::Contains("not an NCCL op"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(group.send(t, 0), doctest::Contains("is this rank itself"),
                       std::invalid_argument);
  // The communicator is still usable afterwards.
  group.all_reduce(t, ReduceOp::SUM);
}

TEST_CASE("the hand-written algorithms on GPU memory at world size 1") {
  nccl::NcclTransport transport(single_rank());
  CHECK(transport.memory() == MemoryKind::Device);
  check_hand_written(transport);
}

TEST_CASE("NcclTransport's memory operations are on the GPU and match the host ones") {
  nccl::NcclTransport transport(single_rank());
  Buffer buffer = transport.allocate(4096);
  cudaPointerAttributes attributes{};
  REQUIRE(cudaPointerGetAttributes(&attributes, buffer.storage.get()) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeDevice);
  CHECK(attributes.device == 0);

  const std::size_t n = 1001;
  const Tensor a = input_of(3, n, DType::Float64);
  const Tensor b = input_of(5, n, DType::Float64);
  auto acc = DeviceTensor::upload(a, 0);
  auto in = DeviceTensor::upload(b, 0);
  auto copy = DeviceTensor::zeros(static_cast<std::int64_t>(n), DType::Float64, 0);
  transport.copy(elems_of(copy).bytes(), elems_of(acc).bytes());
  transport.reduce(DType::Float64, ReduceOp::SUM, elems_of(acc).bytes(), elems_of(in).bytes());
  transport.divide(DType::Float64, elems_of(acc).bytes(), 4);
  transport.synchronize();
  Tensor expected = a;
  reduce_host(DType::Float64, ReduceOp::SUM, expected.bytes().data(), b.bytes().data(), n);
  divide_host(DType::Float64, expected.bytes().data(), n, 4);
  CHECK(acc.download().same_values(expected));
  CHECK(copy.download().same_values(a));
}

TEST_CASE("ProcessGroup over the staged NCCL transport (what --backend nccl runs), world size 1") {
  ProcessGroup pg(std::make_shared<nccl::HostStagedNcclTransport>(single_rank()));
  CHECK(pg.backend() == "nccl");
  Tensor t = input_of(0, 1000);
  pg.all_reduce(t);
  CHECK(t.same_values(input_of(0, 1000)));
  pg.barrier();
}

namespace {
// Every check on one rank of a world: NCCL's collectives, the hand-written
// algorithms on GPU memory, and what --backend nccl runs (ProcessGroup on
// host tensors, staged through the GPU).
void check_everything(const std::shared_ptr<NcclCommunicator>& communicator) {
  const int world = communicator->size();
  {
    nccl::NcclGroup group(communicator);
    check_native(group);
  }
  {
    nccl::NcclTransport transport(communicator);
    check_hand_written(transport);
  }
  ProcessGroup pg(std::make_shared<nccl::HostStagedNcclTransport>(communicator));
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20}) {
    CAPTURE(n);
    for (const std::string& algorithm : algorithm_names(Collective::AllReduce)) {
      CAPTURE(algorithm);
      pg.set_algorithm(Collective::AllReduce, algorithm);
      Tensor t = input_of(pg.rank(), n);
      pg.all_reduce(t);
      CHECK(t.same_values(sum_over_ranks(world, n)));
    }
    std::vector<Tensor> gathered;
    for (int q = 0; q < world; ++q) gathered.push_back(Tensor(DType::Float32, {static_cast<std::int64_t>(n)}));
    pg.all_gather(gathered, input_of(pg.rank(), n));
    for (int q = 0; q < world; ++q)
      CHECK(gathered[static_cast<std::size_t>(q)].same_values(input_of(q, n)));
  }
  pg.barrier();
}
}  // namespace

TEST_CASE("across every visible GPU (ranks as threads), when there are two or more") {
  const int gpus = nccl::visible_gpu_count();
  if (gpus < 2) {
    MESSAGE("only " << gpus << " GPU visible: the multi-GPU case is not run");
    return;
  }
  nccl::run_nccl_world(std::min(gpus, 8), check_everything, kTimeout);
}

// test_nccl_processes starts this case as 2, 3 and 4 processes sharing GPU 0,
// each its own NCCL host (NCCL_HOSTID), as a job would start its ranks.
TEST_CASE("as one process of a job (RANK, WORLD_SIZE, MASTER_PORT set): every check") {
  if (!std::getenv("RANK")) {
    MESSAGE("not started as a rank of a job: test_nccl_processes runs this case");
    return;
  }
  ringlab::backends::NcclRank joined = ringlab::backends::join_nccl_job(tcp::from_environment());
  MESSAGE("rank " << joined.communicator->rank() << " of " << joined.communicator->size()
                  << " on GPU " << joined.communicator->device());
  check_everything(joined.communicator);
}
