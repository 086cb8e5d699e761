// Parking: a large message that arrives before its receive is posted is left
// in the socket until the receive comes, so it too is read straight into the
// user's buffer.
//
// A frame with no posted receive whose payload is at least kParkBytes parks
// its connection: its payload stays in the socket (the kernel buffers it,
// and the sender's isend completes as it would otherwise while it fits) and
// the connection is not read until the receive is posted; then the payload
// goes straight into the user's buffer. In a ring the left neighbour is
// usually a step ahead, so without parking most large messages would be
// copied twice.
//
// Parking must not make a program wait for ever that works when everything
// is buffered (two ranks that both send() before they recv()). A parked
// payload is read into a queued message instead:
//   - when a receive is posted for a later message from the same peer;
//   - when the connection reports an error;
//   - checked whenever the engine is driven (wait or test), once it has been
//     parked kParkPatience with no event at all on any socket meanwhile, or
//     kParkLimit whatever happened.
// A payload is not parked at all if a receive from its sender (or from any
// source) for another tag is already posted: its message may come after
// this one, so this one must move out of the way.
//
// A frame that claims more than the engine's max_unexpected
// (kMaxUnexpectedBytes, framing.hpp) is never copied into a queued message:
// parked, it waits for its own receive however long that takes (the timers
// above leave it alone), and when it has to make way for a later message (a
// receive from its sender for another tag), the connection fails naming the
// sender. So a header alone never makes a rank reserve memory; a posted
// receive of the frame's size still takes it straight into place.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace ringlab::tcp::parking {

using Clock = std::chrono::steady_clock;

inline constexpr std::size_t kParkBytes = 32 * 1024;
inline constexpr auto kParkPatience = std::chrono::milliseconds(5);
inline constexpr auto kParkLimit = std::chrono::milliseconds(100);

// Whether a frame of `length` bytes that no posted receive takes parks its
// connection (receive_posted_from_sender: one for another tag is posted).
inline bool parks(std::uint64_t length, bool receive_posted_from_sender) {
  return length >= kParkBytes && !receive_posted_from_sender;
}

// Whether a payload of `length` parked since `parked_since` is read into the
// queue now (last_event: when any socket last had news).
inline bool overdue(std::uint64_t length, std::uint64_t max_unexpected, Clock::time_point now,
                    Clock::time_point parked_since, Clock::time_point last_event) {
  if (length > max_unexpected) return false;  // waits for its receive
  const auto quiet_since = last_event > parked_since ? last_event : parked_since;
  return now - quiet_since >= kParkPatience || now - parked_since >= kParkLimit;
}

// Whether a parked payload may be read into the queue at all.
inline bool may_queue(std::uint64_t length, std::uint64_t max_unexpected) {
  return length <= max_unexpected;
}

}  // namespace ringlab::tcp::parking
