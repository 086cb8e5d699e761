// Fuzz target: the store's server (store/store_server.cpp), live on
// loopback. Each input is one connection. Its first byte chooses how it
// starts: even, the connection first says a correct hello and proves it
// knows the job token, so the rest reaches the request parser and the
// operations; odd, the rest is the first thing the store reads (the hello
// and auth phase). Then the connection is closed and must be closed by the
// store in turn (no hang), and a real client must still be served: a crash,
// a hang or a store that stopped answering is a finding.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "fuzz/loopback.hpp"
#include "net/log.hpp"
#include "store/protocol.hpp"
#include "store/store.hpp"
#include "store/token_proof.hpp"

using namespace ringlab;
using namespace ringlab::store;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view kToken = "fuzz-job-token";

// Small limits and short timers, so that inputs reach them.
StoreLimits small_limits() {
  StoreLimits limits;
  limits.max_request_bytes = 64 << 10;
  limits.max_key_bytes = 64;
  limits.max_total_bytes = 1 << 20;
  limits.max_connections = 8;
  limits.idle_timeout = 2s;
  limits.request_timeout = 2s;
  return limits;
}

struct Server {
  StoreServer store{"127.0.0.1", 0, 2s, small_limits(), std::string(kToken)};
  StoreClient client{"127.0.0.1", store.port(), 5s, std::string(kToken)};
};

Server& server() {
  // Every input is rejected with a log line: thousands a second, not worth printing.
  static const bool quiet = (net::set_log_sink([](const std::string&) {}), true);
  (void)quiet;
  // Made once and never destroyed: its thread serves every input.
  static Server* const instance = new Server;
  return *instance;
}

std::vector<std::byte> request(StoreOp op, const std::vector<std::string_view>& strings) {
  const std::vector<std::byte> body = encode_strings(strings);
  const auto header = encode_store_header(
      {true, static_cast<std::uint16_t>(op), static_cast<std::uint32_t>(body.size()), 0});
  std::vector<std::byte> out(header.begin(), header.end());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::string_view as_text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Hello, the store's challenge, the proof; a store that does not play its
// part is a finding (abort).
void greet(fuzz::Loopback& connection) {
  const Nonce nonce = fresh_nonce();
  connection.send(request(StoreOp::Hello, {as_text(nonce)}));
  StoreHeaderBytes header{};
  if (!connection.read_exactly(header.data(), header.size(), 5s)) {
    std::fprintf(stderr, "fuzz_store: no answer to a correct hello\n");
    std::abort();
  }
  const StoreDecode decoded = decode_store_header(header, false);
  std::vector<std::byte> body(decoded.header ? decoded.header->body_length : 0);
  if (!decoded.header || !connection.read_exactly(body.data(), body.size(), 5s)) std::abort();
  const auto strings = decode_strings(body);
  if (!strings || strings->size() != 2 || (*strings)[0].size() != kNonceBytes) std::abort();
  Nonce server_nonce{};
  std::copy_n(reinterpret_cast<const std::byte*>((*strings)[0].data()), kNonceBytes,
              server_nonce.begin());
  const Proof proof = prove(kToken, kStoreClientProof, {nonce, server_nonce});
  connection.send(request(StoreOp::Auth, {as_text(proof)}));
  if (!connection.read_exactly(header.data(), header.size(), 5s)) {
    std::fprintf(stderr, "fuzz_store: no answer to a correct proof\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Server& s = server();
  fuzz::Input input(data, size);
  {
    fuzz::Loopback connection(s.store.port());
    if ((input.byte() & 1) == 0) greet(connection);
    connection.send(input.rest());
    // A request may park on a missing key until its client leaves, or be
    // read up to the request timeout: the store closes well within this.
    connection.finish(10s);
  }
  // The store still serves a client that plays by the rules.
  try {
    (void)s.client.check({"fuzz"});
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fuzz_store: the store stopped serving: %s\n", error.what());
    std::abort();
  }
  return 0;
}
