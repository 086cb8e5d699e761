// `ringlab bench --backend nccl --native`: ring by hand against NCCL's ring.
//
// For every size, two rows with the same op, size, dtype, reduce op, root
// and ranks: first NCCL's own collective (NcclGroup: ncclAllReduce, ...),
// then ringlab's hand-written algorithm on GPU memory (NcclTransport: its
// messages ncclSend/ncclRecv, its reductions CUDA kernels). Both run on
// DeviceTensors; each timed run returns only when the GPU has finished (as
// NcclGroup's calls do; the hand-written one synchronizes), the time is the
// slowest rank's average, and #wrong counts, over every rank, the elements
// that differ from the closed form after one more run on fresh inputs, as
// `ringlab bench` does (bench.hpp says which closed forms).
//
// Built only with the NCCL backend. The ranks are where --backend nccl puts
// them (backends/nccl.cpp): threads, one GPU each, where there are GPUs
// enough; else processes forked here, sharing the GPUs; and in a process a
// launcher started as a rank, that one rank of the launcher's job:
//   ringlab run --nproc-per-node 2 -- ringlab bench --backend nccl --native -n 2
// Where ranks share a GPU, rank 0 says so in a comment line first.
#pragma once

#include "bench/bench.hpp"

namespace ringlab::bench {

// Rank 0 prints the header and two rows per size. Returns rank 0's rows
// (NCCL's first, then the hand-written one, for each size) where rank 0 is a
// thread of this process, this rank's where it is this process, and none
// where the ranks were forked.
std::vector<Row> run_native(const BenchOptions& options, int ranks, Duration timeout);

}  // namespace ringlab::bench
