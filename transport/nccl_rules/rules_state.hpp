// The nccl_rules world's state (nccl_rules.hpp says what the rules are):
// every rank's queue and launched groups, the matcher that meets launched
// sends to launched receives in order, and the report of a deadlock. One
// mutex guards all of it; the functions here expect it held. Private to
// transport/nccl_rules/.
//
// Cost: a world of 1024 rank threads runs, so nothing here is paid per rank
// of the world on each change. A launch moves what it made movable, and a
// group that finishes moves what its successor makes movable (progress
// follows the ranks a move touches, not every rank); only the rank whose
// group finished is woken, once the lock is released; whether every rank
// waits is two counters.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/matcher.hpp"
#include "transport/nccl_rules/nccl_rules.hpp"

namespace ringlab::rules {

// The world's lock. It tries a while (a few microseconds) before it sleeps:
// held only briefly, it is usually free again within that time, and a lock
// that sleeps makes every unlock a system call to wake the sleeper. At 1024
// rank threads on 2 cores a third of the time went to that, a sixth after.
// Waits on it sleep on condition_variable_any.
class WorldMutex {
 public:
  void lock() {
    for (int i = 0; i < kTries; ++i)
      if (mutex_.try_lock()) return;
    mutex_.lock();
  }
  bool try_lock() { return mutex_.try_lock(); }
  void unlock() { mutex_.unlock(); }

 private:
  static constexpr int kTries = 256;
  std::mutex mutex_;
};
using Lock = std::unique_lock<WorldMutex>;

// One isend or irecv.
struct Op {
  int rank = 0;  // who posted it
  bool is_send = false;
  int peer = 0;
  Tag tag = 0;  // for messages only
  std::byte* data = nullptr;
  std::size_t bytes = 0;
  std::uint64_t group = 0;  // its rank's launch number (1, 2, ...); 0 while queued
  std::uint64_t nth = 0;    // its place between its two ranks (1, 2, ...), once launched
  Op* partner = nullptr;    // the matched op of the other rank, once both are launched
  bool done = false;
  bool abandoned = false;  // its request (or rank) went away first: its memory is not touched
  std::string error;       // a receive of the wrong size
};
using OpPtr = std::shared_ptr<Op>;

struct RankState {
  std::vector<OpPtr> queued;              // posted, not launched
  std::deque<std::vector<OpPtr>> groups;  // launched, unfinished; the front one runs
  std::uint64_t launched = 0;             // groups launched so far
  std::uint64_t finished = 0;             // groups finished so far
  int waiting = 0;                        // threads of this rank inside a wait
  // A group finished while it waited, and no thread of it has looked since:
  // its wait may be over, however long its thread takes to run again.
  bool unseen_finish = false;
  bool gone = false;                      // its transport was destroyed
  std::condition_variable_any changed;    // its waits sleep here
  // Its launched receives that met no launched send yet, and the launched
  // sends to it that met no receive yet: NCCL's rule, by order alone.
  Matcher<OpPtr, OpPtr> unmatched{MatchBy::SourceOrder};
  // How many sends to, and receives from, each peer it launched.
  std::map<int, std::uint64_t> sends_to, recvs_from;
};

}  // namespace ringlab::rules

namespace ringlab {

struct NcclRulesWorld::State {
  explicit State(int n);

  rules::WorldMutex mutex;
  std::vector<rules::RankState> ranks;
  int failed_rank = -1;
  std::string failure;
  std::uint64_t generation = 0;  // moves with every change a waiting rank could care about
  std::string deadlock;          // the report, once a deadlock was found
  int present = 0;               // ranks not gone
  int present_waiting = 0;       // of those, the ones with a thread inside a wait
  int unseen_finishes = 0;       // ranks whose unseen_finish is set
  // How many times a wait yields its processor, looking again each time it
  // is back, before it sleeps until its group finishes: 8 in a world of many
  // more rank threads than processors (more than 16 per processor), else 0.
  // There a yield comes back after a round of the others, by which time the
  // group has usually finished, and costs less than a sleep and a wake-up
  // (the futex calls, the waker's time in them, the woken thread's queueing
  // for the lock): all_reduce at 1024 ranks on 2 cores took half the time.
  // In a small world the yields took processor time from ranks with work to
  // do (the conformance suite's 9 ranks, 1 M elements: about 10 % slower).
  int yields = 0;

  int size() const { return static_cast<int>(ranks.size()); }
  rules::RankState& rank(int r) { return ranks[static_cast<std::size_t>(r)]; }

  // Launches rank r's queue as one group, matches it and moves what can move.
  void launch(int r);
  // Whether op's whole group has finished.
  bool finished(const rules::Op& op) { return op.group != 0 && op.group <= rank(op.rank).finished; }
  // Every rank still here waits, and each has looked since its last group
  // finished (progress leaves nothing movable behind). A rank whose wait is
  // over but whose thread has not run yet does not make a deadlock.
  bool stuck() const {
    return present > 0 && present_waiting == present && unseen_finishes == 0;
  }
  // A thread of rank r enters (or leaves) a wait.
  void enter_wait(int r);
  void leave_wait(int r);
  // A waiting thread of rank r looks at its wait again.
  void looked(int r);
  // What each waiting rank waits for and why it cannot go on.
  std::string describe_deadlock();
  // Rank r leaves: its queue is dropped, its launched operations abandoned.
  void leave(int r);
  // Something every waiting rank must hear of (a failure, a deadlock, a
  // rank leaving a world where the rest wait): all of them wake.
  void wake_all();
  // Wakes the ranks whose groups finished since the last call, with the
  // lock released meanwhile, so that a woken rank finds it free rather than
  // going back to sleep on it; returns with the lock held again.
  void wake_finished(rules::Lock& lock);

 private:
  bool running(const rules::Op& op) { return op.group == rank(op.rank).finished + 1; }
  // Meets a launched op with the other rank's, or leaves it to be met.
  void match(const rules::OpPtr& op);
  void move(rules::Op& send, rules::Op& recv);
  // Moves every matched pair whose groups both run, starting from rank r's
  // running group and following the ranks each move touches, until
  // nothing more moves; wakes each rank whose group finished.
  void progress_from(int r);
  std::string why_stuck(int r);

  std::vector<int> finished_groups_;  // ranks to wake (wake_finished)
};

}  // namespace ringlab
