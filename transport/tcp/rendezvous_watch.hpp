// The rendezvous watches the connections it has made (rendezvous.cpp, step 4
// and 5; mesh.cpp): a peer that dies, or gives up and says whom it blames
// (an abort frame, framing.hpp), while this rank still waits for others is
// reported at once and by name, not at the timeout as a rank that "did not
// show up". A look never takes what the engine will read: it only peeks.
#pragma once

#include <string>

namespace ringlab::tcp {

struct ConnectionNews {
  enum class Kind {
    Quiet,    // nothing to read
    Closed,   // end of stream or an error: the peer is gone
    Aborted,  // an abort frame: culprit and reason
    Talking,  // the peer has finished its rendezvous and sends frames: stop looking
  };
  Kind kind = Kind::Quiet;
  int culprit = -1;
  std::string reason;  // Aborted: the abort's text; Closed: what the socket said
};

// Looks at a connected socket without blocking.
ConnectionNews look_at_connection(int fd);

// Sends an abort frame from `rank` naming `culprit` on fd without blocking
// (best effort: a peer that does not read gets nothing).
void send_abort(int fd, int rank, int culprit, const std::string& why);

// What this rank's error says when a peer's abort named `culprit` (the same
// form as the engine's, engine_failure.cpp): "rank 1: rank 2 failed or stopped
// answering (rank 3 gave up because of it: ...)".
std::string abort_message(int rank, int sender, int culprit, const std::string& reason);

}  // namespace ringlab::tcp
