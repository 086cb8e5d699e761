// Point to point between two ranks: the articles' ping-pong.
//
//   ringlab run --nproc-per-node 2 -- ./send_recv
//
// Rank 0 adds 1 to a zero and sends it to rank 1; rank 1 adds 1 and sends it
// back. Rank 0 ends with tensor(2.), rank 1 with tensor(2.) too.
#include <cstdio>
#include <exception>

#include "backends/backends.hpp"

int main() try {
  auto pg = ringlab::init_process_group("tcp");
  if (pg->size() != 2) {
    std::fprintf(stderr, "send_recv: needs 2 ranks, got %d (ringlab run --nproc-per-node 2)\n",
                 pg->size());
    return 2;
  }
  const int rank = pg->rank();
  auto tensor = ringlab::Tensor::zeros(1);  // torch.zeros(1)

  if (rank == 0) {
    tensor += 1;
    pg->send(tensor, /*dst=*/1);  // dist.send(tensor=tensor, dst=1)
    std::printf("after send, Rank %d has data %s\n", rank, tensor[0].to_string().c_str());
    pg->recv(tensor, /*src=*/1);  // dist.recv(tensor=tensor, src=1)
    std::printf("after recv, Rank %d has data %s\n", rank, tensor[0].to_string().c_str());
  } else {
    pg->recv(tensor, /*src=*/0);
    std::printf("after recv, Rank %d has data %s\n", rank, tensor[0].to_string().c_str());
    tensor += 1;
    pg->send(tensor, /*dst=*/0);
    std::printf("after send, Rank %d has data %s\n", rank, tensor[0].to_string().c_str());
  }
} catch (const std::exception& e) {
  std::fprintf(stderr, "send_recv: %s\n", e.what());
  return 1;
}
