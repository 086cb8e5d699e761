// The store's wire format: the byte layout documented in store/protocol.hpp
// (checked byte by byte against that table, not against the encoder), round
// trips, and the rejection of garbage.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "store/protocol.hpp"

using namespace ringlab;
using namespace ringlab::store;

namespace {
std::uint64_t le(const std::byte* at, int size) {
  std::uint64_t value = 0;
  for (int i = size - 1; i >= 0; --i) value = (value << 8) | std::to_integer<std::uint64_t>(at[i]);
  return value;
}
}  // namespace

TEST_SUITE("store_protocol") {

TEST_CASE("store headers: layout, round trip, and garbage") {
  const auto bytes = encode_store_header({true, static_cast<std::uint16_t>(StoreOp::Add), 12, -5});
  CHECK(std::memcmp(bytes.data(), "RLSQ", 4) == 0);
  CHECK(le(bytes.data() + 4, 2) == 3);  // version 3: the job token's proofs
  CHECK(le(bytes.data() + 6, 2) == 4);  // add
  CHECK(le(bytes.data() + 8, 4) == 12);
  CHECK(le(bytes.data() + 16, 8) == static_cast<std::uint64_t>(-5));
  const StoreDecode decoded = decode_store_header(bytes, true);
  REQUIRE(decoded.header);
  CHECK(decoded.header->code == 4);
  CHECK(decoded.header->body_length == 12);
  CHECK(decoded.header->number == -5);

  // A reply is not a request, and vice versa.
  CHECK(decode_store_header(bytes, false).error == "bad magic 52 4c 53 51 (expected RLSR)");
  const auto reply = encode_store_header({false, 0, 0, 0});
  CHECK(std::memcmp(reply.data(), "RLSR", 4) == 0);
  CHECK(decode_store_header(reply, false).header);
  CHECK(decode_store_header(encode_store_header({false, 3, 0, 0}), false).header);  // closing
  CHECK(decode_store_header(encode_store_header({false, 4, 0, 0}), false).error ==
        "unknown store reply status 4");

  auto absurd = encode_store_header({true, 2, kMaxStoreBody + 1, 0});
  CHECK(decode_store_header(absurd, true).error.find("absurd body length") == 0);
  auto unknown = encode_store_header({true, 42, 0, 0});
  CHECK(decode_store_header(unknown, true).error == "unknown store operation 42");
}

TEST_CASE("store bodies: length-prefixed strings, binary-safe, exact") {
  const std::string binary("a\0b", 3);
  const auto body = encode_strings({"key", binary, ""});
  CHECK(body.size() == (4 + 3) + (4 + 3) + 4);
  CHECK(le(body.data(), 4) == 3);
  const auto strings = decode_strings(body);
  REQUIRE(strings);
  CHECK(*strings == std::vector<std::string>{"key", binary, ""});
  // A body cut short, or with a length running past its end, is refused.
  CHECK_FALSE(decode_strings(std::span(body).first(body.size() - 1)));
  CHECK_FALSE(decode_strings(std::span(body).first(2)));
  CHECK(decode_strings({})->empty());
}

}  // TEST_SUITE
