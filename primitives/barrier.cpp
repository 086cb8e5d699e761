// Barrier: no rank leaves before every rank has entered.
//
// Dissemination barrier (Hensgen, Finkel, Manber 1988). Round k = 0, 1, ...
// while 2^k < P (step k): rank r sends a zero-byte token to (r + 2^k) % P and
// receives one from (r - 2^k + P) % P. After round k, rank r has heard
// (directly or through the chain of tokens) from the 2^(k+1) - 1 ranks before
// it, so after ceil(log2 P) rounds it has heard from all P - 1 others.
//
// Cost: ceil(log2 P) steps; every rank sends ceil(log2 P) messages of 0 bytes.
#include "primitives/algorithms.hpp"

namespace ringlab {

void barrier_dissemination(Comm& comm) {
  const int P = comm.size();
  const int r = comm.rank();
  const Elems token{};  // zero elements: only the message's arrival matters
  unsigned round = 0;
  for (int distance = 1; distance < P; distance <<= 1, ++round)
    comm.sendrecv((r + distance) % P, token, (r - distance + P) % P, token, round);
}

}  // namespace ringlab
