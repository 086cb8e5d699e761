// Wire format of the TCP transport: what ranks send each other. Every integer
// is little-endian; every message starts with a 4-byte magic and a 2-byte
// version, so a stray or garbled byte stream is recognised at its first bytes.
//
// A transport frame is a 32-byte header, then `length` payload bytes.
//
//      offset size  field
//      0      4     magic   "RLTF"
//      4      2     version kFrameVersion
//      6      2     kind    1 = data, 2 = hello, 3 = hello_ack, 4 = goodbye, 5 = abort,
//                           6 = waiting
//      8      4     source  sending rank (int32)
//      12     4     element what a data frame's payload holds: 0 = bytes (not
//                           said), 1 + the dtype's index in ops/dtype.hpp's
//                           table otherwise (1 = bool ... 10 = float64); a
//                           receive that says another dtype fails (ProcessGroup's
//                           send/recv say it); 0 in every other frame
//      16     8     tag     the Transport tag (data); 0 otherwise
//      24     8     length  payload bytes (data: <= kMaxFrameBytes)
//
//    hello / hello_ack payload (exactly kHelloBytes = 64 bytes). The
//    handshake is three frames: hello from the connecting (higher) rank,
//    hello_ack from the accepting (lower) rank, then a second hello; a
//    connection is used only if both agree on every field and each proved it
//    knows the job token (store/token_proof.hpp).
//
//      0      4     world_size (uint32)
//      4      4     destination rank the sender believes it talks to (int32)
//      8      8     job id (uint64), chosen by rank 0 and read from the store
//      16     16    nonce: the sender's fresh challenge (the same in both hellos)
//      32     32    proof: zero in the first hello; in hello_ack and the second
//                   hello HMAC-SHA256(token, role label ‖ 0 ‖ connecting
//                   rank's nonce ‖ accepting rank's nonce ‖ job id ‖ world
//                   size ‖ connecting rank ‖ accepting rank), integers
//                   little-endian
//
//    goodbye (no payload): the last frame a rank sends on a connection when
//    it shuts its transport down normally, after every message it sent on
//    that connection. A connection that ends without it (end of stream, reset)
//    means the peer died: the receiving transport fails every pending and
//    future wait, naming the peer. After a goodbye the peer's messages already
//    received can still be received; a receive from it or a send to it that is
//    still pending, or comes later, can never finish, so it fails everything
//    the same way, naming the peer (engine_failure.cpp).
//
//    abort (payload 4 + n bytes, n <= kMaxAbortReason): sent to every peer
//    still reachable when a rank's transport fails, so ranks waiting on it
//    learn the root cause instead of just seeing it leave:
//
//      0      4     culprit rank (int32): the rank the failure names
//      4      n     the failure's text (UTF-8, not terminated)
//
//    waiting (payload exactly kWaitingBytes = 8 bytes): whom the sender waits
//    for. A rank whose wait runs out of time asks every peer (asking = 1,
//    naming the rank it gave up on); a rank that is driving its sockets
//    answers the asker (asking = 0) with the rank its oldest wait is on. A
//    rank stopped or hung answers nothing, so the asker follows the answers
//    to the rank that did not answer and names it (blame.hpp).
//
//      0      4     the rank waited for (int32), -1: none
//      4      4     flags (uint32): bit 0 = asking; the other bits 0
//
// The store's requests and replies have a format of their own
// (store/protocol.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/bytes.hpp"
#include "store/token_proof.hpp"
#include "transport/transport.hpp"

namespace ringlab::tcp {

// ---- transport frames ------------------------------------------------------

inline constexpr std::size_t kFrameHeaderBytes = 32;
// 2: the element field (offset 12) says what a data frame holds; in version
// 1 it was reserved and zero, so a build of each would misread the other.
inline constexpr std::uint16_t kFrameVersion = 2;
inline constexpr std::size_t kHelloBytes = 64;
// The largest payload accepted (16 GiB): a larger length is garbage, not a
// tensor, and must not become an allocation.
inline constexpr std::uint64_t kMaxFrameBytes = std::uint64_t{1} << 34;

// The most a data frame may claim and still be kept in memory when it
// arrives before its receive is posted (1 GiB). A larger one is parked in the
// socket until its receive comes (transport/tcp/engine.cpp) and is never
// copied into memory; if it has to make way for a later message (a receive
// from its sender for another tag), the connection fails naming the peer. So
// a header alone cannot make a rank reserve more than this. A posted receive
// takes a frame of its own size, however large (up to kMaxFrameBytes).
inline constexpr std::uint64_t kMaxUnexpectedBytes = std::uint64_t{1} << 30;

enum class FrameKind : std::uint16_t {
  Data = 1,
  Hello = 2,
  HelloAck = 3,
  Goodbye = 4,
  Abort = 5,
  Waiting = 6,
};
// The longest failure text an abort frame carries (longer ones are cut).
inline constexpr std::size_t kMaxAbortReason = 1024;

struct FrameHeader {
  FrameKind kind = FrameKind::Data;
  std::int32_t source = 0;
  Tag tag = 0;
  std::uint64_t length = 0;
  std::uint32_t element = 0;  // kUntyped, or element_code(dtype)
};

// The header's element field: what a message says it holds.
inline constexpr std::uint32_t kUntyped = 0;
constexpr std::uint32_t element_code(DType dtype) { return 1u + static_cast<std::uint32_t>(dtype); }
constexpr DType element_dtype(std::uint32_t code) { return static_cast<DType>(code - 1); }
// "" when a receive of `expected` may take a message of `got` (equal, or
// either says nothing), else dtype_mismatch_message.
std::string element_problem(int rank, int src, Tag tag, std::uint32_t expected, std::uint32_t got);

using FrameHeaderBytes = std::array<std::byte, kFrameHeaderBytes>;

FrameHeaderBytes encode_frame_header(const FrameHeader& header);

// A decoded header, or what was wrong with the bytes.
struct FrameDecode {
  std::optional<FrameHeader> header;
  std::string error;  // "bad magic 47 45 54 20 (expected RLTF)", ...
};
FrameDecode decode_frame_header(std::span<const std::byte, kFrameHeaderBytes> bytes);

// The handshake's challenges and proofs are the job token's (store/token_proof.hpp).
using store::kNonceBytes;
using store::kProofBytes;

struct Hello {
  std::uint32_t world_size = 0;
  std::int32_t destination = 0;
  std::uint64_t job_id = 0;
  std::array<std::byte, kNonceBytes> nonce{};
  std::array<std::byte, kProofBytes> proof{};
};
std::array<std::byte, kHelloBytes> encode_hello(const Hello& hello);
Hello decode_hello(std::span<const std::byte, kHelloBytes> bytes);

struct Abort {
  std::int32_t culprit = -1;
  std::string reason;
};
// The payload of an abort frame (the reason cut to kMaxAbortReason bytes).
std::vector<std::byte> encode_abort(const Abort& abort);
// nullopt if the payload is shorter than 4 bytes.
std::optional<Abort> decode_abort(std::span<const std::byte> payload);

inline constexpr std::size_t kWaitingBytes = 8;
struct Waiting {
  std::int32_t waiting_for = -1;  // -1: no rank
  bool asking = false;            // the sender gave up waiting, and wants answers
};
std::vector<std::byte> encode_waiting(const Waiting& waiting);
// nullopt unless the payload is kWaitingBytes long with no unknown flag.
std::optional<Waiting> decode_waiting(std::span<const std::byte> payload);

// "52 4c 54 46" for error messages about garbage (net/bytes.hpp).
using net::hex_bytes;

}  // namespace ringlab::tcp
