// What the rendezvous says about the ranks it waits for: the ranks named
// compactly ("ranks 2-3", "ranks 1, 4-6 and 9"), and, while rank 0 waits,
// one line every few seconds on the log (stderr) naming the ranks still
// missing, so a job whose other half never comes is not silent until its
// timeout:
//
//   ringlab tcp: rank 0: waiting for ranks 2-3 (10 s of 30 s)
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace ringlab::tcp {

// "rank 2", "ranks 2-3", "ranks 1, 4-6 and 9" (ranks ascending).
std::string list_ranks(const std::vector<int>& ranks);

class WaitReport {
 public:
  using Clock = std::chrono::steady_clock;

  // `rank` waits from `start` for at most `timeout`; a line is due every
  // `interval` (never if interval <= 0).
  WaitReport(int rank, Clock::time_point start, Duration timeout, Duration interval);

  // When the next line is due (Clock::time_point::max() if never).
  Clock::time_point next_due() const { return next_; }

  // If a line is due, logs "rank R: waiting for <missing><what> (E of T)"
  // and schedules the next one an interval later (one line per interval,
  // however late this is called). Nothing when `missing` is empty.
  void report_if_due(const std::vector<int>& missing, const std::string& what = {});

 private:
  std::string format(Clock::duration d) const;

  int rank_;
  Clock::time_point start_;
  Duration timeout_;
  Duration interval_;
  Clock::time_point next_;
};

}  // namespace ringlab::tcp
