// The TCP transport's progress engine: one connected socket per peer, and the
// matching of incoming frames to posted receives. It drives the sockets with
// poll() and non-blocking system calls of its own, so that the thread that
// waits for a message reads it straight into its buffer, with no completion
// handler or other thread in between; Boost.Asio sets the connections up
// (mesh.hpp) and is not used here.
//
// Nothing runs in the background. A thread that waits on a request drives
// every socket itself: it poll()s them, reads whatever arrived (straight into
// a posted receive's buffer when one matches, else into a queued message) and
// writes pending sends, until its own request is done or its deadline passes.
// That keeps the hot path free of thread hand-offs: a message is read by the
// thread that wants it.
//
// The engine is its collaborators, each a class with its own state, and the
// rules that cross them. The collaborators:
//   connections.hpp   sockets and frames: a Connection per peer
//                     (connection.hpp: reading frames, writing sends);
//   inbox.hpp         matching: posted receives and early messages (the one
//                     matcher, ../matcher.hpp), and where a frame goes;
//   poller.hpp        parking and spinning: who drives the sockets
//                     (driver.hpp), whether a wait spins (spin_policy.hpp),
//                     one poll() round, when a parked payload moves
//                     (parking.hpp);
//   first_failure.hpp failure: the first one, and the shutdown's stage;
//   blame.hpp         blame: whom a wait that ran out of time names;
//   writers.hpp       writer threads: where processors are to spare, large
//                     sends leave through a thread per connection (the one
//                     exception to "nothing runs in the background").
// The rules that cross them, one file each:
//   engine.cpp          posting sends and receives;
//   engine_wait.cpp     waiting, and acting on a poll() round;
//   engine_frames.cpp   what an arriving frame is for, and unparking;
//   engine_failure.cpp  failure relay, goodbyes, giving up, shutdown;
//   engine_blame.cpp    asking whom the peers wait for, and answering;
//   engine_writes.cpp   what a writer's call did;
//   send_custody.hpp    who may touch a send's payload while a writer's
//                       call reads it: goodbye, failure, a dropped request.
// How a host sets the engine up (writer threads, fewer messages where ranks
// outnumber processors) is engine_policy.hpp.
//
// Sends are attempted at once from isend (one sendmsg of header + payload,
// from the caller's buffer); what the socket does not take is queued and
// written as the socket drains. A send whose request is dropped before it
// finished copies its unsent bytes, so the caller may reuse its buffer.
//
// Failure (engine_failure.cpp): a connection that ends without a goodbye
// frame, or a peer needed after it said goodbye, fails every pending and
// future wait of this engine with a PeerError naming that peer, and an abort
// frame naming it goes to every other peer.
//
// Locking: one mutex, the engine's, guards every collaborator's state; it is
// released only around poll(), while a spinning wait yields, and during a
// writer's sendmsg (which then reads only the payload of its send in_call).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/scratch_pool.hpp"
#include "transport/tcp/blame.hpp"
#include "transport/tcp/connections.hpp"
#include "transport/tcp/first_failure.hpp"
#include "transport/tcp/framing.hpp"
#include "transport/tcp/inbox.hpp"
#include "transport/tcp/operations.hpp"
#include "transport/tcp/poller.hpp"
#include "transport/tcp/writers.hpp"
#include "transport/transport.hpp"

namespace ringlab::tcp {

class Engine final : public std::enable_shared_from_this<Engine>, private FrameHandler {
 public:
  // descriptors[peer] is the connected socket to peer (after the handshake;
  // -1 for this rank itself): the engine takes them and closes them.
  // max_unexpected: the most a message that arrives before its receive may
  // claim (framing.hpp; tests lower it).
  Engine(int rank, int size, std::vector<int> descriptors,
         std::uint64_t max_unexpected = kMaxUnexpectedBytes);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // The pool early messages take their memory from; the transport's scratch
  // comes from it too.
  const std::shared_ptr<ScratchPool>& scratch_pool() const { return inbox_.pool(); }

  // element: what the message holds (framing.hpp's element field).
  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data,
                                 std::uint32_t element = kUntyped);
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data, std::uint32_t element = kUntyped);

  // Sends what is still queued (up to timeout) and closes every connection.
  void shutdown(Duration timeout);

  // Sends of at least from_bytes go out through a writer thread per
  // connection (writers.hpp); SIZE_MAX (the default): none do.
  void use_writers(std::size_t from_bytes);

  // Used by the requests (engine.cpp).
  void wait(const std::shared_ptr<Op>& op, bool is_send, Duration timeout);
  bool test(const std::shared_ptr<Op>& op);
  void abandon_send(const std::shared_ptr<SendOp>& op);
  void abandon_recv(const std::shared_ptr<RecvOp>& op);

 private:
  using Clock = std::chrono::steady_clock;

  void complete(Op& op, std::string error = {}, int failed_peer = -1);

  // ---- posting (engine.cpp)
  // irecv's cases: a message already queued, or the one parked on c.
  std::unique_ptr<Request> receive_queued(Connection& c, std::shared_ptr<Queued> message, Tag tag,
                                          MutBytes data, std::uint32_t element);
  std::unique_ptr<Request> receive_parked(Connection& c, Tag tag, MutBytes data,
                                          std::uint32_t element);
  // irecv from kAnySource: the oldest queued message of its tag from any
  // peer, else one parked, else a posted receive.
  std::unique_ptr<Request> receive_from_any(Tag tag, MutBytes data, std::uint32_t element);

  // ---- waiting (engine_wait.cpp)
  // One poll() round over every connection (lock released while blocked),
  // and what it found read and written.
  void drive(std::unique_lock<std::mutex>& lock, Clock::time_point deadline);
  // A wait ran out of time: throws the TimeoutError (or the failure that
  // came meanwhile), unless op finished meanwhile (a send).
  void time_out(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Op>& op, bool is_send,
                Duration timeout);

  // ---- arriving frames (engine_frames.cpp; the FrameHandler)
  bool frame_started(Connection& c, const FrameHeader& header) override;
  void frame_finished(Connection& c) override;
  void sent(SendOp& op) override { complete(op); }
  // The frame being read on c has no posted receive: it is kept. False
  // (and the connection failed, naming the peer) if it claims more than
  // the inbox keeps.
  bool keep_arriving(Connection& c);
  // c's parked frame goes to the receive just attached (c.target), or into
  // the queue (into_queue), or is dropped; reading c resumes.
  void unpark(Connection& c, bool into_queue);
  // Moves to the queue every parked payload that waited too long (parking.hpp).
  void unpark_overdue(Clock::time_point now);

  // ---- failure (engine_failure.cpp)
  // The connection ended without a goodbye (or carried garbage): it is
  // closed, and unless this engine is shutting down, everything fails.
  void connection_lost(Connection& c, const std::string& why) override;
  // Writing failed (errno): the peer is gone while a send still needed it.
  void sends_failed(Connection& c, int error) override;
  // Every pending and future operation fails with PeerError(culprit, why);
  // an abort frame naming culprit goes to every peer still connected.
  // relayed: what the abort frames say instead of why (an abort passed on
  // carries the root cause, not a wrapping of it per hop).
  void fail_all(int culprit, const std::string& why, const std::string* relayed = nullptr);
  // Ends c's part in fail_all: its operations fail, and (unless c is the
  // culprit's or closed) an abort frame follows whatever frame is half written.
  void fail_connection(Connection& c, int culprit, const std::string& why,
                       const std::vector<std::byte>& abort);
  void goodbye_received(Connection& c);
  void abort_received(Connection& c);
  void withdraw_locked(const std::shared_ptr<RecvOp>& op);
  // Sends what is queued until nothing is, the deadline, or another driver.
  void flush(std::unique_lock<std::mutex>& lock, Clock::time_point deadline);
  void close_all();

  // ---- writes (engine_writes.cpp)
  // c's queued sends go out: its writer is told, or the driver writes them now.
  void push(Connection& c);
  // What a writer's call did: n bytes of op went out (or errno `error`).
  void wrote(Connection& c, const std::shared_ptr<SendOp>& op, long n, int error);

  // ---- blame (engine_blame.cpp)
  // A wait on op.peer ran out of time (timed_out: the standard message):
  // asks every peer whom it waits for, drives until the answers name a rank
  // or patience runs out, and returns the verdict (blame.hpp).
  TimeoutVerdict find_blame(std::unique_lock<std::mutex>& lock, const Op& op,
                            const std::string& timed_out, Duration timeout);
  void waiting_received(Connection& c);

  int rank_;
  int size_;
  std::mutex mutex_;
  // First, so that the descriptors are closed if a member after them cannot
  // be made; the writers, which write them, are last (stopped first).
  Connections connections_;
  Inbox inbox_;
  Poller poller_;
  FirstFailure failure_;
  BlameBook blame_;
  Writers writers_;
};

}  // namespace ringlab::tcp
