// Fuzz target: the rank-to-rank handshake (transport/tcp/mesh.cpp and the
// proofs of store/token_proof.hpp), live on loopback. Rank 0 of a job of three waits
// in its rendezvous (Mesh::run) for ranks 1 and 2 for as long as the fuzzer
// runs; each input is one connection to its listener. The input's first
// byte chooses the shape: raw bytes; or a hello whose fields are each either
// right (this job's id, world size, destination) or taken from the input,
// then, once rank 0 answers with its hello_ack, a second hello with a proof
// from the input, or raw bytes. Without the token no proof can pass, so
// rank 0 must reject every connection, close it, and go on waiting: a crash,
// a hang, a connection adopted or a rendezvous that ends is a finding.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "fuzz/loopback.hpp"
#include "net/log.hpp"
#include "transport/tcp/framing.hpp"
#include "transport/tcp/mesh.hpp"

using namespace ringlab;
using namespace ringlab::tcp;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kJob = 0x5eed0f0b5eed0f0bULL;
constexpr int kWorld = 3;

struct Rank0 {
  WorldSpec rendezvous;
  std::unique_ptr<Mesh> mesh;
  int port = 0;
  std::atomic<bool> ended{false};
  Rank0() {
    rendezvous.rank = 0;
    rendezvous.world_size = kWorld;
    rendezvous.timeout = kMaxTimeout;
    rendezvous.handshake_timeout = 2s;
    rendezvous.job_token = "fuzz-job-token";
    mesh = std::make_unique<Mesh>(rendezvous, kJob, std::chrono::steady_clock::now() + kMaxTimeout);
    port = mesh->port();
    std::thread([this] {
      try {
        (void)mesh->run({"", "", ""});
      } catch (const std::exception& error) {
        std::fprintf(stderr, "fuzz_handshake: rank 0's rendezvous failed: %s\n", error.what());
      }
      ended = true;
    }).detach();
  }
};

Rank0& rank0() {
  // Every input is rejected with a log line: thousands a second, not worth printing.
  static const bool quiet = (net::set_log_sink([](const std::string&) {}), true);
  (void)quiet;
  // Made once and never destroyed: its thread runs for the whole fuzzing.
  static Rank0* const instance = new Rank0;
  return *instance;
}

template <typename T>
T field(fuzz::Input& input, bool right, T right_value) {
  T raw{};
  const auto bytes = input.take(sizeof(T));
  std::memcpy(&raw, bytes.data(), bytes.size());
  return right ? right_value : raw;
}

std::vector<std::byte> handshake_frame(const FrameHeader& header, const Hello& hello) {
  const auto head = encode_frame_header(header);
  const auto body = encode_hello(hello);
  std::vector<std::byte> out(head.begin(), head.end());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

void say_hello(fuzz::Loopback& connection, fuzz::Input& input) {
  const std::uint8_t right = input.byte();  // which fields are this job's own
  const std::int32_t source = field<std::int32_t>(input, right & 1, 1 + (right >> 7));
  Hello hello;
  hello.world_size = field<std::uint32_t>(input, right & 2, kWorld);
  hello.destination = field<std::int32_t>(input, right & 4, 0);
  hello.job_id = field<std::uint64_t>(input, right & 8, kJob);
  const auto nonce = input.take(kNonceBytes);
  std::copy(nonce.begin(), nonce.end(), hello.nonce.begin());
  const FrameHeader header{FrameKind::Hello, source, 0, kHelloBytes};
  if (!connection.send(handshake_frame(header, hello))) return;

  std::array<std::byte, kFrameHeaderBytes + kHelloBytes> ack{};
  if (!connection.read_exactly(ack.data(), ack.size(), 5s)) return;  // rejected
  // Answered: the hello must have been right in every field that is checked.
  const FrameDecode decoded = decode_frame_header(std::span(ack).first<kFrameHeaderBytes>());
  if (!decoded.header || decoded.header->kind != FrameKind::HelloAck) {
    std::fprintf(stderr, "fuzz_handshake: rank 0 answered a hello with something else\n");
    std::abort();
  }
  if ((right & 0x10) == 0) {
    connection.send(input.rest());
    return;
  }
  // The second hello, the same but with a proof from the input.
  const auto proof = input.take(kProofBytes);
  std::copy(proof.begin(), proof.end(), hello.proof.begin());
  connection.send(handshake_frame(header, hello));
  connection.send(input.rest());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Rank0& r = rank0();
  fuzz::Input input(data, size);
  {
    fuzz::Loopback connection(r.port);
    if ((input.byte() & 1) == 0)
      connection.send(input.rest());
    else
      say_hello(connection, input);
    // Rank 0 rejects within its handshake timeout, and closes.
    connection.finish(10s);
  }
  if (r.ended) {
    std::fprintf(stderr, "fuzz_handshake: rank 0's rendezvous ended on a stranger's input\n");
    std::abort();
  }
  return 0;
}
