// Where the TCP engine's time goes: built with the CMake option
// RINGLAB_TCP_TIMERS=ON, every engine adds up the time its thread spends in
// sendmsg(), recv(), a blocked poll() and sched_yield(), and prints it to
// stderr when it shuts down, with the process's user and system processor
// time (getrusage) and the wall time since it started:
//
//   cmake -S . -B build-timers -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRINGLAB_TCP_TIMERS=ON
//   build-timers/tools/ringlab bench --op all_reduce -n 4 --sizes 64M:64M
//
// Off (the default) it compiles to nothing. Only the engine's own sources
// include this header, and they are all built with the same setting.
#pragma once

#include <cstddef>

#if RINGLAB_TCP_TIMERS
#include <chrono>
#endif

namespace ringlab::tcp::timers {

enum Kind { Send, Recv, Poll, Yield, kKinds };

#if RINGLAB_TCP_TIMERS
void add(Kind kind, std::chrono::steady_clock::duration spent, std::size_t bytes);
// The engine started (the wall time of the report starts here).
void started();
// Prints this process's totals to stderr, naming the rank.
void report(int rank);

// Times one call: from construction to destruction.
class Scope {
 public:
  explicit Scope(Kind kind) : kind_(kind), from_(std::chrono::steady_clock::now()) {}
  ~Scope() { add(kind_, std::chrono::steady_clock::now() - from_, bytes_); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  void bytes(long n) { bytes_ = n > 0 ? static_cast<std::size_t>(n) : 0; }

 private:
  Kind kind_;
  std::chrono::steady_clock::time_point from_;
  std::size_t bytes_ = 0;
};
#else
inline void started() {}
inline void report(int) {}
class Scope {
 public:
  explicit Scope(Kind) {}
  void bytes(long) {}
};
#endif

}  // namespace ringlab::tcp::timers
