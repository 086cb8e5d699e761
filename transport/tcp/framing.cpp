// Encoding and checking of the wire formats documented in framing.hpp. The
// decoders never trust the bytes: each field is checked and the error says
// which one was wrong and what was expected.
#include "transport/tcp/framing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace ringlab::tcp {

namespace {

constexpr char kFrameMagic[4] = {'R', 'L', 'T', 'F'};
constexpr char kRequestMagic[4] = {'R', 'L', 'S', 'Q'};
constexpr char kReplyMagic[4] = {'R', 'L', 'S', 'R'};

template <typename T>
void put(std::byte* out, T value) {
  using U = std::make_unsigned_t<T>;
  auto bits = static_cast<U>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out[i] = static_cast<std::byte>((bits >> (8 * i)) & 0xFF);
}

template <typename T>
T get(const std::byte* in) {
  using U = std::make_unsigned_t<T>;
  U bits = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    bits = static_cast<U>(bits | (static_cast<U>(std::to_integer<unsigned>(in[i])) << (8 * i)));
  return static_cast<T>(bits);
}

bool has_magic(const std::byte* in, const char (&magic)[4]) {
  return std::memcmp(in, magic, 4) == 0;
}

std::string bad_magic(const std::byte* in, const char (&magic)[4]) {
  return "bad magic " + hex_bytes({in, 4}) + " (expected " + std::string(magic, 4) + ")";
}

}  // namespace

std::string hex_bytes(std::span<const std::byte> bytes) {
  std::string out;
  char digits[4];
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(digits, sizeof digits, "%02x", std::to_integer<unsigned>(bytes[i]));
    if (i) out += ' ';
    out += digits;
  }
  return out;
}

// ---- transport frames ------------------------------------------------------

FrameHeaderBytes encode_frame_header(const FrameHeader& header) {
  FrameHeaderBytes out{};
  std::memcpy(out.data(), kFrameMagic, 4);
  put<std::uint16_t>(out.data() + 4, kFrameVersion);
  put<std::uint16_t>(out.data() + 6, static_cast<std::uint16_t>(header.kind));
  put<std::int32_t>(out.data() + 8, header.source);
  put<std::uint32_t>(out.data() + 12, 0);
  put<std::uint64_t>(out.data() + 16, header.tag);
  put<std::uint64_t>(out.data() + 24, header.length);
  return out;
}

FrameDecode decode_frame_header(std::span<const std::byte, kFrameHeaderBytes> bytes) {
  const std::byte* in = bytes.data();
  if (!has_magic(in, kFrameMagic)) return {std::nullopt, bad_magic(in, kFrameMagic)};
  const auto version = get<std::uint16_t>(in + 4);
  if (version != kFrameVersion)
    return {std::nullopt, "unsupported frame version " + std::to_string(version) +
                              " (this build speaks version " + std::to_string(kFrameVersion) +
                              "; are all ranks the same ringlab build?)"};
  const auto kind = get<std::uint16_t>(in + 6);
  if (kind < 1 || kind > 6) return {std::nullopt, "unknown frame kind " + std::to_string(kind)};
  if (get<std::uint32_t>(in + 12) != 0)
    return {std::nullopt, "reserved header field is not zero"};
  FrameHeader header;
  header.kind = static_cast<FrameKind>(kind);
  header.source = get<std::int32_t>(in + 8);
  header.tag = get<std::uint64_t>(in + 16);
  header.length = get<std::uint64_t>(in + 24);
  if (header.kind == FrameKind::Data && header.length > kMaxFrameBytes)
    return {std::nullopt, "absurd payload length " + std::to_string(header.length) +
                              " bytes (the limit is " + std::to_string(kMaxFrameBytes) + ")"};
  if (header.kind == FrameKind::Goodbye && header.length != 0)
    return {std::nullopt, "goodbye frame with payload length " + std::to_string(header.length) +
                              " (expected 0)"};
  if (header.kind == FrameKind::Abort && (header.length < 4 || header.length > 4 + kMaxAbortReason))
    return {std::nullopt, "abort frame with payload length " + std::to_string(header.length) +
                              " (expected 4 to " + std::to_string(4 + kMaxAbortReason) + ")"};
  if (header.kind == FrameKind::Waiting && header.length != kWaitingBytes)
    return {std::nullopt, "waiting frame with payload length " + std::to_string(header.length) +
                              " (expected " + std::to_string(kWaitingBytes) + ")"};
  if ((header.kind == FrameKind::Hello || header.kind == FrameKind::HelloAck) &&
      header.length != kHelloBytes)
    return {std::nullopt, "handshake frame with payload length " + std::to_string(header.length) +
                              " (expected " + std::to_string(kHelloBytes) + ")"};
  return {header, {}};
}

std::array<std::byte, kHelloBytes> encode_hello(const Hello& hello) {
  std::array<std::byte, kHelloBytes> out{};
  put<std::uint32_t>(out.data(), hello.world_size);
  put<std::int32_t>(out.data() + 4, hello.destination);
  put<std::uint64_t>(out.data() + 8, hello.job_id);
  std::memcpy(out.data() + 16, hello.nonce.data(), kNonceBytes);
  std::memcpy(out.data() + 16 + kNonceBytes, hello.proof.data(), kProofBytes);
  return out;
}

Hello decode_hello(std::span<const std::byte, kHelloBytes> bytes) {
  Hello hello{get<std::uint32_t>(bytes.data()), get<std::int32_t>(bytes.data() + 4),
              get<std::uint64_t>(bytes.data() + 8)};
  std::memcpy(hello.nonce.data(), bytes.data() + 16, kNonceBytes);
  std::memcpy(hello.proof.data(), bytes.data() + 16 + kNonceBytes, kProofBytes);
  return hello;
}

std::vector<std::byte> encode_abort(const Abort& abort) {
  const std::size_t reason = std::min(abort.reason.size(), kMaxAbortReason);
  std::vector<std::byte> out(4 + reason);
  put<std::int32_t>(out.data(), abort.culprit);
  std::memcpy(out.data() + 4, abort.reason.data(), reason);
  return out;
}

std::optional<Abort> decode_abort(std::span<const std::byte> payload) {
  if (payload.size() < 4) return std::nullopt;
  Abort abort;
  abort.culprit = get<std::int32_t>(payload.data());
  abort.reason.assign(reinterpret_cast<const char*>(payload.data() + 4), payload.size() - 4);
  return abort;
}

std::vector<std::byte> encode_waiting(const Waiting& waiting) {
  std::vector<std::byte> out(kWaitingBytes);
  put<std::int32_t>(out.data(), waiting.waiting_for);
  put<std::uint32_t>(out.data() + 4, waiting.asking ? 1u : 0u);
  return out;
}

std::optional<Waiting> decode_waiting(std::span<const std::byte> payload) {
  if (payload.size() != kWaitingBytes) return std::nullopt;
  const auto flags = get<std::uint32_t>(payload.data() + 4);
  if (flags > 1) return std::nullopt;
  return Waiting{get<std::int32_t>(payload.data()), flags == 1};
}

// ---- store messages ----------------------------------------------------------

StoreHeaderBytes encode_store_header(const StoreHeader& header) {
  StoreHeaderBytes out{};
  std::memcpy(out.data(), header.request ? kRequestMagic : kReplyMagic, 4);
  put<std::uint16_t>(out.data() + 4, kStoreVersion);
  put<std::uint16_t>(out.data() + 6, header.code);
  put<std::uint32_t>(out.data() + 8, header.body_length);
  put<std::uint32_t>(out.data() + 12, 0);
  put<std::int64_t>(out.data() + 16, header.number);
  return out;
}

StoreDecode decode_store_header(std::span<const std::byte, kStoreHeaderBytes> bytes,
                                bool expect_request) {
  const std::byte* in = bytes.data();
  const auto& magic = expect_request ? kRequestMagic : kReplyMagic;
  if (!has_magic(in, magic)) return {std::nullopt, bad_magic(in, magic)};
  const auto version = get<std::uint16_t>(in + 4);
  if (version != kStoreVersion)
    return {std::nullopt, "unsupported store protocol version " + std::to_string(version) +
                              " (this build speaks version " + std::to_string(kStoreVersion) +
                              ")"};
  StoreHeader header;
  header.request = expect_request;
  header.code = get<std::uint16_t>(in + 6);
  header.body_length = get<std::uint32_t>(in + 8);
  header.number = get<std::int64_t>(in + 16);
  if (get<std::uint32_t>(in + 12) != 0)
    return {std::nullopt, "reserved header field is not zero"};
  if (expect_request &&
      (header.code < 1 || header.code > static_cast<std::uint16_t>(StoreOp::Auth)))
    return {std::nullopt, "unknown store operation " + std::to_string(header.code)};
  if (!expect_request && header.code > static_cast<std::uint16_t>(StoreStatus::Closing))
    return {std::nullopt, "unknown store reply status " + std::to_string(header.code)};
  if (header.body_length > kMaxStoreBody)
    return {std::nullopt, "absurd body length " + std::to_string(header.body_length) +
                              " bytes (the limit is " + std::to_string(kMaxStoreBody) + ")"};
  return {header, {}};
}

std::vector<std::byte> encode_strings(const std::vector<std::string_view>& strings) {
  std::size_t total = 0;
  for (auto s : strings) total += 4 + s.size();
  std::vector<std::byte> body(total);
  std::byte* out = body.data();
  for (auto s : strings) {
    put<std::uint32_t>(out, static_cast<std::uint32_t>(s.size()));
    if (!s.empty()) std::memcpy(out + 4, s.data(), s.size());
    out += 4 + s.size();
  }
  return body;
}

std::optional<std::vector<std::string>> decode_strings(std::span<const std::byte> body) {
  std::vector<std::string> strings;
  std::size_t at = 0;
  while (at < body.size()) {
    if (body.size() - at < 4) return std::nullopt;
    const std::size_t length = get<std::uint32_t>(body.data() + at);
    at += 4;
    if (body.size() - at < length) return std::nullopt;
    strings.emplace_back(reinterpret_cast<const char*>(body.data() + at), length);
    at += length;
  }
  return strings;
}

const char* store_op_name(std::uint16_t op) {
  switch (static_cast<StoreOp>(op)) {
    case StoreOp::Hello: return "hello";
    case StoreOp::Set: return "set";
    case StoreOp::Get: return "get";
    case StoreOp::Add: return "add";
    case StoreOp::Wait: return "wait";
    case StoreOp::CompareSet: return "compare_set";
    case StoreOp::Check: return "check";
    case StoreOp::Delete: return "delete";
    case StoreOp::NumKeys: return "num_keys";
    case StoreOp::Auth: return "auth";
  }
  return "unknown";
}

}  // namespace ringlab::tcp
