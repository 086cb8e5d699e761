#include "transport/tcp/rendezvous_watch.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <span>
#include <vector>

#include "transport/tcp/framing.hpp"

namespace ringlab::tcp {

ConnectionNews look_at_connection(int fd) {
  pollfd watched{fd, POLLIN, 0};
  if (::poll(&watched, 1, 0) <= 0) return {};
  std::array<std::byte, kFrameHeaderBytes + 4 + kMaxAbortReason> bytes;
  ssize_t n;
  do n = ::recv(fd, bytes.data(), bytes.size(), MSG_PEEK | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n == 0) return {ConnectionNews::Kind::Closed, -1, "end of stream"};
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {};
    return {ConnectionNews::Kind::Closed, -1, std::strerror(errno)};
  }
  const auto got = static_cast<std::size_t>(n);
  if (got < kFrameHeaderBytes) return {};  // the rest of the header comes with the next look
  const FrameDecode decoded = decode_frame_header(
      std::span<const std::byte, kFrameHeaderBytes>(bytes.data(), kFrameHeaderBytes));
  if (!decoded.header || decoded.header->kind != FrameKind::Abort)
    return {ConnectionNews::Kind::Talking, -1, {}};  // the engine will judge it
  const std::size_t total = kFrameHeaderBytes + decoded.header->length;
  if (got < total) return {};
  // Left in the socket: if this rank goes on after all, the engine reads it.
  const auto abort =
      decode_abort(std::span(bytes).subspan(kFrameHeaderBytes, total - kFrameHeaderBytes));
  if (!abort) return {ConnectionNews::Kind::Closed, -1, "a garbled abort frame"};
  return {ConnectionNews::Kind::Aborted, abort->culprit, abort->reason};
}

void send_abort(int fd, int rank, int culprit, const std::string& why) {
  const std::vector<std::byte> payload = encode_abort({culprit, why});
  const FrameHeaderBytes header =
      encode_frame_header({FrameKind::Abort, rank, 0, static_cast<std::uint64_t>(payload.size())});
  std::vector<std::byte> frame(header.begin(), header.end());
  frame.insert(frame.end(), payload.begin(), payload.end());
  ssize_t n;
  do n = ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
}

std::string abort_message(int rank, int sender, int culprit, const std::string& reason) {
  const std::string me = "rank " + std::to_string(rank);
  if (culprit == sender)
    return me + ": rank " + std::to_string(sender) + " aborted after a failure (" + reason + ")";
  return me + ": rank " + std::to_string(culprit) + " failed or stopped answering (rank " +
         std::to_string(sender) + " gave up because of it: " + reason + ")";
}

}  // namespace ringlab::tcp
