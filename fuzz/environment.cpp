// Fuzz target: from_environment() (transport/tcp/environment.cpp), which turns
// the variables torchrun, Slurm, Open MPI and ringlab run set into who this
// rank is and where rank 0 listens. The input is a list of NAME=VALUE lines
// (names outside the list below are ignored). Every outcome must be a
// WorldSpec within the documented ranges or std::invalid_argument; any other
// exception, or an out-of-range result, is a finding.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include "transport/tcp/tcp.hpp"

using namespace ringlab;

namespace {

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_environment: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::map<std::string, std::string> variables;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const auto equals = line.find('=');
    if (equals == std::string_view::npos) continue;
    // A real environment cannot hold a NUL inside a value: stop there, as getenv would.
    std::string value(line.substr(equals + 1));
    value = value.substr(0, value.find('\0'));
    variables[std::string(line.substr(0, equals))] = value;
  }
  const tcp::EnvironmentLookup lookup = [&](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
  tcp::WorldSpec r;
  try {
    r = tcp::from_environment(lookup);
  } catch (const std::invalid_argument& error) {
    require(std::string_view(error.what()).size() > 0, "an error without a message");
    return 0;
  }
  require(r.world_size >= 1 && r.world_size <= tcp::kMaxWorldSize, "world size out of range");
  require(r.rank >= 0 && r.rank < r.world_size, "rank out of range");
  require(r.local_rank >= 0 && r.local_rank < r.world_size, "local rank out of range");
  require(r.master_port >= 1 && r.master_port <= 65535, "port out of range");
  require(!r.master_addr.empty() && !r.bind_addr.empty(), "an empty address");
  require(r.timeout.count() > 0 && r.timeout <= tcp::kMaxTimeout, "timeout out of range");
  require(r.handshake_timeout.count() > 0 && r.handshake_timeout <= tcp::kMaxTimeout,
          "handshake timeout out of range");
  return 0;
}
