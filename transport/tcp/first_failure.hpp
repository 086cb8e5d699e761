// Whether the TCP engine failed, and how far its shutdown got. The rules of
// failing (who is blamed, what the peers are told) are the engine's
// (engine_failure.cpp); this holds their outcome: the first failure, which
// every pending and future operation then fails with (a PeerError naming
// its culprit when there is one). As in InprocWorld::fail, the first failure
// wins; later ones change nothing.
//
// State: the failure and the shutdown's stage. Called with the engine's mutex held.
#pragma once

#include <memory>
#include <string>

#include "transport/transport.hpp"

namespace ringlab::tcp {

class FirstFailure {
 public:
  bool failed() const { return !why_.empty(); }
  const std::string& why() const { return why_; }
  int culprit() const { return culprit_; }  // -1: none (a CommError)

  // Records the failure unless one came first; false if one did.
  bool set(int culprit, std::string why) {
    if (failed()) return false;
    why_ = std::move(why);
    culprit_ = culprit;
    return true;
  }
  // A request that has failed with it.
  std::unique_ptr<Request> request() const {
    return std::make_unique<FailedRequest>(why_, culprit_);
  }
  // Throws it: a PeerError naming the culprit, else a CommError.
  [[noreturn]] void raise() const {
    if (culprit_ >= 0) throw PeerError(culprit_, why_);
    throw CommError(why_);
  }

  // The shutdown's stages: shutting down (a connection that ends is then
  // only closed), then shut down (connections closed).
  bool shutting_down = false;
  bool shut_down = false;

 private:
  std::string why_;
  int culprit_ = -1;
};

// Why a peer that said goodbye fails this rank: it was still needed, `what`
// ("to send to it (tag ...)").
std::string departed_message(int rank, int peer, const std::string& what);

}  // namespace ringlab::tcp
