#include "launcher/blame.hpp"

#include <cctype>

namespace ringlab::launch {

namespace {

using Time = RankEvents::Time;

bool failed_by_itself(const RankEvents& r) { return r.failed && !r.stopped_by_us; }

// When this rank's trouble showed first (rule 1), or nothing.
std::optional<Time> event_time(const RankEvents& r) {
  if (r.frozen_since) return r.frozen_since;
  std::optional<Time> time;
  if (r.failed && r.error_at)
    time = r.error_at;  // (an error line of a rank that succeeded is not one)
  if (failed_by_itself(r) && r.ended && (!time || *r.ended < *time)) time = r.ended;
  return time;
}

// A report of a wait that ran out ("rank 2 timed out after 2000 ms waiting to
// receive from rank 1"), as opposed to an error of the rank's own.
bool reports_a_wait(const std::string& error) {
  return error.find("timed out") != std::string::npos || error.find("waiting") != std::string::npos;
}

}  // namespace

int first_other_rank_named(const std::string& text, int self) {
  static constexpr std::string_view kWord = "rank ";
  for (std::size_t at = 0; (at = text.find(kWord, at)) != std::string::npos;) {
    at += kWord.size();
    std::size_t end = at;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end == at || end - at > 9) continue;
    const int rank = std::stoi(text.substr(at, end - at));
    if (rank != self) return rank;
  }
  return -1;
}

std::optional<Blame> find_cause(const std::vector<RankEvents>& ranks) {
  const RankEvents* earliest = nullptr;
  std::optional<Time> earliest_time;
  for (const RankEvents& r : ranks) {
    const auto time = event_time(r);
    if (!time) continue;
    // On a tie (error files written in the same clock tick), the rank that ended first.
    const bool earlier =
        !earliest_time || *time < *earliest_time ||
        (*time == *earliest_time && r.ended && (!earliest->ended || *r.ended < *earliest->ended));
    if (earlier) {
      earliest = &r;
      earliest_time = time;
    }
  }
  if (!earliest) return std::nullopt;
  if (earliest->frozen_since) return Blame{earliest->rank, BlameKind::Frozen};

  // Rule 2: a rank killed by someone else's signal, just after.
  const RankEvents* killed = nullptr;
  for (const RankEvents& r : ranks)
    if (r.signal_number != 0 && !r.stopped_by_us && r.ended &&
        *r.ended <= *earliest_time + kCauseWindow && (!killed || *r.ended < *killed->ended))
      killed = &r;
  if (killed) return Blame{killed->rank, BlameKind::Failed};

  // Rule 3: the rank the first report waited for, if it never answered.
  if (reports_a_wait(earliest->error)) {
    const int named = first_other_rank_named(earliest->error, earliest->rank);
    for (const RankEvents& r : ranks) {
      if (r.rank != named || failed_by_itself(r) || r.error_at) continue;
      if (!r.ended || *r.ended > *earliest_time)  // still running when it was waited for
        return Blame{r.rank, BlameKind::Unresponsive, earliest->rank};
    }
  }
  // Rule 4: the first report names the rank it failed because of ("rank 2:
  // rank 3 failed or stopped answering"), and that rank failed by itself
  // just after: the report was only read first (both pipes are read at once,
  // and the culprit's own line may come later in the same breath).
  // (A wait that ran out is rule 3's: what fails after it is its consequence.)
  const int named = reports_a_wait(earliest->error)
                        ? -1
                        : first_other_rank_named(earliest->error, earliest->rank);
  for (const RankEvents& r : ranks) {
    if (named < 0 || r.rank != named || !failed_by_itself(r)) continue;
    const auto time = event_time(r);
    if (time && *time <= *earliest_time + kCauseWindow) return Blame{r.rank, BlameKind::Failed};
  }
  return Blame{earliest->rank, BlameKind::Failed};
}

}  // namespace ringlab::launch
