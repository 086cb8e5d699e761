// Runs a test body on every rank of an in-process world, each rank with its
// own ProcessGroup: what the collective, process group and training tests
// share.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "primitives/process_group.hpp"
#include "transport/inproc.hpp"

namespace ringlab::testing {

// Runs body(pg) on `world` ranks. A test that gives no timeout gets 10 s, far
// less than ProcessGroup's default, so that a hang fails the test quickly.
inline void with_groups(int world, const std::function<void(ProcessGroup&)>& body,
                        ProcessGroupOptions options = {}) {
  if (options.timeout == kDefaultTimeout) options.timeout = std::chrono::seconds(10);
  run_world(
      world,
      [&](Transport& transport) {
        ProcessGroup pg(std::shared_ptr<Transport>(&transport, [](Transport*) {}), options);
        body(pg);
      },
      options.timeout);
}

}  // namespace ringlab::testing
