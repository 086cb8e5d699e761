// The elastic launcher's options with short times, for the tests that start
// agents: a round forms in about a second, a dead node is noticed in 0.6 s
// (3 missed heartbeats of 0.2 s), and a group stops in 0.2 s (SIGKILL after
// 1 s), so a whole story of joins, losses and restarts takes seconds.
#pragma once

#include <string>

namespace ringlab::testing {

inline const std::string kQuickElastic =
    "--rdzv-conf last_call_timeout=1,keep_alive_interval=0.2,keep_alive_max_attempt=3,"
    "join_timeout=30,read_timeout=5,close_timeout=10 --monitor-interval 0.1 --stop-after-ms 200 "
    "--kill-after-ms 1000";

}  // namespace ringlab::testing
