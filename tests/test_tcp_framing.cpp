// The TCP transport's wire format: the byte layout documented in
// transport/tcp/framing.hpp (checked byte by byte against that table, not
// against the encoder), round trips, and the rejection of garbage.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "transport/tcp/framing.hpp"

using namespace ringlab;
using namespace ringlab::tcp;

namespace {
std::uint64_t le(const std::byte* at, int size) {
  std::uint64_t value = 0;
  for (int i = size - 1; i >= 0; --i) value = (value << 8) | std::to_integer<std::uint64_t>(at[i]);
  return value;
}
FrameHeaderBytes valid_data_header() {
  return encode_frame_header({FrameKind::Data, 3, 77, 1024});
}
}  // namespace

TEST_SUITE("tcp_framing") {

TEST_CASE("a data frame header has the documented layout") {
  const FrameHeaderBytes bytes =
      encode_frame_header({FrameKind::Data, 5, 0x0102030405060708ull, 0x1122334455ull});
  CHECK(bytes.size() == 32);
  CHECK(std::memcmp(bytes.data(), "RLTF", 4) == 0);
  CHECK(le(bytes.data() + 4, 2) == 2);  // version
  CHECK(le(bytes.data() + 6, 2) == 1);  // kind: data
  CHECK(le(bytes.data() + 8, 4) == 5);  // source
  CHECK(le(bytes.data() + 12, 4) == 0);  // element: bytes, not said
  CHECK(le(bytes.data() + 16, 8) == 0x0102030405060708ull);
  CHECK(le(bytes.data() + 24, 8) == 0x1122334455ull);
}

TEST_CASE("a data frame's element field: 1 + the dtype's row in ops/dtype.hpp") {
  // The table's order, written out (1 = bool ... 10 = float64), not taken from element_code.
  const std::pair<DType, std::uint64_t> rows[] = {
      {DType::Bool, 1},     {DType::UInt8, 2},   {DType::Int8, 3},     {DType::Int16, 4},
      {DType::Int32, 5},    {DType::Int64, 6},   {DType::Float16, 7},  {DType::BFloat16, 8},
      {DType::Float32, 9},  {DType::Float64, 10}};
  for (const auto& [dtype, code] : rows) {
    const FrameHeaderBytes bytes =
        encode_frame_header({FrameKind::Data, 1, 2, 8, element_code(dtype)});
    CHECK(le(bytes.data() + 12, 4) == code);
    const FrameDecode decoded = decode_frame_header(bytes);
    REQUIRE_MESSAGE(decoded.header, decoded.error);
    CHECK(element_dtype(decoded.header->element) == dtype);
  }
  CHECK(element_problem(0, 1, 5, element_code(DType::Float32), element_code(DType::Float32)) == "");
  CHECK(element_problem(0, 1, 5, kUntyped, element_code(DType::Float32)) == "");
  CHECK(element_problem(0, 1, 5, element_code(DType::Int32), kUntyped) == "");
  const std::string wrong =
      element_problem(0, 1, 5, element_code(DType::Int32), element_code(DType::Float32));
  CHECK(wrong.find("rank 0 expected int32 elements from rank 1") == 0);
  CHECK(wrong.find("but the message holds float32") != std::string::npos);
}

TEST_CASE("headers round trip, including the largest tag and a negative-looking source") {
  for (const FrameHeader& header :
       {FrameHeader{FrameKind::Data, 0, 0, 0}, FrameHeader{FrameKind::Data, 1000, ~Tag{0}, kMaxFrameBytes},
        FrameHeader{FrameKind::Hello, 7, 0, kHelloBytes},
        FrameHeader{FrameKind::HelloAck, 2, 0, kHelloBytes}, FrameHeader{FrameKind::Goodbye, 3, 0, 0},
        FrameHeader{FrameKind::Abort, 1, 0, 4 + kMaxAbortReason}}) {
    const FrameDecode decoded = decode_frame_header(encode_frame_header(header));
    REQUIRE_MESSAGE(decoded.header, decoded.error);
    CHECK(decoded.header->kind == header.kind);
    CHECK(decoded.header->source == header.source);
    CHECK(decoded.header->tag == header.tag);
    CHECK(decoded.header->length == header.length);
  }
}

TEST_CASE("garbage headers are rejected, saying what is wrong") {
  SUBCASE("an HTTP request: bad magic, with the bytes seen") {
    FrameHeaderBytes bytes{};
    std::memcpy(bytes.data(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n0123", 32);
    const FrameDecode decoded = decode_frame_header(bytes);
    CHECK_FALSE(decoded.header);
    CHECK(decoded.error == "bad magic 47 45 54 20 (expected RLTF)");
  }
  SUBCASE("another version") {
    FrameHeaderBytes bytes = valid_data_header();
    bytes[4] = std::byte{1};  // a build from before the element field
    const FrameDecode decoded = decode_frame_header(bytes);
    CHECK_FALSE(decoded.header);
    CHECK(decoded.error ==
          "unsupported frame version 1 (this build speaks version 2; are all ranks the same "
          "ringlab build?)");
  }
  SUBCASE("an unknown kind") {
    FrameHeaderBytes bytes = valid_data_header();
    bytes[6] = std::byte{9};
    CHECK(decode_frame_header(bytes).error == "unknown frame kind 9");
  }
  SUBCASE("an element type past the table") {
    FrameHeaderBytes bytes = valid_data_header();
    bytes[12] = std::byte{11};
    CHECK(decode_frame_header(bytes).error == "unknown element type 11 (0 to 10)");
    bytes[12] = std::byte{0};
    bytes[13] = std::byte{1};
    CHECK(decode_frame_header(bytes).error == "unknown element type 256 (0 to 10)");
  }
  SUBCASE("an element type on a frame that is not data") {
    FrameHeaderBytes bytes = encode_frame_header({FrameKind::Goodbye, 0, 0, 0});
    bytes[12] = std::byte{9};
    CHECK(decode_frame_header(bytes).error ==
          "element type 9 on a frame that is not data (expected 0)");
  }
  SUBCASE("an absurd length") {
    const FrameDecode decoded =
        decode_frame_header(encode_frame_header({FrameKind::Data, 0, 0, kMaxFrameBytes + 1}));
    CHECK_FALSE(decoded.header);
    CHECK(decoded.error.find("absurd payload length 17179869185 bytes") == 0);
  }
  SUBCASE("a handshake frame whose payload is not a hello") {
    const FrameDecode decoded = decode_frame_header(encode_frame_header({FrameKind::Hello, 0, 0, 4096}));
    CHECK_FALSE(decoded.header);
    CHECK(decoded.error == "handshake frame with payload length 4096 (expected 64)");
  }
}

TEST_CASE("goodbye and abort frames: lengths outside their layout are rejected") {
  FrameDecode decoded = decode_frame_header(encode_frame_header({FrameKind::Goodbye, 0, 0, 1}));
  CHECK_FALSE(decoded.header);
  CHECK(decoded.error == "goodbye frame with payload length 1 (expected 0)");
  decoded = decode_frame_header(encode_frame_header({FrameKind::Abort, 0, 0, 3}));
  CHECK_FALSE(decoded.header);
  CHECK(decoded.error == "abort frame with payload length 3 (expected 4 to 1028)");
  decoded = decode_frame_header(encode_frame_header({FrameKind::Abort, 0, 0, 1029}));
  CHECK_FALSE(decoded.header);
  decoded = decode_frame_header(encode_frame_header({FrameKind::Waiting, 0, 0, 9}));
  CHECK_FALSE(decoded.header);
  CHECK(decoded.error == "waiting frame with payload length 9 (expected 8)");
  FrameHeaderBytes bytes = valid_data_header();
  bytes[6] = std::byte{7};
  CHECK(decode_frame_header(bytes).error == "unknown frame kind 7");
}

TEST_CASE("a waiting payload has the documented layout and round trips") {
  const FrameHeaderBytes header = encode_frame_header({FrameKind::Waiting, 3, 0, kWaitingBytes});
  CHECK(le(header.data() + 6, 2) == 6);
  REQUIRE(decode_frame_header(header).header);
  const std::vector<std::byte> bytes = encode_waiting({2, true});
  REQUIRE(bytes.size() == 8);
  CHECK(le(bytes.data(), 4) == 2);
  CHECK(le(bytes.data() + 4, 4) == 1);
  const auto asking = decode_waiting(bytes);
  REQUIRE(asking);
  CHECK(asking->waiting_for == 2);
  CHECK(asking->asking);
  const auto answer = decode_waiting(encode_waiting({-1, false}));
  REQUIRE(answer);
  CHECK(answer->waiting_for == -1);
  CHECK_FALSE(answer->asking);
  CHECK(le(encode_waiting({-1, false}).data(), 4) == 0xFFFFFFFFu);
  std::vector<std::byte> unknown_flag = bytes;
  unknown_flag[4] = std::byte{2};
  CHECK_FALSE(decode_waiting(unknown_flag));
  CHECK_FALSE(decode_waiting(std::span(bytes).first(7)));
}

TEST_CASE("an abort payload has the documented layout, round trips and is cut to its limit") {
  const std::vector<std::byte> bytes = encode_abort({2, "rank 1: gone"});
  REQUIRE(bytes.size() == 4 + 12);
  CHECK(le(bytes.data(), 4) == 2);
  CHECK(std::memcmp(bytes.data() + 4, "rank 1: gone", 12) == 0);
  const auto abort = decode_abort(bytes);
  REQUIRE(abort);
  CHECK(abort->culprit == 2);
  CHECK(abort->reason == "rank 1: gone");
  CHECK(encode_abort({0, std::string(5000, 'x')}).size() == 4 + kMaxAbortReason);
  CHECK_FALSE(decode_abort(std::span(bytes).first(3)));
}

TEST_CASE("a hello has the documented layout and round trips") {
  Hello sent{4, 2, 0xAABBCCDDEEFF0011ull};
  for (std::size_t i = 0; i < kNonceBytes; ++i) sent.nonce[i] = static_cast<std::byte>(0x10 + i);
  for (std::size_t i = 0; i < kProofBytes; ++i) sent.proof[i] = static_cast<std::byte>(0x80 + i);
  const auto bytes = encode_hello(sent);
  CHECK(bytes.size() == 64);
  CHECK(le(bytes.data(), 4) == 4);
  CHECK(le(bytes.data() + 4, 4) == 2);
  CHECK(le(bytes.data() + 8, 8) == 0xAABBCCDDEEFF0011ull);
  CHECK(std::to_integer<int>(bytes[16]) == 0x10);  // the nonce
  CHECK(std::to_integer<int>(bytes[31]) == 0x1f);
  CHECK(std::to_integer<int>(bytes[32]) == 0x80);  // the proof
  CHECK(std::to_integer<int>(bytes[63]) == 0x9f);
  const Hello hello = decode_hello(bytes);
  CHECK(hello.world_size == 4);
  CHECK(hello.destination == 2);
  CHECK(hello.job_id == 0xAABBCCDDEEFF0011ull);
  CHECK(hello.nonce == sent.nonce);
  CHECK(hello.proof == sent.proof);
}

}  // TEST_SUITE
