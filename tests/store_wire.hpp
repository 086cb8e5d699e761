// A store client that speaks the wire protocol (store/protocol.hpp)
// one step at a time, so a test can stop anywhere a hostile or broken client
// would: after the hello, in the middle of a header, with a body promised and
// never sent, with a wait parked and the connection dropped.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "net/asio.hpp"
#include "store/protocol.hpp"
#include "store/token_proof.hpp"

namespace ringlab::store::testing {

class StoreWire {
 public:
  struct Reply {
    StoreStatus status = StoreStatus::Error;
    std::int64_t number = 0;
    std::vector<std::string> strings;
  };

  explicit StoreWire(int port, std::string job_token = {})
      : socket_(io_), job_token_(std::move(job_token)) {
    socket_.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                   static_cast<unsigned short>(port)));
  }

  // The opening exchange of a ringlab store client (hello, the store's
  // challenge, this client's proof of the job token). Returns false if the
  // store refused it.
  bool hello() {
    const Nonce mine = fresh_nonce();
    request(StoreOp::Hello, {text(mine)});
    const auto challenge = read_reply(std::chrono::seconds(5));
    if (!challenge || challenge->status != StoreStatus::Ok || challenge->strings.size() != 2)
      return false;
    const std::string& theirs = challenge->strings[0];
    const Proof proof = prove(job_token_, kStoreClientProof,
                              {mine, std::as_bytes(std::span(theirs.data(), theirs.size()))});
    request(StoreOp::Auth, {text(proof)});
    const auto welcome = read_reply(std::chrono::seconds(5));
    return welcome && welcome->status == StoreStatus::Ok;
  }

  void send(const void* data, std::size_t size) {
    boost::asio::write(socket_, boost::asio::buffer(data, size));
  }
  void send_header(StoreOp op, std::uint32_t body_length, std::int64_t number = 0) {
    const auto header =
        encode_store_header({true, static_cast<std::uint16_t>(op), body_length, number});
    send(header.data(), header.size());
  }
  void request(StoreOp op, const std::vector<std::string_view>& args, std::int64_t number = 0) {
    const auto body = encode_strings(args);
    send_header(op, static_cast<std::uint32_t>(body.size()), number);
    if (!body.empty()) send(body.data(), body.size());
  }

  // The next reply, or nullopt if the connection ended or `limit` passed first.
  std::optional<Reply> read_reply(std::chrono::milliseconds limit) {
    StoreHeaderBytes header{};
    if (!read_exactly(header.data(), header.size(), limit)) return std::nullopt;
    const StoreDecode decoded = decode_store_header(header, false);
    if (!decoded.header) return std::nullopt;
    std::vector<std::byte> body(decoded.header->body_length);
    if (!read_exactly(body.data(), body.size(), limit)) return std::nullopt;
    auto strings = decode_strings(body);
    if (!strings) return std::nullopt;
    return Reply{static_cast<StoreStatus>(decoded.header->code), decoded.header->number,
                 std::move(*strings)};
  }

  // True once the store has closed the connection (end of stream or reset),
  // false if it is still open after `limit`. Replies before the end are
  // skipped.
  bool closed_within(std::chrono::milliseconds limit) {
    socket_.non_blocking(true);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char sink[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      boost::system::error_code error;
      socket_.read_some(boost::asio::buffer(sink), error);
      if (error == boost::asio::error::would_block) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      if (error) return true;
    }
    return false;
  }

  // Closes at once with a reset (no TIME_WAIT left behind).
  void abort() {
    const linger reset{1, 0};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    boost::system::error_code ignored;
    socket_.close(ignored);
  }
  void close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

 private:
  template <std::size_t N>
  static std::string_view text(const std::array<std::byte, N>& bytes) {
    return {reinterpret_cast<const char*>(bytes.data()), N};
  }

  bool read_exactly(std::byte* out, std::size_t size, std::chrono::milliseconds limit) {
    socket_.non_blocking(true);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::size_t got = 0;
    while (got < size) {
      boost::system::error_code error;
      got += socket_.read_some(boost::asio::buffer(out + got, size - got), error);
      if (error == boost::asio::error::would_block) {
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      if (error) return false;
    }
    return true;
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  std::string job_token_;
};

}  // namespace ringlab::store::testing
