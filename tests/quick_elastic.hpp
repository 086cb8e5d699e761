// The elastic launcher's options with short times, for the tests that start
// agents: a round forms in about a second, a dead node is noticed in 0.6 s
// (3 missed heartbeats of 0.2 s), and a group stops in 0.2 s (SIGKILL after
// 1 s), so a whole story of joins, losses and restarts takes seconds.
//
// And the secret that the nodes of a test's job share: a job that other
// nodes may join is refused without one.
#pragma once

#include <string>

#include "run_program.hpp"

namespace ringlab::testing {

// The same with more --rdzv-conf keys ("open=true").
inline std::string quick_elastic_with(const std::string& more_conf) {
  return "--rdzv-conf last_call_timeout=1,keep_alive_interval=0.2,keep_alive_max_attempt=3,"
         "join_timeout=30,read_timeout=5,close_timeout=10" +
         (more_conf.empty() ? "" : "," + more_conf) +
         " --monitor-interval 0.1 --stop-after-ms 200 --kill-after-ms 1000";
}
inline const std::string kQuickElastic = quick_elastic_with("");

// Put it after kCleanEnvironment, which unsets RINGLAB_JOB_TOKEN.
inline const std::string kSharedSecret = "RINGLAB_JOB_TOKEN=5f2b9c0d41e8a7366e1d90c2b4a8f7e1 ";

#ifdef RINGLAB_EXE
// `ringlab ARGUMENTS` as run_ringlab, with the shared secret.
inline ProgramRun run_ringlab_with_secret(const std::string& arguments) {
  return run_shell(kCleanEnvironment + kSharedSecret + RINGLAB_EXE + " " + arguments);
}
#endif

}  // namespace ringlab::testing
