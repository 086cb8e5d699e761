// The failures of talking to another process or thread, and the unit every
// wait is given. Here, at the bottom, because the rendezvous store (store/)
// and every transport (transport/, which re-exports this header) throw and
// catch the same errors: a caller catches one CommError whichever layer
// failed.
#pragma once

#include <chrono>
#include <stdexcept>

namespace ringlab {

using Duration = std::chrono::milliseconds;

inline constexpr Duration kDefaultTimeout = std::chrono::seconds(30);

// Any communication failure. The message always names the ranks involved.
class CommError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A wait ran out of time.
class TimeoutError : public CommError {
 public:
  using CommError::CommError;
};

}  // namespace ringlab
