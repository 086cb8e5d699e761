// MPI_Allreduce on float32, timed like `ringlab bench` (see peer_rows.hpp).
//
//   mpirun --allow-run-as-root --oversubscribe -np N --mca btl self,tcp
//          --mca btl_tcp_if_include lo mpi_allreduce [--sizes 4K:64M] [--warmup 3] [--iters 10]
//
// `--mca btl self,tcp` keeps Open MPI off shared memory (vader), so the bytes
// cross loopback TCP as ringlab's and Gloo's do. Which all_reduce algorithm
// runs is Open MPI's choice (coll/tuned decides per size); the header says
// "MPI_Allreduce".
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <vector>

#include "peer_rows.hpp"

namespace {

const char* const kUsage =
    "usage: mpirun ... mpi_allreduce [--sizes 4K:64M] [--warmup 3] [--iters 10]\n";

double reduce_over_ranks(double value, MPI_Op op) {
  double result = 0;
  MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
  return result;
}

void bench(const peers::Options& o, int rank, int ranks) {
  if (rank == 0) peers::print_header("mpi", "MPI_Allreduce", ranks, "tcp");
  for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> data(count, static_cast<float>(rank + 1));
    const int elements = static_cast<int>(count);
    auto allreduce_once = [&] {
      MPI_Allreduce(MPI_IN_PLACE, data.data(), elements, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    };
    for (int i = 0; i < o.warmup; ++i) allreduce_once();
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < o.iters; ++i) allreduce_once();
    const double local_us = (MPI_Wtime() - start) * 1e6 / o.iters;
    const double time_us = reduce_over_ranks(local_us, MPI_MAX);

    std::fill(data.begin(), data.end(), static_cast<float>(rank + 1));
    allreduce_once();
    long long wrong = 0;
    for (float v : data) wrong += v != peers::expected_sum(ranks);
    wrong = static_cast<long long>(reduce_over_ranks(static_cast<double>(wrong), MPI_SUM));
    if (rank == 0) peers::print_row(bytes, ranks, time_us, wrong);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = 0;
  try {
    // MPI has no per-call timeout; compare.sh runs mpirun under timeout(1).
    bench(peers::parse_options(argc, argv, kUsage), rank, ranks);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_allreduce rank %d of %d: %s\n", rank, ranks, e.what());
    status = 1;
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  MPI_Finalize();
  return status;
}
