// The TCP engine's performance policy (see engine_policy.hpp).
#include "transport/tcp/engine_policy.hpp"

#include "transport/tcp/crowding.hpp"

namespace ringlab::tcp {

EnginePolicy policy_for(const HostShare& host) {
  return {.writers = host.processors >= 2 * host.ranks_here,
          .crowded = host.ranks_here > host.processors};
}

EngineSetup set_up(Engine& engine, const HostShare& host, std::size_t writer_bytes,
                   Duration timeout) {
  const EnginePolicy policy = policy_for(host);
  EngineSetup setup;
  if (policy.writers) {
    engine.use_writers(writer_bytes);
    setup.overlaps_transfers = true;
  }
  setup.prefers_fewer_messages = any_rank_says(engine, policy.crowded, timeout);
  return setup;
}

}  // namespace ringlab::tcp
