// Where the TCP engine's time goes (see io_timers.hpp).
#include "transport/tcp/io_timers.hpp"

#if RINGLAB_TCP_TIMERS
#include <sys/resource.h>

#include <atomic>
#include <cstdio>

namespace ringlab::tcp::timers {

namespace {

using Clock = std::chrono::steady_clock;

struct Totals {
  std::atomic<long long> ns{0};
  std::atomic<long long> calls{0};
  std::atomic<long long> bytes{0};
};
Totals totals[kKinds];
std::atomic<long long> started_ns{0};

double ms(long long ns) { return static_cast<double>(ns) / 1e6; }
double ms(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + t.tv_usec / 1e3; }

}  // namespace

void add(Kind kind, Clock::duration spent, std::size_t bytes) {
  totals[kind].ns += std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count();
  ++totals[kind].calls;
  totals[kind].bytes += static_cast<long long>(bytes);
}

void started() {
  long long none = 0;
  started_ns.compare_exchange_strong(
      none, std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
                .count());
}

void report(int rank) {
  const long long now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  const double wall = ms(now - started_ns.load());
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  static const char* const names[kKinds] = {"sendmsg", "recv", "poll (blocked)", "sched_yield"};
  std::fprintf(stderr, "rank %d engine timers: wall %.1f ms; process user %.1f ms, system %.1f ms",
               rank, wall, ms(usage.ru_utime), ms(usage.ru_stime));
  for (int k = 0; k < kKinds; ++k)
    std::fprintf(stderr, "; %s %.1f ms (%.0f %%, %lld calls, %.1f MiB)", names[k],
                 ms(totals[k].ns), 100 * ms(totals[k].ns) / wall, totals[k].calls.load(),
                 static_cast<double>(totals[k].bytes) / (1 << 20));
  std::fprintf(stderr, "\n");
}

}  // namespace ringlab::tcp::timers
#endif
