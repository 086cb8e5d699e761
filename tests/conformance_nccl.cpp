// The conformance suite over NCCL, on one GPU per rank (ranks as threads,
// run_nccl_world): NcclTransport, whose memory is GPU memory, and the
// host-staged transport behind --backend nccl. Its main() is
// test_nccl_main.cpp's, which skips (exit code 77) where there is no GPU.
//
// NCCL has no tags, cannot see a size mismatch and cannot receive from any
// source, its sends may wait for their receives, and a timeout aborts the
// communicator
// (transport/nccl/nccl_transport.hpp): the bindings say so, and the suite
// skips exactly those checks.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/nccl_transport.hpp"
#include "transport/nccl/nccl_world.hpp"
#include "transport/nccl/staged_transport.hpp"
#include "transport_conformance.hpp"

namespace ringlab::conformance {

namespace {

template <typename NcclTransportKind>
Binding nccl_binding(std::string name) {
  Binding b;
  b.name = std::move(name);
  b.max_ranks = std::max(nccl::visible_gpu_count(), 0);
  b.matches_tags = false;
  b.buffers_sends = false;
  b.detects_size_mismatch = false;
  b.survives_timeout = false;
  b.receives_from_any_source = false;
  b.launches_in_order = true;
  b.run = [](int size, Duration timeout, const RankBody& body) {
    std::vector<RankOutcome> outcomes(static_cast<std::size_t>(size));
    const RankBody recorded = record_outcome(outcomes, body);
    try {
      nccl::run_nccl_world(
          size,
          [&](std::shared_ptr<nccl::NcclCommunicator> communicator) {
            NcclTransportKind transport(std::move(communicator));
            transport.set_timeout(timeout);
            recorded(transport);
          },
          timeout);
    } catch (const std::exception&) {
      // run_nccl_world rethrows the first failure; every rank's is in outcomes.
    }
    return outcomes;
  };
  return b;
}

// On the rank's stream, and waited for: a cudaMemcpy would run on the legacy
// default stream, which the communicator's non-blocking stream does not wait
// for (and from pageable memory it may return before the bytes have landed).
void copy_bytes(Transport& t, MutBytes to, ConstBytes from) {
  if (from.empty()) return;
  nccl::NcclCommunicator& comm = dynamic_cast<nccl::NcclTransport&>(t).communicator();
  nccl::DeviceGuard on_device(comm.device(), t.rank());
  {
    std::lock_guard lock(comm.issue_mutex());
    nccl::check_cuda(cudaMemcpyAsync(to.data(), from.data(), from.size(), cudaMemcpyDefault,
                                     comm.stream()),
                     t.rank(), "cudaMemcpyAsync of " + std::to_string(from.size()) + " test bytes");
  }
  comm.wait_stream("copying test bytes");
}

}  // namespace

std::vector<Binding> bindings() {
  Binding device = nccl_binding<nccl::NcclTransport>("nccl (GPU memory)");
  device.to_transport = copy_bytes;
  device.to_host = copy_bytes;
  return {device, nccl_binding<nccl::HostStagedNcclTransport>("nccl (host memory, staged)")};
}

}  // namespace ringlab::conformance
