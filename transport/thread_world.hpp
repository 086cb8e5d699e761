// A world whose ranks are threads of this process: the in-process transport
// (inproc.hpp) and NCCL's rules on CPU threads (nccl_rules/nccl_rules.hpp).
// Each says how a rank connects and how a failure reaches the others; the
// running of the ranks is written once, here.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "transport/transport.hpp"

namespace ringlab {

class ThreadWorld {
 public:
  ThreadWorld() = default;
  virtual ~ThreadWorld() = default;
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  virtual int size() const = 0;
  // The transport of one rank; call once per rank. Destroying it is the
  // rank leaving.
  virtual std::unique_ptr<Transport> connect(int rank) = 0;
  // Marks rank as failed: every wait in the world wakes up and throws a
  // PeerError naming it, instead of waiting for its timeout. The first
  // failure wins; later ones change nothing.
  virtual void fail(int rank, const std::string& why) = 0;

  // Runs body(transport) on size() threads, one per rank (every transport's
  // timeout set to `timeout`), and joins them. If a rank throws, it is
  // marked failed (fail) before its transport goes, so the others hear of
  // the failure, not of a departure; and the first failure is rethrown here
  // as it was thrown (the PeerErrors it caused are not).
  void run(const std::function<void(Transport&)>& body, Duration timeout = kDefaultTimeout);
};

}  // namespace ringlab
