// ringlab exercise 2: binomial broadcast, a reference solution.
#include "exercises/task.hpp"

using namespace ringlab;

void binomial_broadcast(Comm& comm, Elems buf, int root) {
  const int P = comm.size();
  const int v = (comm.rank() - root + P) % P;  // relative rank: the root is 0
  auto real = [&](int relative) { return (relative + root) % P; };

  // Receive once, in the round of v's lowest set bit, from v minus that bit.
  int mask = 1;
  unsigned round = 0;
  while (mask < P) {
    if (v & mask) {
      comm.recv(real(v - mask), buf, round);
      break;
    }
    mask <<= 1;
    ++round;
  }
  // Then send to v + 2^j for every round j below that one, largest subtree first.
  while (mask > 1) {
    mask >>= 1;
    --round;
    if (v + mask < P) comm.send(real(v + mask), buf, round);
  }
}
