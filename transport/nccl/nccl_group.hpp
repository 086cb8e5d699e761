// NCCL's own collectives on DeviceTensors: what torch.distributed's "nccl"
// backend calls. Every call is synchronous like ProcessGroup's (it returns once
// the GPU has finished, waiting at most the communicator's timeout), so a
// lesson can print the result right after.
//
//   NcclGroup group(communicator);
//   auto t = DeviceTensor::upload(Tensor::arange(4) + 1, group.device());
//   group.all_reduce(t, ReduceOp::SUM);     // ncclAllReduce, in place
//   Tensor back = t.download();
//
// Next to it, NcclTransport (nccl_transport.hpp) runs ringlab's hand-written
// algorithms over ncclSend/ncclRecv, so the two can be compared.
#pragma once

#include <nccl.h>

#include <memory>

#include "ops/reduce_op.hpp"
#include "transport/nccl/communicator.hpp"
#include "transport/nccl/device_memory.hpp"

namespace ringlab::nccl {

// SUM, PRODUCT, MIN, MAX, AVG -> ncclSum, ncclProd, ncclMin, ncclMax, ncclAvg;
// on bool, as torch's NCCL backend maps them, SUM -> ncclMax (or) and
// PRODUCT -> ncclMin (and). BAND/BOR/BXOR have no NCCL op: std::invalid_argument
// saying so and pointing to the hand-written path, which has them.
ncclRedOp_t to_nccl_op(ReduceOp op, DType dtype = DType::Float32);
// The NCCL type that reduces dtype: ncclInt8, ncclUint8 (uint8 and bool),
// ncclInt32, ncclInt64, ncclFloat16, ncclBfloat16, ncclFloat32, ncclFloat64.
// int16 has none (std::invalid_argument saying what to use instead).
ncclDataType_t to_nccl_type(DType dtype);

// What NCCL is told it moves for `count` elements of dtype in a collective
// that only copies (broadcast, all_gather, gather, scatter, all_to_all,
// send/recv): the reducing type, or, for int16, twice as many ncclUint8.
struct NcclElements {
  ncclDataType_t type;
  std::size_t count;
};
NcclElements carried(DType dtype, std::size_t count);

class NcclGroup {
 public:
  explicit NcclGroup(std::shared_ptr<NcclCommunicator> communicator);

  int rank() const { return comm_->rank(); }
  int size() const { return comm_->size(); }
  int device() const { return comm_->device(); }
  NcclCommunicator& communicator() { return *comm_; }

  // NCCL >= 2.28 has ncclAlltoAll, ncclGather and ncclScatter; older versions
  // do not, and these three are then grouped ncclSend/ncclRecv. true forces
  // the grouped route on any version (the tests run both).
  void set_point_to_point_fallback(bool on) { point_to_point_ = on; }
  bool point_to_point_fallback() const { return point_to_point_; }

  // In place on every rank (like dist.broadcast / dist.all_reduce).
  void broadcast(DeviceTensor& tensor, int src);
  void all_reduce(DeviceTensor& tensor, ReduceOp op = ReduceOp::SUM);
  // In place; only dst's result is defined (NCCL leaves the others' alone).
  void reduce(DeviceTensor& tensor, int dst, ReduceOp op = ReduceOp::SUM);
  // output: size() * input.numel() elements, block r from rank r.
  void all_gather(DeviceTensor& output, const DeviceTensor& input);
  // input: size() * output.numel() elements; rank r gets the reduction of block r.
  void reduce_scatter(DeviceTensor& output, const DeviceTensor& input,
                      ReduceOp op = ReduceOp::SUM);
  // input/output: size() equal blocks; block d of input goes to rank d, block s
  // of output comes from rank s.
  void all_to_all(DeviceTensor& output, const DeviceTensor& input);
  // output (dst only; nullptr elsewhere): size() * input.numel() elements.
  void gather(const DeviceTensor& input, DeviceTensor* output, int dst);
  // input (src only; nullptr elsewhere): size() * output.numel() elements.
  void scatter(DeviceTensor& output, const DeviceTensor* input, int src);
  void send(const DeviceTensor& tensor, int dst);
  void recv(DeviceTensor& tensor, int src);
  // Sends `out` to dst while receiving `in` from src, in one NCCL group (a
  // ring where everyone sends first cannot deadlock).
  void sendrecv(const DeviceTensor& out, int dst, DeviceTensor& in, int src);
  // A one-element all_reduce: returns once every rank has reached it.
  void barrier();

 private:
  std::string prefix(const char* op) const;
  void check_tensor(const char* op, const DeviceTensor& t) const;
  void check_root(const char* op, int root, const char* name) const;
  void check_peer(const char* op, int peer, const char* name) const;
  void check_blocks(const char* op, const DeviceTensor& whole, const char* whole_name,
                    const DeviceTensor& block, const char* block_name) const;
  // Issues `call` (the NCCL calls) under the issue lock, then waits for it.
  template <typename Call>
  void run(const std::string& what, Call&& call);

  std::shared_ptr<NcclCommunicator> comm_;
  bool point_to_point_ = NCCL_VERSION_CODE < NCCL_VERSION(2, 28, 0);
  DeviceTensor barrier_token_;
};

}  // namespace ringlab::nccl
