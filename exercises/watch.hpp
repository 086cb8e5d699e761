// What the checker watches a learner's function do with its transport, on
// every stage: how many messages it posts, so that a loop that never ends
// (a counter that never moves) is stopped within a few hundred messages
// instead of running until memory or the step numbers run out; and, in the
// simulator, which receive each rank is blocked in and which sends it has
// posted, so that a deadlock where every rank receives before it sends is
// told apart from one where a message goes to the wrong rank.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "transport/transport.hpp"

namespace ringlab::exercises {

// A rank posted more messages or bytes in one case than any algorithm of the
// exercise needs.
class RunawayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How much one rank may post in one case: `messages` sends and receives,
// `bytes` of them in all.
struct PostLimit {
  std::size_t messages = 0;
  std::size_t bytes = 0;
};
// 64 + 16 P^2 + 4n messages (n elements per rank), and 1 MiB + 4P times the
// rank's buffers' bytes: several times what the least efficient algorithm
// of any exercise posts (a flat broadcast sends P-1 whole buffers).
PostLimit post_limit(int ranks, std::size_t count, std::size_t buffer_bytes);

// Shared by the watching transports of one world's ranks.
struct WatchWorld {
  std::mutex mutex;
  std::map<int, std::set<Tag>> sends_posted;         // per rank, the tags it has sent
  std::map<int, std::pair<int, Tag>> receiving;      // rank -> (source, tag) it is blocked on
};

// Wraps a rank's transport for one case; throws RunawayError from a post
// past `limit`. `world` (may be null) records sends and blocked receives.
std::unique_ptr<Transport> watching_transport(Transport& inner, PostLimit limit,
                                              WatchWorld* world);

// After a deadlock: whether every blocked rank waits in a receive from a rank
// that is itself blocked receiving and has posted no send of that step: they
// all receive first, so nobody sends.
bool every_rank_receives_first(WatchWorld& world);

}  // namespace ringlab::exercises
