#include "exercise_mistakes.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "exercises/builtin.hpp"
#include "primitives/algorithms.hpp"

namespace ringlab::testing::mistakes {

namespace {
int mod(int a, int p) { return ((a % p) + p) % p; }
// AVG's division, so that a mistake shows as itself and not as a missing average.
void finish(Comm& comm, Elems buf, ReduceOp op) {
  if (op == ReduceOp::AVG) comm.transport().divide(buf.dtype, buf.bytes(), comm.size());
}
Elems chunk(Elems buf, const std::vector<Chunk>& chunks, int c) {
  return buf.slice(chunks[std::size_t(c)].offset, chunks[std::size_t(c)].count);
}
}  // namespace

void ring_all_reduce_wrong_chunk(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size(), r = comm.rank();
  const auto chunks = split_even(buf.count, P);
  auto scratch = comm.scratch(chunks.front().count, buf.dtype);
  for (int s = 0; s < P - 1; ++s) {
    const Elems into = chunk(buf, chunks, mod(r - s - 1, P));  // should be r - s - 2
    const Elems received = scratch.elems.slice(0, into.count);
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s, P)), mod(r - 1, P), received,
                  static_cast<unsigned>(s));
    comm.reduce(op, into, received);
  }
  for (int s = 0; s < P - 1; ++s)
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s, P)), mod(r - 1, P),
                  chunk(buf, chunks, mod(r - s - 1, P)), static_cast<unsigned>(P - 1 + s));
}

void ring_all_reduce_no_reduce(Comm& comm, Elems buf, ReduceOp) {
  const int P = comm.size(), r = comm.rank();
  const auto chunks = split_even(buf.count, P);
  for (int s = 0; s < P - 1; ++s)
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s - 1, P)), mod(r - 1, P),
                  chunk(buf, chunks, mod(r - s - 2, P)), static_cast<unsigned>(s));
  for (int s = 0; s < P - 1; ++s)
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s, P)), mod(r - 1, P),
                  chunk(buf, chunks, mod(r - s - 1, P)), static_cast<unsigned>(P - 1 + s));
}

void ring_all_reduce_blocking_sends(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size(), r = comm.rank();
  const auto chunks = split_even(buf.count, P);
  auto scratch = comm.scratch(chunks.front().count, buf.dtype);
  for (int s = 0; s < P - 1; ++s) {
    const Elems into = chunk(buf, chunks, mod(r - s - 2, P));
    const Elems received = scratch.elems.slice(0, into.count);
    comm.send(mod(r + 1, P), chunk(buf, chunks, mod(r - s - 1, P)), static_cast<unsigned>(s));
    comm.recv(mod(r - 1, P), received, static_cast<unsigned>(s));
    comm.reduce(op, into, received);
  }
  for (int s = 0; s < P - 1; ++s) {
    const auto step = static_cast<unsigned>(P - 1 + s);
    comm.send(mod(r + 1, P), chunk(buf, chunks, mod(r - s, P)), step);
    comm.recv(mod(r - 1, P), chunk(buf, chunks, mod(r - s - 1, P)), step);
  }
  finish(comm, buf, op);
}

void ring_all_gather_wrong_peer(Comm& comm, Elems buf, std::span<const Chunk> blocks) {
  const int P = comm.size(), r = comm.rank();
  auto block = [&](int b) {
    return buf.slice(blocks[std::size_t(b)].offset, blocks[std::size_t(b)].count);
  };
  for (int s = 0; s < P - 1; ++s)
    comm.sendrecv(mod(r + 1, P), block(mod(r - s, P)), mod(r + 1, P), block(mod(r - s - 1, P)),
                  static_cast<unsigned>(s));
}

void recursive_doubling_always_sum(Comm& comm, Elems buf, ReduceOp) {
  all_reduce_recursive_doubling(comm, buf, ReduceOp::SUM);
}

void dissemination_barrier_one_round(Comm& comm) {
  const int P = comm.size(), r = comm.rank();
  if (P > 1) comm.sendrecv((r + 1) % P, Elems{}, (r - 1 + P) % P, Elems{}, 0);
}

void ddp_bucket_average_no_divide(Comm& comm, Elems grads, std::span<const Chunk> buckets) {
  for (const Chunk& c : buckets)
    all_reduce_ring(comm, grads.slice(c.offset, c.count), ReduceOp::SUM);
}

void ring_all_reduce_receive_first(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size(), r = comm.rank();
  const auto chunks = split_even(buf.count, P);
  auto scratch = comm.scratch(chunks.front().count, buf.dtype);
  for (int s = 0; s < P - 1; ++s) {
    const Elems into = chunk(buf, chunks, mod(r - s - 2, P));
    const Elems received = scratch.elems.slice(0, into.count);
    comm.recv(mod(r - 1, P), received, static_cast<unsigned>(s));
    comm.send(mod(r + 1, P), chunk(buf, chunks, mod(r - s - 1, P)), static_cast<unsigned>(s));
    comm.reduce(op, into, received);
  }
  for (int s = 0; s < P - 1; ++s) {
    const auto step = static_cast<unsigned>(P - 1 + s);
    comm.recv(mod(r - 1, P), chunk(buf, chunks, mod(r - s - 1, P)), step);
    comm.send(mod(r + 1, P), chunk(buf, chunks, mod(r - s, P)), step);
  }
}

void ring_all_reduce_forgets_increment(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size(), r = comm.rank();
  const auto chunks = split_even(buf.count, P);
  auto scratch = comm.scratch(chunks.front().count, buf.dtype);
  for (int s = 0; s < P - 1;) {  // no ++s
    const Elems into = chunk(buf, chunks, mod(r - s - 2, P));
    const Elems received = scratch.elems.slice(0, into.count);
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s - 1, P)), mod(r - 1, P), received,
                  static_cast<unsigned>(s));
    comm.reduce(op, into, received);
  }
}

void ring_all_reduce_int64_only(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size(), r = comm.rank();
  const auto chunks = split_even(buf.count, P);
  auto scratch = comm.scratch(chunks.front().count, buf.dtype);
  // acc = acc op in, over the bytes as int64 words: "my elements are int64".
  auto reduce = [op](Elems acc, Elems in) {
    auto* a = reinterpret_cast<std::int64_t*>(acc.ptr);
    const auto* b = reinterpret_cast<const std::int64_t*>(in.ptr);
    for (std::size_t i = 0; i < acc.nbytes() / sizeof(std::int64_t); ++i) {
      if (op == ReduceOp::PRODUCT) a[i] *= b[i];
      else if (op == ReduceOp::MIN) a[i] = std::min(a[i], b[i]);
      else if (op == ReduceOp::MAX) a[i] = std::max(a[i], b[i]);
      else if (op == ReduceOp::BAND) a[i] &= b[i];
      else if (op == ReduceOp::BOR) a[i] |= b[i];
      else if (op == ReduceOp::BXOR) a[i] ^= b[i];
      else a[i] += b[i];
    }
  };
  for (int s = 0; s < P - 1; ++s) {
    const Elems into = chunk(buf, chunks, mod(r - s - 2, P));
    const Elems received = scratch.elems.slice(0, into.count);
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s - 1, P)), mod(r - 1, P), received,
                  static_cast<unsigned>(s));
    reduce(into, received);
  }
  for (int s = 0; s < P - 1; ++s)
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s, P)), mod(r - 1, P),
                  chunk(buf, chunks, mod(r - s - 1, P)), static_cast<unsigned>(P - 1 + s));
}

namespace {
// acc = acc op in for elements of type T (typed copies: any alignment).
template <typename T>
void reduce_as(ReduceOp op, Elems acc, Elems in) {
  for (std::size_t i = 0; i < acc.nbytes() / sizeof(T); ++i) {
    T a, b;
    std::memcpy(&a, acc.ptr + i * sizeof(T), sizeof(T));
    std::memcpy(&b, in.ptr + i * sizeof(T), sizeof(T));
    if (op == ReduceOp::PRODUCT) a *= b;
    else if (op == ReduceOp::MIN) a = std::min(a, b);
    else if (op == ReduceOp::MAX) a = std::max(a, b);
    else if constexpr (std::is_integral_v<T>) {
      if (op == ReduceOp::BAND) a &= b;
      else if (op == ReduceOp::BOR) a |= b;
      else if (op == ReduceOp::BXOR) a ^= b;
      else a += b;
    } else {
      a += b;
    }
    std::memcpy(acc.ptr + i * sizeof(T), &a, sizeof(T));
  }
}
}  // namespace

void ring_all_reduce_four_dtypes(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size(), r = comm.rank();
  const auto chunks = split_even(buf.count, P);
  auto scratch = comm.scratch(chunks.front().count, buf.dtype);
  auto reduce = [&](Elems acc, Elems in) {
    if (buf.dtype == DType::Int32) reduce_as<std::int32_t>(op, acc, in);
    else if (buf.dtype == DType::Float32) reduce_as<float>(op, acc, in);
    else if (buf.dtype == DType::Float64) reduce_as<double>(op, acc, in);
    else reduce_as<std::int64_t>(op, acc, in);  // "everything else is int64"
  };
  for (int s = 0; s < P - 1; ++s) {
    const Elems into = chunk(buf, chunks, mod(r - s - 2, P));
    const Elems received = scratch.elems.slice(0, into.count);
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s - 1, P)), mod(r - 1, P), received,
                  static_cast<unsigned>(s));
    reduce(into, received);
  }
  for (int s = 0; s < P - 1; ++s)
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s, P)), mod(r - 1, P),
                  chunk(buf, chunks, mod(r - s - 1, P)), static_cast<unsigned>(P - 1 + s));
  if (op == ReduceOp::AVG) comm.transport().divide(buf.dtype, buf.bytes(), P);
}

namespace {

// The first case of a world of 2 ranks, on rank 0: where the mistakes below
// strike (the world of 1 passes first, so the check is under way).
bool strikes(const Comm& comm) { return comm.size() == 2 && comm.rank() == 0; }

void write_pid(const char* file) {
  std::ofstream(file) << ::getpid() << "\n";
}

void exit_zero(Comm& comm, Elems buf, ReduceOp op) {
  if (strikes(comm)) std::exit(0);
  exercises::builtin_ring_all_reduce(comm, buf, op);
}

void underscore_exit(Comm& comm, Elems buf, ReduceOp op) {
  if (strikes(comm)) ::_exit(0);
  exercises::builtin_ring_all_reduce(comm, buf, op);
}

void atexit_zero(Comm& comm, Elems, ReduceOp) {
  // Wrong (it does nothing), and whatever status the program ends with becomes 0.
  static const bool registered = std::atexit([] { ::_exit(0); }) == 0;
  (void)registered;
  (void)comm;
}

void prints_passed(Comm& comm, Elems buf, ReduceOp op) {
  if (strikes(comm)) {
    std::printf("simulator  27 cases passed\ninproc     36 cases passed\npassed: ring_all_reduce\n");
    std::fflush(stdout);
    ::_exit(0);
  }
  exercises::builtin_ring_all_reduce(comm, buf, op);
}

[[noreturn]] void spin() {
  write_pid("hang.pid");
  volatile std::uint64_t turns = 0;
  while (true) turns = turns + 1;
}

void never_returns(Comm& comm, Elems buf, ReduceOp op) {
  if (strikes(comm)) spin();
  exercises::builtin_ring_all_reduce(comm, buf, op);
}

void never_returns_on_inproc(Comm& comm, Elems buf, ReduceOp op) {
  if (strikes(comm) && comm.transport().name() == "inproc") spin();
  exercises::builtin_ring_all_reduce(comm, buf, op);
}

// A process that leaves the program's process group and its parent: setsid
// in a child, whose own child (the orphan) sleeps on; the child exits.
void setsid_child(Comm& comm, Elems buf, ReduceOp op) {
  static bool left = false;
  if (strikes(comm) && !left) {
    left = true;
    std::fflush(stdout);
    if (::fork() == 0) {
      ::setsid();
      if (::fork() == 0) {
        write_pid("orphan.pid");
        while (true) ::pause();
      }
      ::_exit(0);
    }
  }
  exercises::builtin_ring_all_reduce(comm, buf, op);
}

void reserves_10_gib(Comm& comm, Elems buf, ReduceOp op) {
  std::vector<char> plenty;
  plenty.reserve(std::size_t{10} << 30);  // address space only, with overcommit
  exercises::builtin_ring_all_reduce(comm, buf, op);
}

using exercises::AllReduceFn;
using exercises::BarrierFn;
using exercises::BlocksFn;

const NamedMistake kMistakes[] = {
    {"exit_zero", "ring_all_reduce", AllReduceFn{exit_zero}, "std::exit(0)"},
    {"underscore_exit", "ring_all_reduce", AllReduceFn{underscore_exit}, "_exit(0)"},
    {"atexit_zero", "ring_all_reduce", AllReduceFn{atexit_zero}, "an atexit handler's _exit(0)"},
    {"prints_passed", "ring_all_reduce", AllReduceFn{prints_passed}, "prints passed, exits 0"},
    {"never_returns", "ring_all_reduce", AllReduceFn{never_returns}, "spins"},
    {"never_returns_on_inproc", "ring_all_reduce", AllReduceFn{never_returns_on_inproc},
     "spins on inproc"},
    {"setsid_child", "ring_all_reduce", AllReduceFn{setsid_child}, "leaves an orphan"},
    {"reserves_10_gib", "ring_all_reduce", AllReduceFn{reserves_10_gib}, "reserves 10 GiB"},
    {"ring_all_reduce_wrong_chunk", "ring_all_reduce", AllReduceFn{ring_all_reduce_wrong_chunk},
     ""},
    {"ring_all_reduce_no_reduce", "ring_all_reduce", AllReduceFn{ring_all_reduce_no_reduce}, ""},
    {"ring_all_reduce_receive_first", "ring_all_reduce",
     AllReduceFn{ring_all_reduce_receive_first}, ""},
    {"ring_all_reduce_forgets_increment", "ring_all_reduce",
     AllReduceFn{ring_all_reduce_forgets_increment}, ""},
    {"ring_all_reduce_int64_only", "ring_all_reduce", AllReduceFn{ring_all_reduce_int64_only},
     ""},
    {"ring_all_reduce_four_dtypes", "ring_all_reduce", AllReduceFn{ring_all_reduce_four_dtypes},
     ""},
    {"ring_all_gather_wrong_peer", "ring_all_gather", BlocksFn{ring_all_gather_wrong_peer}, ""},
    {"dissemination_barrier_one_round", "dissemination_barrier",
     BarrierFn{dissemination_barrier_one_round}, ""},
};

}  // namespace

std::span<const NamedMistake> all_mistakes() { return kMistakes; }

const NamedMistake& find_mistake(std::string_view name) {
  for (const NamedMistake& m : kMistakes)
    if (m.name == name) return m;
  throw std::invalid_argument("no mistake '" + std::string(name) + "'");
}

}  // namespace ringlab::testing::mistakes
