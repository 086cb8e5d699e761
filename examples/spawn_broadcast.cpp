// A world of ranks started by the program itself, as torch.multiprocessing
// spawn does: threads of this process (the "inproc" backend, the default
// here), or processes over TCP ("tcp": forked at the call, each running run()
// and ending there; the program goes on once they all have):
//
//   ./spawn_broadcast 4
//   ./spawn_broadcast 4 tcp
//
// Rank 0 holds tensor([0, 1, ..., 7]), the others zeros; after the broadcast
// every rank holds rank 0's tensor.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "backends/backends.hpp"

void run(ringlab::ProcessGroup& pg) {  // def run(rank, size)
  auto tensor = pg.rank() == 0 ? ringlab::Tensor::arange(8)
                               : ringlab::Tensor::zeros(8, ringlab::DType::Int64);
  pg.broadcast(tensor, /*src=*/0);  // dist.broadcast(tensor, src=0)
  std::printf("after broadcast Rank %d has data %s\n", pg.rank(), tensor.to_string().c_str());
}

int main(int argc, char** argv) try {
  const int world_size = argc > 1 ? std::atoi(argv[1]) : 4;
  if (world_size < 1) {
    std::fprintf(stderr, "spawn_broadcast: the world size must be a positive number, not '%s'\n",
                 argv[1]);
    return 2;
  }
  const char* backend = argc > 2 ? argv[2] : "inproc";
  ringlab::backends::run_ranks(backend, world_size, run, {});  // mp.spawn(run, nprocs=world_size)
} catch (const std::exception& e) {
  std::fprintf(stderr, "spawn_broadcast: %s\n", e.what());
  return 1;
}
