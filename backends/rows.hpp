// The functions behind each row of the backend table (backends.cpp), one file
// per kind of rank (threads, TCP processes, GPUs). Private to backends/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backends.hpp"

namespace ringlab::backends {

// thread_ranks.cpp: ranks as threads of this process, one adapter for both:
// inproc (transport/inproc.hpp) and NCCL's point-to-point rules
// (transport/nccl_rules/nccl_rules.hpp).
void run_inproc_world(int world, const RankBody& body, const ProcessGroupOptions& group);
void run_nccl_rules_ranks(int world, const RankBody& body, const ProcessGroupOptions& group);

// tcp.cpp: ranks as processes over TCP (transport/tcp/tcp.hpp).
void run_tcp_world(int world, const RankBody& body, const ProcessGroupOptions& group);
std::vector<std::string> run_tcp_process_world(int world, const AnswerBody& body,
                                               const ProcessGroupOptions& group,
                                               TraceSession* trace);
std::unique_ptr<ProcessGroup> init_tcp_process_group(ProcessGroupOptions options);

#ifdef RINGLAB_WITH_NCCL
// nccl.cpp: GPUs (transport/nccl/): threads with a GPU each, or processes sharing fewer.
void run_nccl_ranks(int world, const RankBody& body, const ProcessGroupOptions& group);
std::unique_ptr<ProcessGroup> init_nccl_process_group(ProcessGroupOptions options);
// "" when CUDA shows at least `world` GPUs, else how many it shows and why.
std::string nccl_cannot_run(int world);
#endif

}  // namespace ringlab::backends
