// Encoding and checking of the wire formats documented in framing.hpp. The
// decoders never trust the bytes: each field is checked and the error says
// which one was wrong and what was expected.
#include "transport/tcp/framing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "net/bytes.hpp"

namespace ringlab::tcp {

namespace {

constexpr char kFrameMagic[4] = {'R', 'L', 'T', 'F'};

using net::get_le;
using net::put_le;

bool has_magic(const std::byte* in, const char (&magic)[4]) {
  return std::memcmp(in, magic, 4) == 0;
}

std::string bad_magic(const std::byte* in, const char (&magic)[4]) {
  return "bad magic " + hex_bytes({in, 4}) + " (expected " + std::string(magic, 4) + ")";
}

}  // namespace

// ---- transport frames ------------------------------------------------------

std::string element_problem(int rank, int src, Tag tag, std::uint32_t expected, std::uint32_t got) {
  if (expected == kUntyped || got == kUntyped || expected == got) return "";
  return dtype_mismatch_message(rank, src, tag, element_dtype(expected), element_dtype(got));
}

FrameHeaderBytes encode_frame_header(const FrameHeader& header) {
  FrameHeaderBytes out{};
  std::memcpy(out.data(), kFrameMagic, 4);
  put_le<std::uint16_t>(out.data() + 4, kFrameVersion);
  put_le<std::uint16_t>(out.data() + 6, static_cast<std::uint16_t>(header.kind));
  put_le<std::int32_t>(out.data() + 8, header.source);
  put_le<std::uint32_t>(out.data() + 12, header.element);
  put_le<std::uint64_t>(out.data() + 16, header.tag);
  put_le<std::uint64_t>(out.data() + 24, header.length);
  return out;
}

FrameDecode decode_frame_header(std::span<const std::byte, kFrameHeaderBytes> bytes) {
  const std::byte* in = bytes.data();
  if (!has_magic(in, kFrameMagic)) return {std::nullopt, bad_magic(in, kFrameMagic)};
  const auto version = get_le<std::uint16_t>(in + 4);
  if (version != kFrameVersion)
    return {std::nullopt, "unsupported frame version " + std::to_string(version) +
                              " (this build speaks version " + std::to_string(kFrameVersion) +
                              "; are all ranks the same ringlab build?)"};
  const auto kind = get_le<std::uint16_t>(in + 6);
  if (kind < 1 || kind > 6) return {std::nullopt, "unknown frame kind " + std::to_string(kind)};
  const auto element = get_le<std::uint32_t>(in + 12);
  if (element > std::size(kAllDTypes))
    return {std::nullopt, "unknown element type " + std::to_string(element) + " (0 to " +
                              std::to_string(std::size(kAllDTypes)) + ")"};
  if (element != kUntyped && kind != static_cast<std::uint16_t>(FrameKind::Data))
    return {std::nullopt, "element type " + std::to_string(element) +
                              " on a frame that is not data (expected 0)"};
  FrameHeader header;
  header.kind = static_cast<FrameKind>(kind);
  header.element = element;
  header.source = get_le<std::int32_t>(in + 8);
  header.tag = get_le<std::uint64_t>(in + 16);
  header.length = get_le<std::uint64_t>(in + 24);
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
  put_le<std::uint32_t>(out.data(), hello.world_size);
  put_le<std::int32_t>(out.data() + 4, hello.destination);
  put_le<std::uint64_t>(out.data() + 8, hello.job_id);
  std::memcpy(out.data() + 16, hello.nonce.data(), kNonceBytes);
  std::memcpy(out.data() + 16 + kNonceBytes, hello.proof.data(), kProofBytes);
  return out;
}

Hello decode_hello(std::span<const std::byte, kHelloBytes> bytes) {
  Hello hello{get_le<std::uint32_t>(bytes.data()), get_le<std::int32_t>(bytes.data() + 4),
              get_le<std::uint64_t>(bytes.data() + 8)};
  std::memcpy(hello.nonce.data(), bytes.data() + 16, kNonceBytes);
  std::memcpy(hello.proof.data(), bytes.data() + 16 + kNonceBytes, kProofBytes);
  return hello;
}

std::vector<std::byte> encode_abort(const Abort& abort) {
  const std::size_t reason = std::min(abort.reason.size(), kMaxAbortReason);
  std::vector<std::byte> out(4 + reason);
  put_le<std::int32_t>(out.data(), abort.culprit);
  std::memcpy(out.data() + 4, abort.reason.data(), reason);
  return out;
}

std::optional<Abort> decode_abort(std::span<const std::byte> payload) {
  if (payload.size() < 4) return std::nullopt;
  Abort abort;
  abort.culprit = get_le<std::int32_t>(payload.data());
  abort.reason.assign(reinterpret_cast<const char*>(payload.data() + 4), payload.size() - 4);
  return abort;
}

std::vector<std::byte> encode_waiting(const Waiting& waiting) {
  std::vector<std::byte> out(kWaitingBytes);
  put_le<std::int32_t>(out.data(), waiting.waiting_for);
  put_le<std::uint32_t>(out.data() + 4, waiting.asking ? 1u : 0u);
  return out;
}

std::optional<Waiting> decode_waiting(std::span<const std::byte> payload) {
  if (payload.size() != kWaitingBytes) return std::nullopt;
  const auto flags = get_le<std::uint32_t>(payload.data() + 4);
  if (flags > 1) return std::nullopt;
  return Waiting{get_le<std::int32_t>(payload.data()), flags == 1};
}

}  // namespace ringlab::tcp
