// What the NCCL backend says when it cannot run, checked without a GPU: asking
// for more ranks than there are GPUs fails before NCCL is called, with a
// message that says so; BAND/BOR/BXOR are refused as NCCL ops; and where
// launched ranks outnumber a host's GPUs, how they share them.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "beside_this_program.hpp"
// ringlab next to this program's folder, so a copied build runs (tools/gpu_pack.sh).
#define RINGLAB_EXE ringlab::testing::beside_this_program("../tools/ringlab")
#include "run_program.hpp"
#include "transport/nccl/communicator.hpp"
#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/nccl_group.hpp"
#include "transport/nccl/store_rendezvous.hpp"

using namespace ringlab;

namespace {
using Run = ringlab::testing::ProgramRun;
using ringlab::testing::run_ringlab;

int gpus_or_zero() { return std::max(nccl::visible_gpu_count(), 0); }

std::string thrown_by(void (*f)(int), int argument) {
  try {
    f(argument);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}
}  // namespace

// First in the file (doctest runs a file's cases in order), while nothing
// in this process has started CUDA.
TEST_CASE("the GPUs counted by a child process are those CUDA shows here") {
  REQUIRE_FALSE(nccl::cuda_started_here());
  std::string here_why, child_why;
  const int child = nccl::gpu_count_without_starting_cuda(&child_why);
  CHECK_FALSE(nccl::cuda_started_here());  // the child counted
  const int here = nccl::visible_gpu_count(&here_why);
  INFO("child: " << child << " (" << child_why << "), here: " << here << " (" << here_why << ")");
  CHECK(child == here);
  CHECK(child_why == here_why);
  CHECK(nccl::cuda_started_here());
  // Once CUDA has started here, the count is made here.
  CHECK(nccl::gpu_count_without_starting_cuda() == here);
}

TEST_CASE("more ranks than GPUs is refused before NCCL is called, saying why") {
  const int too_many = gpus_or_zero() + 1;
  const std::string message = thrown_by(nccl::require_gpus_for_ranks, too_many);
  INFO(message);
  CHECK(message.find(std::to_string(too_many) + " ranks were asked for") != std::string::npos);
  if (gpus_or_zero() == 0) {
    CHECK(message.find("the nccl backend needs a GPU") != std::string::npos);
    CHECK(message.find("shows no GPU") != std::string::npos);
  } else {
    CHECK(message.find("ranks as threads take one GPU each") != std::string::npos);
    CHECK(message.find("only " + std::to_string(gpus_or_zero()) + " GPU") != std::string::npos);
  }
  // As many ranks as GPUs is fine (zero ranks too, trivially).
  CHECK(thrown_by(nccl::require_gpus_for_ranks, gpus_or_zero()).empty());
}

// With a GPU, more ranks than GPUs run as processes that share them
// (test_nccl_lessons checks what they print).
TEST_CASE("ringlab lesson --backend nccl without a GPU fails with that message") {
  if (gpus_or_zero() > 0) return;
  const Run run = run_ringlab("lesson all_reduce --backend nccl --world-size 2");
  INFO(run.output);
  CHECK(run.status != 0);
  CHECK(run.output.find("the nccl backend needs a GPU") != std::string::npos);
  CHECK(run.output.find("after reudce") == std::string::npos);  // it never ran
}

// srun sets only SLURM_*: rank 1 of that job is one rank, as under torchrun's
// variables, and says it has no GPU; it does not start a world of 2 of its own.
TEST_CASE("under srun, --backend nccl and bench --native are one rank of the job") {
  if (gpus_or_zero() > 0) return;
  const std::string srun = "SLURM_PROCID=1 SLURM_NTASKS=2 MASTER_PORT=1 RINGLAB_TIMEOUT_MS=2000 ";
  for (const std::string& command : {std::string(" lesson all_reduce --backend nccl"),
                                     std::string(" bench --backend nccl --native")}) {
    const Run run = ringlab::testing::run_shell(ringlab::testing::kCleanEnvironment + srun +
                                                RINGLAB_EXE + command);
    INFO(command << " printed:\n" << run.output);
    CHECK(run.status != 0);
    CHECK(run.output.find("rank 1: the nccl backend needs a GPU") != std::string::npos);
    CHECK(run.output.find("ranks were asked for") == std::string::npos);  // a world of its own
  }
}

TEST_CASE("ringlab lists nccl as a backend") {
  const Run run = run_ringlab("lesson --help");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.find("nccl (") != std::string::npos);
}

TEST_CASE("reduce ops map onto NCCL's; bitwise ones are refused with a pointer to the kernels") {
  CHECK(nccl::to_nccl_op(ReduceOp::SUM) == ncclSum);
  CHECK(nccl::to_nccl_op(ReduceOp::PRODUCT) == ncclProd);
  CHECK(nccl::to_nccl_op(ReduceOp::MIN) == ncclMin);
  CHECK(nccl::to_nccl_op(ReduceOp::MAX) == ncclMax);
  CHECK(nccl::to_nccl_op(ReduceOp::AVG) == ncclAvg);
  for (ReduceOp op : {ReduceOp::BAND, ReduceOp::BOR, ReduceOp::BXOR}) {
    CAPTURE(op_name(op));
    try {
      nccl::to_nccl_op(op);
      FAIL("no error");
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      CHECK(message.find("not an NCCL op") != std::string::npos);
      CHECK(message.find("hand-written") != std::string::npos);
    }
  }
  CHECK(nccl::to_nccl_type(DType::Int32) == ncclInt32);
  CHECK(nccl::to_nccl_type(DType::Int64) == ncclInt64);
  CHECK(nccl::to_nccl_type(DType::Float32) == ncclFloat32);
  CHECK(nccl::to_nccl_type(DType::Float64) == ncclFloat64);
}

TEST_CASE("every dtype maps onto NCCL's types as torch's NCCL backend maps it; int16 is carried") {
  CHECK(nccl::to_nccl_type(DType::UInt8) == ncclUint8);
  CHECK(nccl::to_nccl_type(DType::Int8) == ncclInt8);
  CHECK(nccl::to_nccl_type(DType::Float16) == ncclFloat16);
  CHECK(nccl::to_nccl_type(DType::BFloat16) == ncclBfloat16);
  // bool travels as its bytes; its sum is or (ncclMax) and its product and
  // (ncclMin), as in torch's ProcessGroupNCCL.
  CHECK(nccl::to_nccl_type(DType::Bool) == ncclUint8);
  CHECK(nccl::to_nccl_op(ReduceOp::SUM, DType::Bool) == ncclMax);
  CHECK(nccl::to_nccl_op(ReduceOp::PRODUCT, DType::Bool) == ncclMin);
  CHECK(nccl::to_nccl_op(ReduceOp::SUM, DType::UInt8) == ncclSum);
  // NCCL has no int16: reductions refuse it, naming the dtype and what to
  // do; the collectives that only copy carry its bytes.
  CHECK_THROWS_WITH_AS(nccl::to_nccl_type(DType::Int16),
                       doctest::Contains("NCCL has no int16 type"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(nccl::to_nccl_type(DType::Int16), doctest::Contains("convert the tensor to int32"),
                       std::invalid_argument);
  const auto moved = nccl::carried(DType::Int16, 5);
  CHECK(moved.type == ncclUint8);
  CHECK(moved.count == 10);
  for (DType d : kAllDTypes) {
    if (d == DType::Int16) continue;
    CAPTURE(dtype_name(d));
    CHECK(nccl::carried(d, 5).type == nccl::to_nccl_type(d));
    CHECK(nccl::carried(d, 5).count == 5);
  }
}

TEST_CASE("an ncclUniqueId survives the store's string, and a wrong-length value is refused") {
  ncclUniqueId id{};
  for (std::size_t i = 0; i < sizeof(id.internal); ++i) id.internal[i] = static_cast<char>(i * 7);
  const std::string bytes = nccl::encode_unique_id(id);
  CHECK(bytes.size() == NCCL_UNIQUE_ID_BYTES);
  const ncclUniqueId back = nccl::decode_unique_id(bytes);
  CHECK(std::string(back.internal, sizeof(back.internal)) ==
        std::string(id.internal, sizeof(id.internal)));
  CHECK_THROWS_AS(nccl::decode_unique_id(bytes.substr(1)), std::invalid_argument);
}

TEST_CASE("ranks share a host's GPUs round-robin only where it has fewer GPUs than ranks") {
  using nccl::place_ranks;
  // Two ranks, one GPU: both on GPU 0, each an NCCL host of its own.
  for (int rank : {0, 1}) {
    const auto p = place_ranks({"box", "box"}, rank, 1);
    CHECK(p.device == 0);
    CHECK(p.ranks_on_host == 2);
    CHECK(p.host_id == "box/rank" + std::to_string(rank));
    CHECK(p.loopback);
    CHECK(p.first_on_host == (rank == 0));
  }
  // Two GPUs for two ranks: one each, nothing shared, NCCL's own host ids.
  CHECK(place_ranks({"box", "box"}, 1, 2).device == 1);
  CHECK(place_ranks({"box", "box"}, 1, 2).host_id.empty());
  CHECK(nccl::sharing_note(place_ranks({"box", "box"}, 1, 2), 2).empty());
  // Two hosts of two ranks, one GPU each: the k-th rank of a host gets GPU k % 1;
  // not loopback, since the world spans two hosts.
  const auto third = place_ranks({"a", "b", "a", "b"}, 2, 1);
  CHECK(third.device == 0);
  CHECK(third.ranks_on_host == 2);
  CHECK(third.host_id == "a/rank2");
  CHECK_FALSE(third.loopback);
  CHECK_FALSE(third.first_on_host);
  // Three ranks on two GPUs: GPUs 0, 1, 0.
  CHECK(place_ranks({"h", "h", "h"}, 2, 2).device == 0);
  CHECK(place_ranks({"h", "h", "h"}, 1, 2).device == 1);
  // Processes that set NCCL_HOSTID themselves are hosts of their own: nothing to share.
  CHECK(place_ranks({"rank-0", "rank-1"}, 1, 1).host_id.empty());
  CHECK(place_ranks({"rank-0", "rank-1"}, 1, 1).device == 0);
  const std::string note = nccl::sharing_note(place_ranks({"box", "box"}, 0, 1), 1);
  CHECK(note ==
        "nccl: 2 ranks share 1 GPU on this host, round-robin: each rank is an NCCL host of its "
        "own (NCCL_HOSTID), so messages between them travel over NCCL's network transport on "
        "loopback: correct, but not GPU speed");
  CHECK_THROWS_AS(place_ranks({"box"}, 0, 0), std::invalid_argument);
}

TEST_CASE("bench --native needs --backend nccl, and says why where it cannot run") {
  Run run = run_ringlab("bench --native --backend inproc -n 2");
  INFO(run.output);
  CHECK(run.status != 0);
  CHECK(run.output.find("--native compares NCCL's own collective with the hand-written one on GPU "
                        "memory: it needs --backend nccl, not inproc") != std::string::npos);
  if (gpus_or_zero() > 0) return;
  run = run_ringlab("bench --native --backend nccl -n 1");
  INFO(run.output);
  CHECK(run.status != 0);
  CHECK(run.output.find("shows no GPU") != std::string::npos);
  CHECK(run.output.find("# ringlab bench --native") == std::string::npos);  // nothing ran
}
