// ringlab exercise 8: dissemination barrier, a reference solution.
#include "exercises/task.hpp"

using namespace ringlab;

void dissemination_barrier(Comm& comm) {
  const int P = comm.size();
  const int r = comm.rank();
  unsigned round = 0;
  for (int distance = 1; distance < P; distance *= 2, ++round)
    comm.sendrecv((r + distance) % P, Elems{}, (r - distance + P) % P, Elems{}, round);
}
