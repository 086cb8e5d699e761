// A rank for the fault tests (test_launch_faults): joins the TCP process group
// from the environment (ringlab run sets it), runs all_reduce `iterations`
// times and checks every result against its closed form; one rank can be told
// to die (SIGKILL, mid-transfer), to stall (sleep) or to freeze (SIGSTOP) at
// some iteration.
//
//   tcp_fault_rank [--iterations N] [--elements E]
//                  [--die-rank R --die-at K] [--stall-rank R --stall-at K]
//                  [--freeze-rank R --freeze-at K]
//
// Rank r contributes r + 1 + i at iteration i, so every element of the sum is
// P(P+1)/2 + P*i. Prints "rank r: N all_reduce ok" at the end; on any error
// prints "tcp_fault_rank: rank r: <what>" to stderr (just "tcp_fault_rank:
// <what>" before the rank is known) and exits 1.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "backends/backends.hpp"

namespace {

struct Plan {
  int iterations = 5;
  std::int64_t elements = 1 << 20;  // 8 MiB of int64: a transfer long enough to die in
  int die_rank = -1, die_at = -1;
  int stall_rank = -1, stall_at = -1;
  int freeze_rank = -1, freeze_at = -1;
};

Plan parse(int argc, char** argv) {
  Plan plan;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long long value = std::atoll(argv[i + 1]);
    if (flag == "--iterations") plan.iterations = static_cast<int>(value);
    else if (flag == "--elements") plan.elements = value;
    else if (flag == "--die-rank") plan.die_rank = static_cast<int>(value);
    else if (flag == "--die-at") plan.die_at = static_cast<int>(value);
    else if (flag == "--stall-rank") plan.stall_rank = static_cast<int>(value);
    else if (flag == "--stall-at") plan.stall_at = static_cast<int>(value);
    else if (flag == "--freeze-rank")
      plan.freeze_rank = static_cast<int>(value);
    else if (flag == "--freeze-at")
      plan.freeze_at = static_cast<int>(value);
    else {
      std::fprintf(stderr, "tcp_fault_rank: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return plan;
}

}  // namespace

int main(int argc, char** argv) {
  const Plan plan = parse(argc, argv);
  int rank = -1;
  try {
    std::unique_ptr<ringlab::ProcessGroup> pg = ringlab::init_process_group("tcp");
    rank = pg->rank();
    const int world = pg->size();
    for (int i = 0; i < plan.iterations; ++i) {
      ringlab::Tensor tensor = ringlab::Tensor::zeros(plan.elements, ringlab::DType::Int64) + (rank + 1 + i);
      if (rank == plan.stall_rank && i == plan.stall_at)
        std::this_thread::sleep_for(std::chrono::hours(1));  // the launcher or a timeout ends this
      if (rank == plan.freeze_rank && i == plan.freeze_at) ::raise(SIGSTOP);  // until killed
      if (rank == plan.die_rank && i == plan.die_at) {
        // Start the collective, let the bytes flow, then die in the middle of it.
        ringlab::Work work = pg->all_reduce_async(tensor);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ::raise(SIGKILL);
      }
      pg->all_reduce(tensor);
      const std::int64_t expected = std::int64_t{world} * (world + 1) / 2 + std::int64_t{world} * i;
      const auto values = tensor.data<std::int64_t>();
      for (std::size_t j = 0; j < values.size(); ++j)
        if (values[j] != expected) {
          std::fprintf(stderr,
                       "tcp_fault_rank: rank %d: iteration %d element %zu is %lld, not %lld\n",
                       rank, i, j, static_cast<long long>(values[j]),
                       static_cast<long long>(expected));
          return 1;
        }
    }
    std::printf("rank %d: %d all_reduce ok\n", rank, plan.iterations);
    return 0;
  } catch (const std::exception& e) {
    // Transport errors already start with "rank r: "; others get it here.
    const std::string what = e.what();
    const std::string own = "rank " + std::to_string(rank) + ": ";
    if (rank >= 0 && what.rfind(own, 0) != 0)
      std::fprintf(stderr, "tcp_fault_rank: %s%s\n", own.c_str(), what.c_str());
    else
      std::fprintf(stderr, "tcp_fault_rank: %s\n", what.c_str());
    return 1;
  }
}
