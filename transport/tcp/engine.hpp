// The TCP transport's progress engine: one connected socket per peer, and the
// matching of incoming frames to posted receives.
//
// Nothing runs in the background. A thread that waits on a request drives
// every socket itself: it poll()s them, reads whatever arrived (straight into
// a posted receive's buffer when one matches, else into a queued message) and
// writes pending sends, until its own request is done or its deadline passes.
// It spins briefly before it blocks in poll() (engine.cpp: waiting), so that a
// small message that comes soon costs no wake-up.
// That keeps the hot path free of thread hand-offs: a message is read by the
// thread that wants it. If several threads wait at once, one drives and the
// others sleep on a condition variable that the driver signals after each
// round (leader/followers).
//
// A large message that arrives before its receive is posted is left in the
// socket until the receive comes (engine.cpp: parking), so it too is read
// straight into place.
//
// Sends are attempted at once from isend (one sendmsg of header + payload,
// from the caller's buffer); what the socket does not take is queued and
// written as the socket drains. A send whose request is dropped before it
// finished copies its unsent bytes, so the caller may reuse its buffer.
//
// Failure (see engine.cpp): a connection that ends without a goodbye frame,
// or a peer needed after it said goodbye, fails every pending and future
// wait of this engine with a PeerError naming that peer, and an abort frame
// naming it goes to every other peer.
//
// Blame (see engine.cpp): a wait that runs out of time asks every peer whom
// it waits for and names the rank at the end of that chain, the one that did
// not answer; a rank that leaves right after such a timeout sends abort
// frames naming that rank, so every rank's error names the same one.
//
// Locking: one mutex guards all state; it is released only around poll().
#pragma once

#include <poll.h>

#include "store/asio.hpp"
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/scratch_pool.hpp"
#include "transport/tcp/framing.hpp"
#include "transport/transport.hpp"

namespace ringlab::tcp {

// Whether a wait spins (looks without blocking, then yields) or blocks in
// poll() (engine.cpp, "Waiting"): a wait for a message of at most
// `largest_bytes` spins for its first `spin`, unless a yield took
// `slow_yield` or more in the last `pause` (other programs keep the
// processors busy).
struct SpinPolicy {
  using Clock = std::chrono::steady_clock;
  Clock::duration spin;
  std::size_t largest_bytes;
  Clock::duration slow_yield;
  Clock::duration pause;
  Clock::time_point paused_until{};

  bool spins(std::size_t bytes, Clock::time_point wait_started, Clock::time_point now) const {
    return bytes <= largest_bytes && now - wait_started < spin && now >= paused_until;
  }
  // A yield ran from `from` to `back`.
  void yielded(Clock::time_point from, Clock::time_point back) {
    if (back - from >= slow_yield) paused_until = back + pause;
  }
};

class Engine : public std::enable_shared_from_this<Engine> {
 public:
  // sockets[peer] is the connection to peer (after the handshake); the entry
  // for this rank itself is an unopened socket. io is the context the sockets
  // belong to (it must outlive them; nothing runs it any more).
  // max_unexpected: the most a message that arrives before its receive may
  // claim (framing.hpp; tests lower it).
  Engine(int rank, int size, std::unique_ptr<boost::asio::io_context> io,
         std::vector<boost::asio::ip::tcp::socket> sockets,
         std::uint64_t max_unexpected = kMaxUnexpectedBytes);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // The pool early messages take their memory from; the transport's scratch
  // comes from it too.
  const std::shared_ptr<ScratchPool>& scratch_pool() const { return pool_; }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data);
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data);

  // Sends what is still queued (up to timeout) and closes every connection.
  void shutdown(Duration timeout);

  // An operation in flight; the requests below hold one each.
  struct Op {
    int peer = -1;
    Tag tag = 0;
    bool done = false;
    // Set when done with an error: a PeerError for failed_peer >= 0.
    std::string error;
    int failed_peer = -1;
    bool abandoned = false;  // its request was destroyed before it finished
  };
  struct SendOp;
  struct RecvOp;
  struct Queued;
  struct Connection;

  // Used by the requests.
  void wait(const std::shared_ptr<Op>& op, bool is_send, Duration timeout);
  bool test(const std::shared_ptr<Op>& op);
  void abandon_send(const std::shared_ptr<SendOp>& op);
  void abandon_recv(const std::shared_ptr<RecvOp>& op);

 private:
  using Key = std::pair<int, Tag>;  // (source rank, tag)

  // One poll() round over every connection (lock released while blocked).
  void drive(std::unique_lock<std::mutex>& lock, std::chrono::steady_clock::time_point deadline);
  void write_ready(Connection& c);
  void read_ready(Connection& c);
  // Uses the bytes already in c's staging buffer.
  void consume_staged(Connection& c);
  bool receive_posted_from(int peer) const;
  // The frame being read on c has no posted receive: it is queued. False
  // (and the connection failed, naming the peer) if it claims more than
  // max_unexpected_.
  bool queue_arriving(Connection& c);
  // c's parked frame goes to the receive just attached (c.target), or into
  // the queue (into_queue), or is dropped; reading c resumes.
  void unpark(Connection& c, bool into_queue);
  // Moves to the queue every parked payload that waited too long (engine.cpp).
  void unpark_overdue(std::chrono::steady_clock::time_point now);
  bool start_frame(Connection& c, const FrameHeader& header);
  void finish_frame(Connection& c);
  // The connection ended without a goodbye (or carried garbage): it is
  // closed, and unless this engine is shutting down, everything fails.
  void connection_lost(Connection& c, const std::string& why);
  // Writing failed (errno): the peer is gone while a send still needed it.
  void fail_sends(Connection& c, int error);
  // Every pending and future operation fails with PeerError(culprit, why);
  // an abort frame naming culprit goes to every peer still connected.
  // relayed: what the abort frames say instead of why (an abort passed on
  // carries the root cause, not a wrapping of it per hop).
  void fail_all(int culprit, const std::string& why, const std::string* relayed = nullptr);
  // The peer said goodbye while still needed (for `what`): fail_all naming it.
  std::string departed_message(int peer, const std::string& what) const;
  void goodbye_received(Connection& c);
  void abort_received(Connection& c);
  void waiting_received(Connection& c);

  // A wait on op.peer ran out of time (timed_out: the standard message):
  // asks every peer whom it waits for, follows the answers from op.peer to
  // the rank that did not answer (or waits for nobody, or closes a circle),
  // and returns that rank and the error message naming it first.
  struct Blame {
    int rank = -1;
    std::string message;
  };
  Blame find_blame(std::unique_lock<std::mutex>& lock, const Op& op, const std::string& timed_out,
                   Duration timeout);
  // How a chain of "waits for" answers from `first` ends (chain: the ranks on it).
  enum class ChainEnd { Unanswered, WaitsForNobody, Circle };
  ChainEnd follow_answers(int first, std::vector<int>& chain) const;
  // The peer the oldest wait of this rank is on, or -1.
  int waiting_for_now() const;
  void queue_control(Connection& c, FrameKind kind, std::vector<std::byte> payload);
  bool writable(const Connection& c) const;
  bool sends_pending() const;
  // A spinning wait may read this peer's socket without polling the others:
  // it is open and not parked, and no send waits to be written.
  bool can_look_alone(int peer) const;
  void complete(Op& op, std::string error = {}, int failed_peer = -1);
  void withdraw_locked(const std::shared_ptr<RecvOp>& op);
  void wake_driver();
  std::byte* payload_destination(Connection& c) const;

  int rank_;
  int size_;
  std::uint64_t max_unexpected_;
  std::unique_ptr<boost::asio::io_context> io_;
  // Memory of messages that arrive before their receive is posted (fresh
  // memory for each would be faulted in page by page). TcpTransport takes its
  // scratch from the same pool, so one bound covers both.
  std::shared_ptr<ScratchPool> pool_;
  std::mutex mutex_;
  std::condition_variable progressed_;
  bool driving_ = false;
  int followers_ = 0;
  // Set once this engine failed (or was shut down): every pending and future
  // operation fails with it; a PeerError naming broken_peer_ when >= 0.
  std::string broken_;
  int broken_peer_ = -1;
  bool shutting_down_ = false;
  bool shut_down_ = false;
  // The waits in progress (their ops), oldest first: whom this rank waits for.
  std::vector<const Op*> waits_;
  // By rank: whom it said it waits for (waiting frames; kUnheard: nothing
  // heard), and whether it said so because it gave up waiting (then it
  // stands, also when that rank answers nothing more).
  static constexpr int kUnheard = -2;
  std::vector<int> said_;
  std::vector<bool> gave_up_;
  // The rank the last wait that ran out of time blamed (-1: none, or a wait
  // succeeded since): a rank that shuts down now aborts naming it.
  int stalled_ = -1;
  std::string stalled_message_;
  SpinPolicy spin_;   // engine.cpp, "Waiting"
  int wake_fd_ = -1;  // eventfd: wakes a driver blocked in poll() when a send is queued
  // When a poll() last reported an event (see kParkPatience in engine.cpp).
  std::chrono::steady_clock::time_point last_event_ = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Connection>> connections_;  // by peer rank; null for this rank
  std::map<Key, std::deque<std::shared_ptr<RecvOp>>> posted_;
  std::map<Key, std::deque<std::shared_ptr<Queued>>> queued_;
  // The driver's poll set, rebuilt each round: [0] is wake_fd_, then one per
  // live connection (poll_connections_[i - 1]).
  std::vector<pollfd> poll_fds_;
  std::vector<Connection*> poll_connections_;
};

}  // namespace ringlab::tcp
