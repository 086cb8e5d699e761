#include "transport/tcp/wait_report.hpp"

#include <sstream>

#include "net/log.hpp"

namespace ringlab::tcp {

using net::log_line;

std::string list_ranks(const std::vector<int>& ranks) {
  // Runs of consecutive ranks, as [first, last].
  std::vector<std::pair<int, int>> runs;
  for (int rank : ranks) {
    if (!runs.empty() && rank == runs.back().second + 1)
      runs.back().second = rank;
    else
      runs.emplace_back(rank, rank);
  }
  std::ostringstream out;
  out << (ranks.size() == 1 ? "rank " : "ranks ");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (i) out << (i + 1 == runs.size() ? " and " : ", ");
    out << runs[i].first;
    if (runs[i].second != runs[i].first) out << "-" << runs[i].second;
  }
  return out.str();
}

WaitReport::WaitReport(int rank, Clock::time_point start, Duration timeout, Duration interval)
    : rank_(rank),
      start_(start),
      timeout_(timeout),
      interval_(interval),
      next_(interval > Duration::zero() ? start + interval : Clock::time_point::max()) {}

std::string WaitReport::format(Clock::duration d) const {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  // Whole seconds when the lines come a second or more apart.
  if (interval_ >= std::chrono::seconds(1)) return std::to_string((ms + 500) / 1000) + " s";
  return std::to_string(ms) + " ms";
}

void WaitReport::report_if_due(const std::vector<int>& missing, const std::string& what) {
  const auto now = Clock::now();
  if (now < next_) return;
  while (next_ <= now) next_ += interval_;
  if (missing.empty()) return;
  log_line("rank " + std::to_string(rank_) + ": waiting for " + list_ranks(missing) + what + " (" +
           format(now - start_) + " of " + format(timeout_) + ")");
}

}  // namespace ringlab::tcp
