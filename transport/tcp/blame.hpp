// Blame: which rank a wait that ran out of time names.
//
// A rank frozen (SIGSTOP) or hung keeps its connections open, so only
// timeouts find it, and the first to time out may be a rank waiting on a
// survivor that waits on it. So a wait that runs out of time (in a world of
// more than two) first asks every peer whom it waits for (a waiting frame,
// framing.hpp), and keeps driving its sockets for up to kAnswerPatience.
// Every rank that is driving answers at once with the peer of its oldest
// wait; the asker follows the answers from the rank it waited on to one that
// did not answer (stopped, hung, or busy outside ringlab), or that waits for
// nobody, or round a circle (the ranks wait for each other), and its
// TimeoutError names that rank first ("rank 1: rank 2 did not answer: rank 1
// timed out ... from rank 3 ...; rank 3 waits for rank 2, which did not
// answer ..."). An asker's question stays on record at every peer (it has
// stopped waiting for good, perhaps without leaving), so a later asker
// follows it even if the asker answers nothing more. A rank that shuts down
// after such a timeout, with no wait succeeding since, fails with it first
// (the engine's fail_all): its abort frames name the blamed rank, and every
// peer's error then names it too ("rank 0: rank 2 failed or stopped
// answering (rank 3 gave up because of it: ...)"). The transport itself
// survives a timeout: a program that goes on (and whose next wait succeeds)
// leaves with a goodbye.
//
// The BlameBook holds what this rank knows for that: its own waits, what
// each peer said it waits for, and whom its last timeout blamed. The engine
// sends the questions and answers (engine_blame.cpp).
#pragma once

#include <string>
#include <vector>

#include "transport/tcp/framing.hpp"
#include "transport/tcp/operations.hpp"

namespace ringlab::tcp {

// How long a wait that ran out of time waits for the answers to "whom do you
// wait for?": far more than a driving rank needs (a parked payload ahead of
// the question moves within kParkLimit, parking.hpp), far less than a timeout.
inline constexpr Duration kAnswerPatience{500};

// The rank a timeout names first, and its error message.
struct TimeoutVerdict {
  int rank = -1;
  std::string message;
};

class BlameBook {
 public:
  BlameBook(int rank, int size);

  // A wait in progress is on record (the answers say whom this rank waits
  // for) for the OnRecord's lifetime.
  class OnRecord {
   public:
    OnRecord(BlameBook& book, const Op* op);
    ~OnRecord();
    OnRecord(const OnRecord&) = delete;
    OnRecord& operator=(const OnRecord&) = delete;

   private:
    BlameBook& book_;
    const Op* op_;
  };
  // The peer the oldest wait of this rank is on, or -1.
  int waiting_for_now() const { return waits_.empty() ? -1 : waits_.front()->peer; }

  // peer said whom it waits for; true if it asked (it wants an answer).
  bool heard(int peer, const Waiting& waiting);
  // This rank asks about its wait on `peer`: earlier answers are stale (a
  // peer's own question stands).
  void start_asking(int peer);
  // Whether the answers from `first` on lead somewhere (the chain does not
  // end at a rank that has not answered yet).
  bool answered(int first) const;
  // Whom a timeout on `first` names, and the message: timed_out is the
  // standard timeout message, patience how long answers were awaited.
  TimeoutVerdict verdict(int first, const std::string& timed_out, Duration patience) const;

  // The last timeout's verdict stands until a wait succeeds (recovered()).
  void stalled(TimeoutVerdict verdict) { stalled_ = std::move(verdict); }
  void recovered() { stalled_.rank = -1; }
  const TimeoutVerdict* stalled() const { return stalled_.rank >= 0 ? &stalled_ : nullptr; }

 private:
  // How a chain of "waits for" answers from `first` ends (chain: the ranks on it).
  enum class ChainEnd { Unanswered, WaitsForNobody, Circle };
  ChainEnd follow(int first, std::vector<int>& chain) const;

  // By rank: whom it said it waits for (waiting frames; kUnheard: nothing
  // heard), and whether it said so because it gave up waiting (then it
  // stands, also when that rank answers nothing more).
  static constexpr int kUnheard = -2;
  int rank_;
  std::vector<int> said_;
  std::vector<bool> gave_up_;
  // The waits in progress (their ops), oldest first.
  std::vector<const Op*> waits_;
  TimeoutVerdict stalled_;
};

}  // namespace ringlab::tcp
