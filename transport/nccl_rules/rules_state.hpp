// The nccl_rules world's state (nccl_rules.hpp says what the rules are):
// every rank's queue and launched groups, the channels that match launched
// sends to launched receives in order, and the report of a deadlock. One
// mutex guards all of it; the functions here expect it held. Private to
// transport/nccl_rules/.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/nccl_rules/nccl_rules.hpp"

namespace ringlab::rules {

// One isend or irecv.
struct Op {
  int rank = 0;  // who posted it
  bool is_send = false;
  int peer = 0;
  Tag tag = 0;  // for messages only
  std::byte* data = nullptr;
  std::size_t bytes = 0;
  std::uint64_t group = 0;  // its rank's launch number (1, 2, ...); 0 while queued
  std::uint64_t nth = 0;    // its place on its channel (1, 2, ...), once launched
  Op* partner = nullptr;    // the matched op of the other rank, once both are launched
  bool done = false;
  bool abandoned = false;  // its request (or rank) went away first: its memory is not touched
  std::string error;       // a receive of the wrong size
};
using OpPtr = std::shared_ptr<Op>;

// The messages from one rank to another: launched, not yet matched.
struct Channel {
  std::deque<OpPtr> sends, recvs;
  std::uint64_t sends_launched = 0, recvs_launched = 0;
};

struct RankState {
  std::vector<OpPtr> queued;              // posted, not launched
  std::deque<std::vector<OpPtr>> groups;  // launched, unfinished; the front one runs
  std::uint64_t launched = 0;             // groups launched so far
  std::uint64_t finished = 0;             // groups finished so far
  int waiting = 0;                        // threads of this rank inside a wait
  bool gone = false;                      // its transport was destroyed
};

}  // namespace ringlab::rules

namespace ringlab {

struct NcclRulesWorld::State {
  explicit State(int n);

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<rules::RankState> ranks;
  std::vector<rules::Channel> channels;  // [from * size + to]
  int failed_rank = -1;
  std::string failure;
  std::uint64_t generation = 0;  // moves with every change a waiting rank could care about
  std::string deadlock;          // the report, once a deadlock was found

  int size() const { return static_cast<int>(ranks.size()); }
  rules::RankState& rank(int r) { return ranks[static_cast<std::size_t>(r)]; }
  rules::Channel& channel(int from, int to) {
    return channels[static_cast<std::size_t>(from * size() + to)];
  }

  // Launches rank r's queue as one group, matches it and moves what can move.
  void launch(int r);
  // Whether op's whole group has finished.
  bool finished(const rules::Op& op) { return op.group != 0 && op.group <= rank(op.rank).finished; }
  // Moves every matched pair whose groups both run, until nothing moves.
  void progress();
  // Every rank still here waits; progress() left nothing to move.
  bool stuck() const;
  // What each waiting rank waits for and why it cannot go on.
  std::string describe_deadlock();
  // Rank r leaves: its queue is dropped, its launched operations abandoned.
  void leave(int r);
  void changed_state() {
    ++generation;
    changed.notify_all();
  }

 private:
  bool running(const rules::Op& op) { return op.group == rank(op.rank).finished + 1; }
  void move(rules::Op& send, rules::Op& recv);
  std::string why_stuck(int r);
};

}  // namespace ringlab
