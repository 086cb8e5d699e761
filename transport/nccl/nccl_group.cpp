#include "transport/nccl/nccl_group.hpp"

#include <stdexcept>

#include "transport/nccl/cuda_check.hpp"

namespace ringlab::nccl {

ncclRedOp_t to_nccl_op(ReduceOp op, DType dtype) {
  switch (op) {
    case ReduceOp::SUM: return dtype == DType::Bool ? ncclMax : ncclSum;
    case ReduceOp::PRODUCT: return dtype == DType::Bool ? ncclMin : ncclProd;
    case ReduceOp::MIN: return ncclMin;
    case ReduceOp::MAX: return ncclMax;
    case ReduceOp::AVG: return ncclAvg;
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR: break;
  }
  throw std::invalid_argument(
      "reduce op " + std::string(op_name(op)) +
      " is not an NCCL op (NCCL has sum, prod, min, max, avg): use the hand-written path "
      "(NcclTransport, or ProcessGroup with --backend nccl), whose CUDA kernels have it");
}

ncclDataType_t to_nccl_type(DType dtype) {
  switch (dtype) {
    case DType::Bool: return ncclUint8;  // bytes 0 and 1; or/and are max/min
    case DType::UInt8: return ncclUint8;
    case DType::Int8: return ncclInt8;
    case DType::Int16: break;
    case DType::Int32: return ncclInt32;
    case DType::Int64: return ncclInt64;
    case DType::Float16: return ncclFloat16;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
    case DType::BFloat16: return ncclBfloat16;
#else
    case DType::BFloat16:
      throw std::invalid_argument("this NCCL (" + std::to_string(NCCL_VERSION_CODE) +
                                  ") has no bfloat16, which came in NCCL 2.10: use the "
                                  "hand-written path (ProcessGroup with --backend nccl)");
#endif
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
  }
  throw std::invalid_argument(
      "NCCL has no " + std::string(dtype_name(dtype)) +
      " type, so ncclAllReduce and the other NCCL reductions cannot take one (torch's NCCL "
      "backend refuses int16 too): convert the tensor to int32, or use the hand-written path "
      "(ProcessGroup with --backend nccl), whose CUDA kernels reduce int16");
}

NcclElements carried(DType dtype, std::size_t count) {
  if (dtype == DType::Int16) return {ncclUint8, count * element_size(dtype)};
  return {to_nccl_type(dtype), count};
}

NcclGroup::NcclGroup(std::shared_ptr<NcclCommunicator> communicator)
    : comm_(std::move(communicator)) {
  if (!comm_) throw std::invalid_argument("NcclGroup needs a communicator");
  barrier_token_ = DeviceTensor::zeros(1, DType::Int32, comm_->device());
}

std::string NcclGroup::prefix(const char* op) const {
  return "rank " + std::to_string(rank()) + ": nccl " + op + ": ";
}

void NcclGroup::check_tensor(const char* op, const DeviceTensor& t) const {
  if (t.nbytes() == 0 || t.device() == device()) return;
  throw std::invalid_argument(prefix(op) + "the tensor is on GPU " + std::to_string(t.device()) +
                              " but this rank's GPU is " + std::to_string(device()) +
                              ": upload it with DeviceTensor::upload(host, group.device())");
}

void NcclGroup::check_root(const char* op, int root, const char* name) const {
  if (root >= 0 && root < size()) return;
  throw std::invalid_argument(prefix(op) + name + " = " + std::to_string(root) +
                              " is out of range: the world has ranks 0.." +
                              std::to_string(size() - 1));
}

void NcclGroup::check_peer(const char* op, int peer, const char* name) const {
  check_root(op, peer, name);
  if (peer == rank())
    throw std::invalid_argument(prefix(op) + name + " = " + std::to_string(peer) +
                                " is this rank itself; a rank cannot send to or receive from itself");
}

void NcclGroup::check_blocks(const char* op, const DeviceTensor& whole, const char* whole_name,
                             const DeviceTensor& block, const char* block_name) const {
  check_tensor(op, whole);
  check_tensor(op, block);
  if (whole.dtype() != block.dtype())
    throw std::invalid_argument(prefix(op) + whole_name + " is " +
                                std::string(dtype_name(whole.dtype())) + " but " + block_name +
                                " is " + std::string(dtype_name(block.dtype())));
  if (whole.numel() != block.numel() * static_cast<std::size_t>(size()))
    throw std::invalid_argument(prefix(op) + whole_name + " has " + std::to_string(whole.numel()) +
                                " elements; it needs world size (" + std::to_string(size()) +
                                ") x " + block_name + " (" + std::to_string(block.numel()) + ") = " +
                                std::to_string(block.numel() * static_cast<std::size_t>(size())));
}

template <typename Call>
void NcclGroup::run(const std::string& what, Call&& call) {
  DeviceGuard on_device(device(), rank());
  {
    std::lock_guard lock(comm_->issue_mutex());
    comm_->check_usable();
    call(comm_->get(), comm_->stream());
    comm_->wait_issued(what);
  }
  comm_->wait_stream(what);
}

void NcclGroup::broadcast(DeviceTensor& tensor, int src) {
  check_tensor("broadcast", tensor);
  check_root("broadcast", src, "src");
  const NcclElements moved = carried(tensor.dtype(), tensor.numel());
  run("ncclBroadcast", [&](ncclComm_t comm, cudaStream_t stream) {
    check_nccl(ncclBroadcast(tensor.data(), tensor.data(), moved.count, moved.type, src, comm,
                             stream),
               rank(), "ncclBroadcast");
  });
}

void NcclGroup::all_reduce(DeviceTensor& tensor, ReduceOp op) {
  check_tensor("all_reduce", tensor);
  check_op(op, tensor.dtype());
  const ncclRedOp_t nccl_op = to_nccl_op(op, tensor.dtype());
  run("ncclAllReduce", [&](ncclComm_t comm, cudaStream_t stream) {
    check_nccl(ncclAllReduce(tensor.data(), tensor.data(), tensor.numel(),
                             to_nccl_type(tensor.dtype()), nccl_op, comm, stream),
               rank(), "ncclAllReduce");
  });
}

void NcclGroup::reduce(DeviceTensor& tensor, int dst, ReduceOp op) {
  check_tensor("reduce", tensor);
  check_root("reduce", dst, "dst");
  check_op(op, tensor.dtype());
  const ncclRedOp_t nccl_op = to_nccl_op(op, tensor.dtype());
  run("ncclReduce", [&](ncclComm_t comm, cudaStream_t stream) {
    check_nccl(ncclReduce(tensor.data(), tensor.data(), tensor.numel(),
                          to_nccl_type(tensor.dtype()), nccl_op, dst, comm, stream),
               rank(), "ncclReduce");
  });
}

void NcclGroup::all_gather(DeviceTensor& output, const DeviceTensor& input) {
  check_blocks("all_gather", output, "output", input, "input");
  const NcclElements moved = carried(input.dtype(), input.numel());
  run("ncclAllGather", [&](ncclComm_t comm, cudaStream_t stream) {
    check_nccl(ncclAllGather(input.data(), output.data(), moved.count, moved.type, comm, stream),
               rank(), "ncclAllGather");
  });
}

void NcclGroup::reduce_scatter(DeviceTensor& output, const DeviceTensor& input, ReduceOp op) {
  check_blocks("reduce_scatter", input, "input", output, "output");
  check_op(op, output.dtype());
  const ncclRedOp_t nccl_op = to_nccl_op(op, output.dtype());
  run("ncclReduceScatter", [&](ncclComm_t comm, cudaStream_t stream) {
    check_nccl(ncclReduceScatter(input.data(), output.data(), output.numel(),
                                 to_nccl_type(output.dtype()), nccl_op, comm, stream),
               rank(), "ncclReduceScatter");
  });
}

namespace {
// Where block `index` of `count` elements starts.
std::byte* block_of(const DeviceTensor& t, int index, std::size_t count) {
  return t.data() + static_cast<std::size_t>(index) * count * element_size(t.dtype());
}
}  // namespace

void NcclGroup::all_to_all(DeviceTensor& output, const DeviceTensor& input) {
  check_tensor("all_to_all", input);
  check_tensor("all_to_all", output);
  const auto world = static_cast<std::size_t>(size());
  if (input.dtype() != output.dtype() || input.numel() != output.numel() ||
      input.numel() % world != 0)
    throw std::invalid_argument(prefix("all_to_all") + "input and output need the same dtype and " +
                                "a number of elements divisible by the world size (" +
                                std::to_string(world) + "); got " + std::to_string(input.numel()) +
                                " and " + std::to_string(output.numel()));
  const std::size_t elements = input.numel() / world;
  const auto [type, count] = carried(input.dtype(), elements);
  auto block = [&](const DeviceTensor& t, int peer) { return block_of(t, peer, elements); };
  run("all_to_all", [&](ncclComm_t comm, cudaStream_t stream) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    if (!point_to_point_) {
      check_nccl(ncclAlltoAll(input.data(), output.data(), count, type, comm, stream), rank(),
                 "ncclAlltoAll");
      return;
    }
#endif
    check_nccl(ncclGroupStart(), rank(), "ncclGroupStart");
    for (int peer = 0; peer < size(); ++peer) {
      check_nccl(ncclSend(block(input, peer), count, type, peer, comm, stream), rank(),
                 "ncclSend to rank " + std::to_string(peer));
      check_nccl(ncclRecv(block(output, peer), count, type, peer, comm, stream), rank(),
                 "ncclRecv from rank " + std::to_string(peer));
    }
    check_nccl(ncclGroupEnd(), rank(), "ncclGroupEnd (all_to_all)");
  });
}

void NcclGroup::gather(const DeviceTensor& input, DeviceTensor* output, int dst) {
  check_root("gather", dst, "dst");
  check_tensor("gather", input);
  const bool is_root = rank() == dst;
  if (is_root != (output != nullptr))
    throw std::invalid_argument(prefix("gather") + "pass an output tensor on the dst rank (" +
                                std::to_string(dst) + ") and nullptr on the others");
  if (output) check_blocks("gather", *output, "output", input, "input");
  const auto [type, count] = carried(input.dtype(), input.numel());
  auto block = [&](const DeviceTensor& t, int peer) { return block_of(t, peer, input.numel()); };
  run("gather", [&](ncclComm_t comm, cudaStream_t stream) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    if (!point_to_point_) {
      check_nccl(ncclGather(input.data(), output ? output->data() : nullptr, count, type, dst,
                            comm, stream),
                 rank(), "ncclGather");
      return;
    }
#endif
    check_nccl(ncclGroupStart(), rank(), "ncclGroupStart");
    check_nccl(ncclSend(input.data(), count, type, dst, comm, stream), rank(), "ncclSend to dst");
    if (is_root)
      for (int peer = 0; peer < size(); ++peer)
        check_nccl(ncclRecv(block(*output, peer), count, type, peer, comm, stream), rank(),
                   "ncclRecv from rank " + std::to_string(peer));
    check_nccl(ncclGroupEnd(), rank(), "ncclGroupEnd (gather)");
  });
}

void NcclGroup::scatter(DeviceTensor& output, const DeviceTensor* input, int src) {
  check_root("scatter", src, "src");
  check_tensor("scatter", output);
  const bool is_root = rank() == src;
  if (is_root != (input != nullptr))
    throw std::invalid_argument(prefix("scatter") + "pass an input tensor on the src rank (" +
                                std::to_string(src) + ") and nullptr on the others");
  if (input) check_blocks("scatter", *input, "input", output, "output");
  const auto [type, count] = carried(output.dtype(), output.numel());
  auto block = [&](const DeviceTensor& t, int peer) { return block_of(t, peer, output.numel()); };
  run("scatter", [&](ncclComm_t comm, cudaStream_t stream) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    if (!point_to_point_) {
      check_nccl(ncclScatter(input ? input->data() : nullptr, output.data(), count, type, src,
                             comm, stream),
                 rank(), "ncclScatter");
      return;
    }
#endif
    check_nccl(ncclGroupStart(), rank(), "ncclGroupStart");
    if (is_root)
      for (int peer = 0; peer < size(); ++peer)
        check_nccl(ncclSend(block(*input, peer), count, type, peer, comm, stream), rank(),
                   "ncclSend to rank " + std::to_string(peer));
    check_nccl(ncclRecv(output.data(), count, type, src, comm, stream), rank(), "ncclRecv from src");
    check_nccl(ncclGroupEnd(), rank(), "ncclGroupEnd (scatter)");
  });
}

void NcclGroup::send(const DeviceTensor& tensor, int dst) {
  check_tensor("send", tensor);
  check_peer("send", dst, "dst");
  run("ncclSend to rank " + std::to_string(dst), [&](ncclComm_t comm, cudaStream_t stream) {
    const NcclElements moved = carried(tensor.dtype(), tensor.numel());
    check_nccl(ncclSend(tensor.data(), moved.count, moved.type, dst, comm, stream),
               rank(), "ncclSend");
  });
}

void NcclGroup::recv(DeviceTensor& tensor, int src) {
  check_tensor("recv", tensor);
  check_peer("recv", src, "src");
  run("ncclRecv from rank " + std::to_string(src), [&](ncclComm_t comm, cudaStream_t stream) {
    const NcclElements moved = carried(tensor.dtype(), tensor.numel());
    check_nccl(ncclRecv(tensor.data(), moved.count, moved.type, src, comm, stream),
               rank(), "ncclRecv");
  });
}

void NcclGroup::sendrecv(const DeviceTensor& out, int dst, DeviceTensor& in, int src) {
  check_tensor("sendrecv", out);
  check_tensor("sendrecv", in);
  check_peer("sendrecv", dst, "dst");
  check_peer("sendrecv", src, "src");
  run("ncclSend to rank " + std::to_string(dst) + " with ncclRecv from rank " + std::to_string(src),
      [&](ncclComm_t comm, cudaStream_t stream) {
        check_nccl(ncclGroupStart(), rank(), "ncclGroupStart");
        check_nccl(ncclSend(out.data(), out.numel(), to_nccl_type(out.dtype()), dst, comm, stream),
                   rank(), "ncclSend");
        check_nccl(ncclRecv(in.data(), in.numel(), to_nccl_type(in.dtype()), src, comm, stream),
                   rank(), "ncclRecv");
        check_nccl(ncclGroupEnd(), rank(), "ncclGroupEnd (sendrecv)");
      });
}

void NcclGroup::barrier() {
  run("barrier (a one-element ncclAllReduce)", [&](ncclComm_t comm, cudaStream_t stream) {
    check_nccl(ncclAllReduce(barrier_token_.data(), barrier_token_.data(), 1, ncclInt32, ncclSum,
                             comm, stream),
               rank(), "ncclAllReduce (barrier)");
  });
}

}  // namespace ringlab::nccl
