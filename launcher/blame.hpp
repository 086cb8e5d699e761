// Which rank a failed job is blamed on: the rank whose failure came first, by
// time and cause, not the first process to exit.
//
// The supervisor records, for each rank, when it ended and how, the first
// error it reported (a line of its stderr naming itself, "rank 2: ...", or
// its error file) and whether it was frozen (stopped by SIGSTOP or SIGTSTP
// and not resumed). The rules, in order:
//  1. The earliest event wins: a rank frozen since time t counts from t; any
//     other rank from its first error report or, failing that, the moment it
//     ended by itself with a failure. Of two at the same time, the one that
//     ended first.
//  2. A rank killed by a signal we did not send is preferred when it died up
//     to kCauseWindow after that earliest event: when a rank dies its peers
//     see their connections close and report at once, sometimes before the
//     launcher has reaped the dead rank.
//  3. When the earliest report is of a wait that ran out (it says "timed out"
//     or "waiting") and names another rank ("timed out after 2000 ms waiting
//     to receive from rank 1") that never failed or reported anything by
//     itself and was still running, that rank is blamed as unresponsive: it
//     was waited for and did not answer (a hang, a sleep, a busy loop).
//  4. When the earliest report is not of a wait and names another rank
//     ("rank 2: rank 3 failed or stopped answering") that failed by itself up
//     to kCauseWindow later, that rank is blamed: its own report was only
//     read later.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ringlab::launch {

inline constexpr std::chrono::milliseconds kCauseWindow{500};

struct RankEvents {
  using Time = std::chrono::steady_clock::time_point;
  int rank = -1;
  std::optional<Time> ended;         // reaped
  bool failed = false;               // ended with a non-zero status or a signal
  bool stopped_by_us = false;        // we sent the signal that ended it
  int signal_number = 0;             // the signal that ended it, if any
  std::optional<Time> error_at;      // its first error report
  std::string error;                 // that report's text
  std::optional<Time> frozen_since;  // stopped and not resumed when the job began stopping
};

enum class BlameKind {
  Failed,        // it failed by itself (exit status or a signal we did not send)
  Frozen,        // stopped by a signal and never resumed
  Unresponsive,  // the first error waited for it, and it never answered
};

struct Blame {
  int rank = -1;
  BlameKind kind = BlameKind::Failed;
  int reporter = -1;  // Unresponsive: the rank whose error named it
};

// The rank to blame, or nothing when no rank failed or reported an error.
std::optional<Blame> find_cause(const std::vector<RankEvents>& ranks);

// The first rank number other than `self` that text mentions ("... from rank
// 3 ..."), or -1.
int first_other_rank_named(const std::string& text, int self);

}  // namespace ringlab::launch
