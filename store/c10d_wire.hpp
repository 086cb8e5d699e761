// The c10d TCPStore's wire format (c10d_client.hpp gives the overview,
// docs/pytorch.md the sources): query numbers per protocol, a request
// builder, the reply bytes, and the probe that tells the protocols apart.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "store/c10d_client.hpp"
#include "store/socket_util.hpp"

namespace ringlab::store {

// The requests this client makes.
enum class C10dQuery : std::uint8_t {
  Set, CompareSet, Get, Add, Check, Wait, NumKeys, DeleteKey, CancelWait
};

// The query type byte of `query` in `protocol` (Legacy or Validated).
// Throws std::invalid_argument for CancelWait in Legacy, which 1.x lacks.
std::uint8_t query_byte(C10dQuery query, C10dProtocol protocol);

// Answers of check and wait.
inline constexpr unsigned char kReady = 0, kNotReady = 1;
inline constexpr unsigned char kStopWaiting = 0, kWaitCanceled = 1;
// What a Validated client sends first: VALIDATE (0) and this number.
inline constexpr std::uint32_t kValidateMagic = 0x3C85F7CE;

// One request's bytes, built field by field; integers little-endian.
class C10dRequest {
 public:
  explicit C10dRequest(std::uint8_t query_type) { bytes_.push_back(query_type); }
  template <typename T>
  C10dRequest& value(T v) {
    // The servers read host order: little-endian on x86 and ARM.
    const std::size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &v, sizeof(T));
    return *this;
  }
  C10dRequest& string(std::string_view s) {
    value<std::uint64_t>(s.size());
    const std::size_t at = bytes_.size();
    bytes_.resize(at + s.size());
    if (!s.empty()) std::memcpy(bytes_.data() + at, s.data(), s.size());
    return *this;
  }
  C10dRequest& keys(const std::vector<std::string>& keys) {
    value<std::uint64_t>(keys.size());
    for (const auto& key : keys) string(key);
    return *this;
  }
  const std::vector<unsigned char>& bytes() const { return bytes_; }

 private:
  std::vector<unsigned char> bytes_;
};

// VALIDATE and the magic number.
C10dRequest validate_request();

template <typename T>
T decode_le(const unsigned char* raw) {
  T v;
  std::memcpy(&v, raw, sizeof(T));
  return v;
}

// On a fresh connection to `address`, finds out whether the server speaks
// Legacy or Validated, changing nothing in the store; the connection is
// spent afterwards. Throws CommError when the answer fits neither (not a
// c10d TCPStore) or nothing answers before `deadline`.
C10dProtocol probe_protocol(tcp::socket& socket, const std::string& address,
                            Clock::time_point deadline);

}  // namespace ringlab::store
