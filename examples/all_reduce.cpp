// dist.all_reduce on every rank of a job, as the articles write it in Python.
// Start it like torchrun starts a script:
//
//   ringlab run --nproc-per-node 4 -- ./all_reduce
//
// Rank r starts with tensor([1 + 2r, 2 + 2r]). After the all_reduce every
// rank holds the sums over all P ranks: tensor([P*P, P*P + P]), so
// tensor([16, 20]) on 4 ranks and tensor([4, 6]) on 2.
#include <cstdio>
#include <exception>

#include "backends/backends.hpp"

int main() try {
  auto pg = ringlab::init_process_group("tcp");  // dist.init_process_group("gloo")
  auto tensor = ringlab::Tensor::arange(2) + (1 + 2 * pg->rank());
  std::printf("before all_reduce Rank %d has data %s\n", pg->rank(), tensor.to_string().c_str());

  pg->all_reduce(tensor);  // dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
  std::printf("after all_reduce Rank %d has data %s\n", pg->rank(), tensor.to_string().c_str());

  auto work = pg->broadcast_async(tensor, 0);  // dist.broadcast(tensor, 0, async_op=True)
  work.wait();                                 // every rank holds rank 0's sums already
} catch (const std::exception& e) {
  std::fprintf(stderr, "all_reduce: %s\n", e.what());
  return 1;
}
