// Fuzz target: the wire decoders of the TCP transport (transport/tcp/framing.hpp)
// and of the store (store/protocol.hpp).
// The input is a frame header and what follows it. Beyond not crashing, each
// decoder must agree with its encoder: whatever decodes encodes back to the
// very same bytes, so no two byte strings mean the same message and nothing
// a decoder accepts is dropped on the way.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "store/protocol.hpp"
#include "transport/tcp/framing.hpp"

using namespace ringlab::store;
using namespace ringlab::tcp;

namespace {

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_frame: %s\n", what);
  std::abort();
}

bool same(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

void frame_header(std::span<const std::byte, kFrameHeaderBytes> bytes,
                  std::span<const std::byte> payload) {
  const FrameDecode decoded = decode_frame_header(bytes);
  require(decoded.header.has_value() == decoded.error.empty(),
          "a frame header decoded with an error, or failed without one");
  if (!decoded.header) return;
  const FrameHeader& header = *decoded.header;
  require(same(encode_frame_header(header), bytes), "frame header does not encode back the same");
  require(header.kind != FrameKind::Data || header.length <= kMaxFrameBytes,
          "a data frame past kMaxFrameBytes was accepted");
  if (payload.size() < header.length) return;
  payload = payload.first(static_cast<std::size_t>(header.length));
  switch (header.kind) {
    case FrameKind::Hello:
    case FrameKind::HelloAck: {
      const Hello hello = decode_hello(payload.first<kHelloBytes>());
      require(same(encode_hello(hello), payload), "hello does not encode back the same");
      break;
    }
    case FrameKind::Abort: {
      const auto abort = decode_abort(payload);
      require(abort.has_value(), "an abort frame the header allows did not decode");
      require(same(encode_abort(*abort), payload), "abort does not encode back the same");
      break;
    }
    case FrameKind::Waiting: {
      const auto waiting = decode_waiting(payload);
      if (waiting) require(same(encode_waiting(*waiting), payload), "waiting does not round-trip");
      break;
    }
    case FrameKind::Data:
    case FrameKind::Goodbye:
      break;
  }
}

void store_message(std::span<const std::byte, kStoreHeaderBytes> bytes,
                   std::span<const std::byte> body) {
  for (const bool request : {true, false}) {
    const StoreDecode decoded = decode_store_header(bytes, request);
    require(decoded.header.has_value() == decoded.error.empty(),
            "a store header decoded with an error, or failed without one");
    if (!decoded.header) continue;
    require(decoded.header->body_length <= kMaxStoreBody, "a store body past kMaxStoreBody");
    require(same(encode_store_header(*decoded.header), bytes),
            "store header does not encode back the same");
    (void)store_op_name(decoded.header->code);
  }
  const auto strings = decode_strings(body);
  if (!strings) return;
  const std::vector<std::string_view> views(strings->begin(), strings->end());
  require(same(encode_strings(views), body), "store strings do not encode back the same");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data), size);
  // Payload decoders on any length, header or not.
  if (const auto abort = decode_abort(input))
    require(abort->reason.size() + 4 == input.size(), "abort lost bytes");
  (void)decode_waiting(input);
  (void)hex_bytes(input.first(std::min<std::size_t>(input.size(), 16)));
  if (size >= kFrameHeaderBytes)
    frame_header(input.first<kFrameHeaderBytes>(), input.subspan(kFrameHeaderBytes));
  if (size >= kStoreHeaderBytes)
    store_message(input.first<kStoreHeaderBytes>(), input.subspan(kStoreHeaderBytes));
  return 0;
}
