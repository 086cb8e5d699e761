// One peer's connection as the TCP engine sees it: a non-blocking socket, the
// frame being read from it, and the sends waiting to be written to it. This
// file does the system calls; what a frame means is the engine's to decide
// (the FrameHandler below).
//
// Reading: bytes land either in the connection's staging buffer (64 KiB;
// headers and small payloads, so one recv() can bring several small
// messages) or, for the rest of a large payload whose destination is known,
// straight into that destination. At each complete header the handler says
// where the payload goes: a posted receive's buffer (target), a queued
// message (queued), the control buffer (abort and waiting frames), nowhere
// (read and dropped), or nowhere yet (parked: the connection is not read
// until the handler unparks it).
//
// Writing: a send is tried at once from isend (one sendmsg of header +
// payload, from the caller's buffer, send_at_once); what the socket does not
// take is queued here and written, several frames per sendmsg, as the socket
// drains (write).
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "transport/tcp/framing.hpp"
#include "transport/tcp/operations.hpp"

namespace ringlab::tcp {

struct Connection;

// What the engine does with what a connection reads and writes.
class FrameHandler {
 public:
  // A complete header arrived on c: set c.target, c.queued or c.parked (or
  // none: the payload is dropped). False: nothing more is read from c now
  // (a goodbye, or c failed).
  virtual bool frame_started(Connection& c, const FrameHeader& header) = 0;
  // c's frame is complete (its payload is where frame_started put it).
  virtual void frame_finished(Connection& c) = 0;
  // c ended without a goodbye, or carried garbage; why says so.
  virtual void connection_lost(Connection& c, const std::string& why) = 0;
  // Writing to c failed with errno `error`.
  virtual void sends_failed(Connection& c, int error) = 0;
  // op is written completely.
  virtual void sent(SendOp& op) = 0;

 protected:
  ~FrameHandler() = default;
};

// The iovecs of what is left to write of op: the rest of its header, the rest
// of its payload. Writes 0, 1 or 2 entries from iov on; returns how many.
std::size_t unwritten_iovecs(const SendOp& op, iovec* iov);

struct Connection {
  // Takes the descriptor (connected, handshake done) and makes it non-blocking.
  Connection(int self_rank, int peer_rank, int descriptor);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Reads what the socket has, until it is empty for now, c is parked, or
  // it fails; every complete header and frame goes to the handler.
  void read(FrameHandler& handler);
  // Hands the frames already staged to the handler (after an unpark).
  void consume_staged(FrameHandler& handler);
  // Writes queued sends until the socket is full or nothing is queued.
  void write(FrameHandler& handler);
  // One sendmsg of header + payload from the caller's buffer: the bytes the
  // socket took (0 if full), or -errno for an error other than "full".
  long send_at_once(const FrameHeaderBytes& header, ConstBytes payload);
  // Queues a frame of this engine's own (abort, waiting, goodbye).
  void queue_control(FrameKind kind, std::vector<std::byte> payload);

  bool open() const { return failure.empty(); }
  // Open, writing has not failed, and something is queued.
  bool has_sends() const { return failure.empty() && send_failure.empty() && !sends.empty(); }
  // The driver writes this connection now: it has sends and no writer.
  bool writable() const { return !has_writer && has_sends(); }
  // Where the next payload byte goes; nullptr: dropped.
  std::byte* payload_destination();
  // Stops traffic both ways; the descriptor stays open (a driver may be
  // polling it) until close().
  void stop_traffic();
  void close();
  // Forgets what is staged and the frame being read.
  void clear_reading() {
    in_payload = false;
    stage_begin = stage_end = 0;
  }

  const int self;  // this rank
  const int peer;
  int fd;
  std::string failure;       // set once the connection is closed (not polled any more)
  std::string send_failure;  // set once writing failed (nothing more is written)
  bool reading = false;      // read() is under way (a handler it called may want to read)
  bool departed = false;     // the peer said goodbye
  std::vector<std::byte> control;  // an abort or waiting frame's payload, while it arrives
  std::deque<std::shared_ptr<SendOp>> sends;

  // Read state.
  std::unique_ptr<std::byte[]> stage;
  std::size_t stage_begin = 0, stage_end = 0;
  bool in_payload = false;
  bool parked = false;  // in_payload, waiting for a receive to be posted (not read meanwhile)
  std::chrono::steady_clock::time_point parked_since;
  FrameHeader frame;
  std::size_t payload_got = 0;
  std::shared_ptr<RecvOp> target;  // the posted receive being filled, or
  std::shared_ptr<Queued> queued;  // the queued message being filled (neither: dropped)

  // A writer thread writes this connection's sends (writers.hpp); the driver
  // then only reads it.
  bool has_writer = false;

 private:
  // Reads once into the stage or the destination; false: stop reading.
  bool read_once(FrameHandler& handler, bool& drained);
  std::string closed_because(const std::string& how) const;
};

}  // namespace ringlab::tcp
