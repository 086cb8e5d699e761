#include "store/c10d_wire.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace ringlab::store {

std::uint8_t query_byte(C10dQuery query, C10dProtocol protocol) {
  // torch 1.x-2.1: SET, COMPARE_SET, GET, ADD, CHECK, WAIT, GETNUMKEYS,
  // WATCH_KEY, DELETE_KEY (2.0-2.1 add APPEND, MULTI_GET, MULTI_SET,
  // CANCEL_WAIT after them; 1.x servers close the connection on those).
  // torch 2.2 on: VALIDATE, SET, COMPARE_SET, GET, ADD, CHECK, WAIT,
  // GETNUMKEYS, DELETE_KEY, APPEND, MULTI_GET, MULTI_SET, CANCEL_WAIT, ...
  const bool validated = protocol == C10dProtocol::Validated;
  switch (query) {
    case C10dQuery::Set: return validated ? 1 : 0;
    case C10dQuery::CompareSet: return validated ? 2 : 1;
    case C10dQuery::Get: return validated ? 3 : 2;
    case C10dQuery::Add: return validated ? 4 : 3;
    case C10dQuery::Check: return validated ? 5 : 4;
    case C10dQuery::Wait: return validated ? 6 : 5;
    case C10dQuery::NumKeys: return validated ? 7 : 6;
    case C10dQuery::DeleteKey: return 8;  // the same in both (WATCH_KEY left, VALIDATE came)
    case C10dQuery::CancelWait:
      if (validated) return 12;
      throw std::invalid_argument("a torch 1.x c10d store cannot cancel a wait");
  }
  throw std::invalid_argument("unknown c10d query");
}

C10dRequest validate_request() {
  C10dRequest request(0);
  request.value<std::uint32_t>(kValidateMagic);
  return request;
}

namespace {

// How long the probe's first byte may go unanswered before the second step,
// and how long a first answer byte is given company before it counts as one.
constexpr Duration kQuiet{50};
constexpr Duration kSettle{100};

Clock::time_point earliest(Clock::time_point a, Duration from_now) {
  return std::min(a, Clock::now() + from_now);
}

// Sends every byte; false if the peer closed the connection first.
bool send_all(int fd, const unsigned char* data, std::size_t size, Clock::time_point deadline,
              const std::string& address) {
  while (size > 0) {
    pollfd writable{fd, POLLOUT, 0};
    if (::poll(&writable, 1, static_cast<int>(ms_left(deadline))) <= 0)
      throw CommError("the c10d store at " + address + " did not take the protocol probe in time");
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads into buf until `want` bytes came, the peer closed (closed = true) or
// `until` passed; returns how many bytes came.
std::size_t read_some_until(int fd, unsigned char* buf, std::size_t want, Clock::time_point until,
                            bool& closed) {
  std::size_t got = 0;
  while (got < want && !closed) {
    pollfd readable{fd, POLLIN, 0};
    const int ready = ::poll(&readable, 1, static_cast<int>(ms_left(until)));
    if (ready == 0) break;
    if (ready < 0) {
      if (errno == EINTR) continue;
      closed = true;
      break;
    }
    const ssize_t n = ::recv(fd, buf + got, want - got, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (n <= 0) closed = true;
    else got += static_cast<std::size_t>(n);
  }
  return got;
}

}  // namespace

// Step 1 sends the byte 6. A Legacy server reads GETNUMKEYS and answers an
// 8-byte count. A Validated server wants VALIDATE first: the classic server
// (TCPStoreBackend.cpp) closes the connection; the libuv server (the default
// since 2.4) leaves the byte unread until more arrives. Step 2, after a
// silence, sends eight zero bytes: the libuv server now reads 6 and a count
// of 0 as WAIT for no keys, and answers one byte, 0, at once. A Legacy server
// that was merely slow answers its count, then reads the zeros as the start
// of a SET that never completes: the connection closes first, and a 1.x
// server drops a request cut short with its connection. Neither step changes
// a key.
C10dProtocol probe_protocol(tcp::socket& socket, const std::string& address,
                            Clock::time_point deadline) {
  const int fd = socket.native_handle();
  const unsigned char first[1] = {6};
  if (!send_all(fd, first, 1, deadline, address))
    throw CommError("the server at " + address +
                    " closed the connection before the c10d protocol probe: is MASTER_PORT the "
                    "port of a c10d TCPStore?");
  unsigned char answer[8] = {};
  bool closed = false;
  std::size_t got = read_some_until(fd, answer, 8, earliest(deadline, kQuiet), closed);
  if (got == 0 && closed) return C10dProtocol::Validated;
  if (got == 0) {
    const unsigned char zeros[8] = {};
    // A classic Validated server may close only now.
    if (!send_all(fd, zeros, 8, deadline, address)) return C10dProtocol::Validated;
    got = read_some_until(fd, answer, 1, deadline, closed);
    if (got == 0 && closed) return C10dProtocol::Validated;
    if (got == 0)
      throw CommError("the server at " + address +
                      " did not answer the c10d protocol probe: is MASTER_PORT the port of a "
                      "c10d TCPStore (torchrun's agent store)?");
    got += read_some_until(fd, answer + 1, 7, earliest(deadline, kSettle), closed);
    if (got == 1 && answer[0] == kStopWaiting) return C10dProtocol::Validated;
  } else if (got < 8) {
    got += read_some_until(fd, answer + got, 8 - got, deadline, closed);
  }
  if (got == 8) return C10dProtocol::Legacy;
  throw CommError("the server at " + address + " answered the c10d protocol probe with " +
                  std::to_string(got) +
                  " byte(s), which no c10d TCPStore does: is MASTER_PORT the port of a c10d "
                  "TCPStore (torchrun's agent store)?");
}

}  // namespace ringlab::store
