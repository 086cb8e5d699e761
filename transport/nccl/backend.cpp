// `--backend nccl` for `ringlab lesson`, `ringlab tour` and `ringlab bench`:
// ranks are threads, one GPU each, and every ProcessGroup runs ringlab's
// hand-written algorithms on host tensors with each message carried by
// ncclSend/ncclRecv through GPU memory (staged_transport.hpp says why).
#include "lessons/runner.hpp"
#include "transport/nccl/nccl_world.hpp"
#include "transport/nccl/staged_transport.hpp"

namespace ringlab::nccl {

namespace {
void run_nccl_ranks(int world, const std::function<void(ProcessGroup&)>& body,
                    const ProcessGroupOptions& group) {
  run_nccl_world(
      world,
      [&](std::shared_ptr<NcclCommunicator> communicator) {
        ProcessGroup pg(std::make_shared<HostStagedNcclTransport>(std::move(communicator)), group);
        body(pg);
      },
      group.timeout);
}

const lessons::BackendRegistrar registrar(
    "nccl",
    "one GPU per rank, ranks as threads; the hand-written algorithms with every message sent by "
    "NCCL through GPU memory",
    run_nccl_ranks);
}  // namespace

}  // namespace ringlab::nccl
