// The checks the conformance suite's test files share
// (test_transport_conformance.cpp, conformance_any_source.cpp): messages
// whose values name them, how a rank's body ended, and the loop over the
// test program's bindings.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "transport_conformance.hpp"

// Failed checks print the values.
template <>
struct doctest::StringMaker<std::vector<int>> {
  static doctest::String convert(const std::vector<int>& values) {
    std::string text = "{";
    for (std::size_t i = 0; i < values.size() && i < 8; ++i)
      text += (i ? ", " : "") + std::to_string(values[i]);
    text += values.size() > 8 ? ", ... (" + std::to_string(values.size()) + " values)}" : "}";
    return text.c_str();
  }
};

namespace ringlab::conformance {

using Kind = RankOutcome::Kind;

// Values that name their message: sender, tag, and which of that sender's
// messages on that tag it is.
inline std::vector<int> message(int sender, Tag tag, int nth, std::size_t n = 3) {
  std::vector<int> values(n);
  for (std::size_t i = 0; i < n; ++i)
    values[i] = sender * 1000000 + static_cast<int>(tag) * 1000 + nth * 100 + static_cast<int>(i);
  return values;
}

inline const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::Finished:
      return "finished";
    case Kind::Timeout:
      return "TimeoutError";
    case Kind::PeerFailure:
      return "PeerError";
    case Kind::CommFailure:
      return "CommError";
    case Kind::OtherFailure:
      return "another exception";
  }
  return "?";
}

inline void check_all_finished(const std::vector<RankOutcome>& outcomes) {
  for (std::size_t rank = 0; rank < outcomes.size(); ++rank) {
    INFO("rank " << rank << ": " << std::string(kind_name(outcomes[rank].kind)) << " "
                 << outcomes[rank].what);
    CHECK(outcomes[rank].kind == Kind::Finished);
  }
}

// Runs check(binding) for every binding that can start `ranks` ranks.
template <typename Check>
void for_each_binding(int ranks, Check&& check) {
  for (const Binding& binding : bindings()) {
    INFO("transport: " << binding.name);
    if (binding.max_ranks < ranks) {
      MESSAGE(binding.name << ": skipped, needs " << ranks << " ranks and it can start "
                           << binding.max_ranks);
      continue;
    }
    check(binding);
  }
}

}  // namespace ringlab::conformance
