// Encoding and checking of the store's wire format (protocol.hpp). The
// decoders never trust the bytes: each field is checked and the error says
// which one was wrong and what was expected.
#include "store/protocol.hpp"

#include <cstring>

#include "net/bytes.hpp"

namespace ringlab::store {

using net::get_le;
using net::hex_bytes;
using net::put_le;

namespace {

constexpr char kRequestMagic[4] = {'R', 'L', 'S', 'Q'};
constexpr char kReplyMagic[4] = {'R', 'L', 'S', 'R'};

bool has_magic(const std::byte* in, const char (&magic)[4]) {
  return std::memcmp(in, magic, 4) == 0;
}

std::string bad_magic(const std::byte* in, const char (&magic)[4]) {
  return "bad magic " + hex_bytes({in, 4}) + " (expected " + std::string(magic, 4) + ")";
}

}  // namespace

StoreHeaderBytes encode_store_header(const StoreHeader& header) {
  StoreHeaderBytes out{};
  std::memcpy(out.data(), header.request ? kRequestMagic : kReplyMagic, 4);
  put_le<std::uint16_t>(out.data() + 4, kStoreVersion);
  put_le<std::uint16_t>(out.data() + 6, header.code);
  put_le<std::uint32_t>(out.data() + 8, header.body_length);
  put_le<std::uint32_t>(out.data() + 12, 0);
  put_le<std::int64_t>(out.data() + 16, header.number);
  return out;
}

StoreDecode decode_store_header(std::span<const std::byte, kStoreHeaderBytes> bytes,
                                bool expect_request) {
  const std::byte* in = bytes.data();
  const auto& magic = expect_request ? kRequestMagic : kReplyMagic;
  if (!has_magic(in, magic)) return {std::nullopt, bad_magic(in, magic)};
  const auto version = get_le<std::uint16_t>(in + 4);
  if (version != kStoreVersion)
    return {std::nullopt, "unsupported store protocol version " + std::to_string(version) +
                              " (this build speaks version " + std::to_string(kStoreVersion) +
                              ")"};
  StoreHeader header;
  header.request = expect_request;
  header.code = get_le<std::uint16_t>(in + 6);
  header.body_length = get_le<std::uint32_t>(in + 8);
  header.number = get_le<std::int64_t>(in + 16);
  if (get_le<std::uint32_t>(in + 12) != 0)
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
    put_le<std::uint32_t>(out, static_cast<std::uint32_t>(s.size()));
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
    const std::size_t length = get_le<std::uint32_t>(body.data() + at);
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

}  // namespace ringlab::store
