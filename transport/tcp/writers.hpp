// Writer threads: on a host with processors to spare, a connection's large
// sends leave through a thread of their own, so that a rank's thread receives
// and reduces while its sends go out (on loopback the sender's processor
// copies every byte into the kernel: a thread that did both would do one
// after the other). Whether a host has them is the engine's performance
// policy (engine_policy.hpp).
//
// The first send of at least the threshold (use_from) on a connection makes
// its writer; from then on the writer alone writes that connection, every
// send in order (small ones too, and the engine's own frames), and the driver
// only reads it (Connection::has_writer). The writer takes the oldest send,
// releases the engine's lock for one non-blocking sendmsg of it (and, if the
// socket is full, a short poll() for room), and takes the lock again to hand
// what went out to the engine (the Wrote callback). While its sendmsg reads a
// send's payload, that send is in_call: what the rest of the engine may then
// do with it is in send_custody.hpp. stop_all() stops the writers (each after
// its call) and joins them.
//
// State: the threads and what each is doing. Every member function is called
// with the engine's mutex held (the one the writers take between calls).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "transport/tcp/connection.hpp"
#include "transport/tcp/operations.hpp"

namespace ringlab::tcp {

class Writers {
 public:
  // What one writer call did: n bytes of op went out on c (or -1, errno
  // `error`). Called with the lock held, after in_call is clear.
  using Wrote =
      std::function<void(Connection& c, const std::shared_ptr<SendOp>& op, long n, int error)>;

  // mutex: the engine's; size: peers by rank.
  Writers(std::mutex& mutex, int size, Wrote wrote);
  // The writers must be stopped (stop_all) by then.
  ~Writers();
  Writers(const Writers&) = delete;
  Writers& operator=(const Writers&) = delete;

  // Sends of at least `bytes` make a writer; SIZE_MAX (the default): none do.
  void use_from(std::size_t bytes) { from_bytes_ = bytes; }
  // Whether a send of `bytes` goes out through a writer.
  bool wanted_for(std::size_t bytes) const { return bytes >= from_bytes_; }
  // Makes c's writer, unless it has one; without a thread to be had, c stays
  // the driver's to write.
  void start(Connection& c);
  // c has a send queued for its writer (c.has_writer).
  void notify(const Connection& c);
  // The send whose payload c's writer's sendmsg reads now, or null.
  const SendOp* in_call(const Connection& c) const;
  // Waits (lock released) until no writer's call reads op's payload.
  void await_call(std::unique_lock<std::mutex>& lock, const Connection& c, const SendOp& op);
  // Each writer finishes its call and leaves; then the driver writes.
  void stop_all(std::unique_lock<std::mutex>& lock);

 private:
  struct Writer {
    Connection* connection;  // the one it writes
    std::thread thread;
    std::condition_variable work;       // a send was queued, or stop
    std::condition_variable call_done;  // the sendmsg of in_call returned
    const SendOp* in_call = nullptr;    // whose payload a sendmsg reads now (lock released)
    int awaiting = 0;                   // threads that wait for in_call's call (go first)
    bool stop = false;
  };
  Writer* of(const Connection& c) const { return by_peer_[static_cast<std::size_t>(c.peer)].get(); }
  void loop(Connection& c, Writer& w);

  std::mutex& mutex_;
  Wrote wrote_;
  std::size_t from_bytes_ = SIZE_MAX;
  std::vector<std::unique_ptr<Writer>> by_peer_;
};

}  // namespace ringlab::tcp
