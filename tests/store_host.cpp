// A StoreServer in a process of its own, for the tests that squeeze the
// store's process (its descriptors, its address space) or measure it (its
// memory, its CPU time) without squeezing or measuring the test itself.
//
//   store_host [--handshake-ms N] [--request-ms N]
//              [--max-connections N] [--max-total-mib N] [--max-keys N]
//              [--nofile N] [--headroom-mib N]
//
// Prints "port P" once it serves, then serves until its stdin closes.
// --nofile lowers its descriptor limit; --headroom-mib limits its address
// space to what it uses once serving (after a set and a get of its own) plus
// N MiB.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "store/store.hpp"

namespace {

long long vm_size_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmSize:", 0) == 0) return std::atoll(line.c_str() + 7);
  return -1;
}

}  // namespace

int main(int argc, char** argv) try {
  long long handshake_ms = 5000, nofile = 0, headroom_mib = 0;
  ringlab::store::StoreLimits limits;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const char* value = argv[i + 1];
    if (name == "--handshake-ms")
      handshake_ms = std::atoll(value);
    else if (name == "--request-ms")
      limits.request_timeout = ringlab::Duration(std::atoll(value));
    else if (name == "--max-connections")
      limits.max_connections = std::atoi(value);
    else if (name == "--max-total-mib")
      limits.max_total_bytes = static_cast<std::size_t>(std::atoll(value)) << 20;
    else if (name == "--max-keys")
      limits.max_keys = static_cast<std::size_t>(std::atoll(value));
    else if (name == "--nofile")
      nofile = std::atoll(value);
    else if (name == "--headroom-mib")
      headroom_mib = std::atoll(value);
    else {
      std::fprintf(stderr, "store_host: unknown option %s\n", name.c_str());
      return 2;
    }
  }
  if (nofile > 0) {
    const rlimit limit{static_cast<rlim_t>(nofile), static_cast<rlim_t>(nofile)};
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) std::perror("setrlimit(RLIMIT_NOFILE)");
  }
  ringlab::store::StoreServer server("127.0.0.1", 0, ringlab::Duration(handshake_ms), limits);
  {
    // Every thread and allocator arena the store needs exists before the
    // address space is limited.
    ringlab::store::StoreClient self("127.0.0.1", server.port(), std::chrono::seconds(5));
    self.set("store_host", std::string(1 << 20, 'x'));
    self.get("store_host");
    self.delete_key("store_host");
  }
  if (headroom_mib > 0) {
    const rlim_t bytes = static_cast<rlim_t>(vm_size_kib() * 1024 + headroom_mib * 1024 * 1024);
    const rlimit limit{bytes, bytes};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) std::perror("setrlimit(RLIMIT_AS)");
  }
  std::printf("port %d\n", server.port());
  std::fflush(stdout);
  char byte;
  while (::read(0, &byte, 1) > 0) {
  }
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "store_host: %s\n", error.what());
  return 1;
}
