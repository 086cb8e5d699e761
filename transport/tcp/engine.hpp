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
// thread that wants it. The parts, one file each:
//   connection.hpp    a peer's socket: reading frames, writing sends;
//   ../matcher.hpp    matching, the one matcher of every transport: posted
//                     receives and queued messages;
//   parking.hpp       a large early message stays in the socket until its
//                     receive comes, so it too is read straight into place;
//   driver.hpp        who drives the sockets when several threads wait
//                     (leader/followers), and the RAII Turn of the driver;
//   spin_policy.hpp   whether a wait spins before it blocks in poll();
//   blame.hpp         whom a wait that ran out of time names;
// and the engine's own files: engine.cpp (posting sends and receives),
// engine_wait.cpp (waiting, and one poll() round), engine_frames.cpp (what
// an arriving frame is for), engine_failure.cpp (failure relay, giving up a
// receive, shutdown), engine_blame.cpp (asking whom the peers wait for) and
// engine_writer.cpp (where processors are to spare, large sends leave
// through a thread per connection: the one exception to "nothing runs in
// the background").
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
// Locking: one mutex guards all state; it is released only around poll()
// and while a spinning wait yields.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/matcher.hpp"
#include "transport/scratch_pool.hpp"
#include "transport/tcp/blame.hpp"
#include "transport/tcp/connection.hpp"
#include "transport/tcp/driver.hpp"
#include "transport/tcp/framing.hpp"
#include "transport/tcp/operations.hpp"
#include "transport/tcp/spin_policy.hpp"
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
  const std::shared_ptr<ScratchPool>& scratch_pool() const { return pool_; }

  // element: what the message holds (framing.hpp's element field).
  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data,
                                 std::uint32_t element = kUntyped);
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data,
                                 std::uint32_t element = kUntyped);

  // Sends what is still queued (up to timeout) and closes every connection.
  void shutdown(Duration timeout);

  // Sends of at least from_bytes go out through a writer thread per
  // connection (engine_writer.cpp); SIZE_MAX (the default): none do.
  void use_writers(std::size_t from_bytes);

  // Used by the requests (engine.cpp).
  void wait(const std::shared_ptr<Op>& op, bool is_send, Duration timeout);
  bool test(const std::shared_ptr<Op>& op);
  void abandon_send(const std::shared_ptr<SendOp>& op);
  void abandon_recv(const std::shared_ptr<RecvOp>& op);

 private:
  using Clock = std::chrono::steady_clock;

  Connection& connection(int peer) { return *connections_[static_cast<std::size_t>(peer)]; }
  void complete(Op& op, std::string error = {}, int failed_peer = -1);
  std::unique_ptr<Request> failed_request() const;
  // irecv's cases: a message already queued, or the one parked on c.
  std::unique_ptr<Request> receive_queued(Connection& c, std::shared_ptr<Queued> message,
                                          Tag tag, MutBytes data, std::uint32_t element);
  std::unique_ptr<Request> receive_parked(Connection& c, Tag tag, MutBytes data,
                                          std::uint32_t element);
  // irecv from kAnySource: the oldest queued message of its tag from any
  // peer, else one parked, else a posted receive.
  std::unique_ptr<Request> receive_from_any(Tag tag, MutBytes data, std::uint32_t element);
  // Every peer said goodbye: nothing more will arrive.
  bool everyone_departed() const;

  // ---- waiting (engine_wait.cpp)
  // One poll() round over every connection (lock released while blocked).
  void drive(std::unique_lock<std::mutex>& lock, Clock::time_point deadline);
  // Fills poll_fds_; true if a connection is parked with a payload that may
  // be queued (then poll() wakes in time to check on it).
  bool gather_poll_set();
  // A spinning wait lets the other ranks run (lock released meanwhile).
  void yield(std::unique_lock<std::mutex>& lock);
  // A wait ran out of time: throws the TimeoutError (or the failure that
  // came meanwhile), unless op finished meanwhile (a send).
  void time_out(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Op>& op, bool is_send,
                Duration timeout);
  bool sends_pending() const;
  // A spinning wait may read this peer's socket without polling the others:
  // it is open and not parked, and no send waits to be written.
  bool can_look_alone(int peer) const;

  // ---- arriving frames (engine_frames.cpp; the FrameHandler)
  bool frame_started(Connection& c, const FrameHeader& header) override;
  void frame_finished(Connection& c) override;
  void sent(SendOp& op) override { complete(op); }
  // Where a data frame's payload goes: a posted receive, the queue, or (parked) nowhere yet.
  bool place_payload(Connection& c, const FrameHeader& header);
  // The frame being read on c has no posted receive: it is queued. False
  // (and the connection failed, naming the peer) if it claims more than
  // max_unexpected_.
  bool queue_arriving(Connection& c);
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
  // The peer said goodbye while still needed (for `what`): fail_all naming it.
  std::string departed_message(int peer, const std::string& what) const;
  void goodbye_received(Connection& c);
  void abort_received(Connection& c);
  void withdraw_locked(const std::shared_ptr<RecvOp>& op);
  // Sends what is queued until nothing is, the deadline, or another driver.
  void flush(std::unique_lock<std::mutex>& lock, Clock::time_point deadline);
  void close_all();

  // ---- writer threads (engine_writer.cpp)
  // c's queued sends go out: its writer is told, or the driver writes them now.
  void push(Connection& c);
  void start_writer(Connection& c);
  void write_loop(Connection& c);
  // What a writer's call did: n bytes of op went out (or errno `error`).
  void wrote(Connection& c, const std::shared_ptr<SendOp>& op, long n, int error);
  // Waits (lock released) while a writer's sendmsg reads op's payload.
  void await_writer(std::unique_lock<std::mutex>& lock, const SendOp& op);
  // Each writer finishes its call and leaves; the driver writes afterwards.
  void stop_writers(std::unique_lock<std::mutex>& lock);

  // ---- blame (engine_blame.cpp)
  // A wait on op.peer ran out of time (timed_out: the standard message):
  // asks every peer whom it waits for, drives until the answers name a rank
  // or patience runs out, and returns the verdict (blame.hpp).
  TimeoutVerdict find_blame(std::unique_lock<std::mutex>& lock, const Op& op,
                            const std::string& timed_out, Duration timeout);
  void waiting_received(Connection& c);

  int rank_;
  int size_;
  std::uint64_t max_unexpected_;
  // By peer rank; null for this rank. First, so that the descriptors are
  // closed if a member after them cannot be made.
  std::vector<std::unique_ptr<Connection>> connections_;
  // Memory of messages that arrive before their receive is posted (fresh
  // memory for each would be faulted in page by page). TcpTransport takes its
  // scratch from the same pool, so one bound covers both.
  std::shared_ptr<ScratchPool> pool_;
  std::mutex mutex_;
  Driver driver_;
  // Set once this engine failed (or was shut down): every pending and future
  // operation fails with it; a PeerError naming broken_peer_ when >= 0.
  std::string broken_;
  int broken_peer_ = -1;
  bool shutting_down_ = false;
  std::size_t writer_bytes_ = SIZE_MAX;  // use_writers
  bool shut_down_ = false;
  BlameBook blame_;
  SpinPolicy spin_;
  // When a poll() last reported an event (parking.hpp, overdue).
  Clock::time_point last_event_ = Clock::now();
  // Posted receives and queued messages (what happens when neither side is
  // there yet, queue or park, is decided in engine_frames.cpp).
  Matcher<std::shared_ptr<RecvOp>, std::shared_ptr<Queued>> matcher_;
  // The driver's poll set, rebuilt each round: [0] is the driver's wake-up
  // eventfd, then one per live connection (poll_connections_[i - 1]).
  std::vector<pollfd> poll_fds_;
  std::vector<Connection*> poll_connections_;
};

}  // namespace ringlab::tcp
