// The store's wire format (TCPStore-like requests and replies). Every integer
// is little-endian; every message starts with a 4-byte magic and a 2-byte
// version, so a stray or garbled byte stream is recognised at its first bytes.
//
// A request or reply is a 24-byte header, then `body_length` body bytes. The
// body is a sequence of strings (the arguments / results), each a 4-byte
// length followed by its bytes, filling the body exactly.
//
//      offset size  field
//      0      4     magic   "RLSQ" (request) / "RLSR" (reply)
//      4      2     version kStoreVersion
//      6      2     request: op (StoreOp); reply: status (StoreStatus)
//      8      4     body_length (<= kMaxStoreBody)
//      12     4     reserved, 0
//      16     8     number (int64): add's delta, get/wait's timeout in ms;
//                   in replies add's result, num_keys, check/delete's answer
//
// The first request on a store connection must be `hello` (one string: the
// client's 16-byte nonce), sent within the server's handshake timeout. Its
// reply carries the server's nonce and proof (HMAC-SHA256(token, "ringlab
// store server" ‖ 0 ‖ client nonce ‖ server nonce); token_proof.hpp); the
// client checks it and sends `auth` (one string: its proof, the same with
// "ringlab store client"); the server answers ok, or error and closes.
// Nothing else is served before that. Reply statuses: ok, timeout (a
// get/wait's keys did not come in time: the missing keys), error (the request
// was refused: why), closing (sent unasked, or instead of the answer to a
// request that crossed it: the server closes this connection, which was idle,
// and ran no request; the client reconnects).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ringlab::store {

inline constexpr std::size_t kStoreHeaderBytes = 24;
inline constexpr std::uint16_t kStoreVersion = 3;
inline constexpr std::uint32_t kMaxStoreBody = 64u << 20;

enum class StoreOp : std::uint16_t {
  Hello = 1,
  Set = 2,         // key, value
  Get = 3,         // key; number = timeout ms; waits for the key
  Add = 4,         // key; number = delta
  Wait = 5,        // keys...; number = timeout ms
  CompareSet = 6,  // key, expected, desired
  Check = 7,       // keys...
  Delete = 8,      // key
  NumKeys = 9,
  Auth = 10,       // proof (after hello's reply)
};
enum class StoreStatus : std::uint16_t { Ok = 0, Timeout = 1, Error = 2, Closing = 3 };

struct StoreHeader {
  bool request = true;       // RLSQ vs RLSR
  std::uint16_t code = 0;    // StoreOp or StoreStatus
  std::uint32_t body_length = 0;
  std::int64_t number = 0;
};
using StoreHeaderBytes = std::array<std::byte, kStoreHeaderBytes>;

StoreHeaderBytes encode_store_header(const StoreHeader& header);
struct StoreDecode {
  std::optional<StoreHeader> header;
  std::string error;
};
// expect_request: a server decodes requests, a client replies.
StoreDecode decode_store_header(std::span<const std::byte, kStoreHeaderBytes> bytes,
                                bool expect_request);

// Strings <-> body. decode fails (nullopt) unless the strings fill the body exactly.
std::vector<std::byte> encode_strings(const std::vector<std::string_view>& strings);
std::optional<std::vector<std::string>> decode_strings(std::span<const std::byte> body);

const char* store_op_name(std::uint16_t op);
inline std::string store_op_name(StoreOp op) {
  return store_op_name(static_cast<std::uint16_t>(op));
}

}  // namespace ringlab::store
