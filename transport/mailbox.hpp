// A rank's mailbox where ranks share one address space: the in-process
// transport's threads (inproc.cpp) and the simulator's fibers
// (simulator/fiber_world.cpp). One Mailbox per receiving rank: the one
// matcher (matcher.hpp, tag matching) and what a match does here, a copy.
//
// A message goes to the oldest receive it matches, or is copied into the
// mailbox until one is posted; FIFO per (source, tag); a receive may be for
// any source. A message of another size than its receive's buffer fails
// that receive (size_mismatch_message) and is consumed either way, so the
// next message of the same (source, tag) goes to the next receive.
//
// The Mailbox neither locks nor waits: its owner does both in its own way (a
// mutex and a condition variable; a switch back to the fiber scheduler).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "transport/matcher.hpp"
#include "transport/transport.hpp"

namespace ringlab {

// A receive: done once a message landed in `buffer` (from `sender`), or once
// it failed (`error` set: the message had another size).
struct PostedReceive {
  int source = -1;  // as posted: a rank, or kAnySource
  Tag tag = 0;
  MutBytes buffer;
  bool done = false;
  int sender = -1;  // once done
  std::string error;
};

class Mailbox {
 public:
  // carry_bytes = false: messages carry only their size and nothing is copied
  // (the simulator's mode for recording huge runs without their data).
  explicit Mailbox(int rank, bool carry_bytes = true) : rank_(rank), carry_bytes_(carry_bytes) {}

  // A message from `source` arrives. Returns the receive it completed (now
  // done, perhaps with a size-mismatch error), so the caller can wake the
  // rank waiting on it; nullptr if no receive was posted and it is kept.
  std::shared_ptr<PostedReceive> deliver(int source, Tag tag, ConstBytes data);

  // A receive is posted (source: a rank or kAnySource). If its message is
  // already here the result is done (with an error on a size mismatch);
  // otherwise it is pending, and a later deliver() completes it.
  std::shared_ptr<PostedReceive> receive(int source, Tag tag, MutBytes buffer);

  // Takes back a pending receive that nobody will wait for any more (its
  // wait timed out or was abandoned), so no later message lands in its
  // buffer. Does nothing if it is done already.
  void withdraw(const std::shared_ptr<PostedReceive>& posted);

 private:
  struct Message {
    std::vector<std::byte> bytes;  // empty when the mailbox carries no bytes
    std::size_t size = 0;
  };

  // Copies (or, without bytes, only checks the size of) a message from
  // `sender` into a receive.
  void fill(PostedReceive& posted, int sender, ConstBytes data, std::size_t size) const;

  int rank_;
  bool carry_bytes_;
  Matcher<std::shared_ptr<PostedReceive>, Message> matcher_;
};

}  // namespace ringlab
