// The TCP engine's operations in flight: a send or a receive that a Request
// waits on (engine.hpp), and a message that arrived before its receive.
// Plain state; the engine changes it under its mutex.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "transport/tcp/framing.hpp"
#include "transport/transport.hpp"

namespace ringlab::tcp {

struct Op {
  int peer = -1;
  Tag tag = 0;
  bool done = false;
  // Set when done with an error: a PeerError for failed_peer >= 0.
  std::string error;
  int failed_peer = -1;
};

struct SendOp : Op {
  FrameHeaderBytes header{};
  const std::byte* data = nullptr;
  std::size_t size = 0;
  std::vector<std::byte> owned;  // the unsent payload, once the request is dropped
  std::size_t written = 0;       // of header + payload
  std::size_t total() const { return kFrameHeaderBytes + size; }
  // The caller's buffer may go away: the payload is copied (once).
  void own_payload() {
    if (!owned.empty() || size == 0) return;
    owned.assign(data, data + size);
    data = owned.data();
  }
};

struct RecvOp : Op {
  MutBytes buffer;
  std::uint32_t element = kUntyped;  // what the receive expects (framing.hpp)
  // Posted for kAnySource: peer is kAnySource until a message is matched,
  // then its sender.
  bool any_source = false;
};

// A message that arrived before its receive was posted.
struct Queued {
  Buffer data;  // from the engine's scratch pool
  std::size_t size = 0;
  std::uint32_t element = kUntyped;  // what its frame said it holds
  bool complete = false;
};

}  // namespace ringlab::tcp
