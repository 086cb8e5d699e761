// store::C10dStore driven from the command line, for tests/python/test_c10d_client.py:
//
//   c10d_client_tool HOST PORT TIMEOUT_MS PREFIX STEP...
//
// connects (the protocol found by the probe), prints "protocol legacy" or
// "protocol validated", then runs each step and prints one line per step:
//   set:KEY=VALUE      -> "set KEY"
//   get:KEY[:MS]       -> "get KEY = VALUE"
//   add:KEY=DELTA      -> "add KEY = SUM"
//   check:K1,K2        -> "check K1,K2 = 1|0"
//   wait:K1,K2:MS      -> "wait K1,K2"
//   cas:KEY:OLD:NEW    -> "cas KEY = VALUE"
//   del:KEY            -> "del KEY = 1|0"
//   num                -> "num = N"
//   closed             -> "closed = 1|0"
//   sleep:MS           -> (nothing)
// A step that throws prints "error <kind>: <what>" (kind: timeout, lost,
// comm, other) and the tool goes on with the next step.
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "store/c10d_client.hpp"
#include "store/store.hpp"

using namespace ringlab;

namespace {

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = text.find(by, start);
    parts.push_back(text.substr(start, at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

// "KEY=VALUE" -> {KEY, VALUE}
std::pair<std::string, std::string> pair_of(const std::string& text) {
  const std::size_t at = text.find('=');
  return {text.substr(0, at), at == std::string::npos ? "" : text.substr(at + 1)};
}

void step(store::C10dStore& s, const std::string& text) {
  const std::size_t colon = text.find(':');
  const std::string verb = text.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (verb == "set") {
    const auto [key, value] = pair_of(rest);
    s.set(key, value);
    std::printf("set %s\n", key.c_str());
  } else if (verb == "get") {
    const auto parts = split(rest, ':');
    const std::string value =
        parts.size() > 1 ? s.get(parts[0], Duration(std::stoll(parts[1]))) : s.get(parts[0]);
    std::printf("get %s = %s\n", parts[0].c_str(), value.c_str());
  } else if (verb == "add") {
    const auto [key, delta] = pair_of(rest);
    std::printf("add %s = %lld\n", key.c_str(), static_cast<long long>(s.add(key, std::stoll(delta))));
  } else if (verb == "check") {
    std::printf("check %s = %d\n", rest.c_str(), s.check(split(rest, ',')) ? 1 : 0);
  } else if (verb == "wait") {
    const auto parts = split(rest, ':');
    s.wait(split(parts[0], ','), Duration(std::stoll(parts.at(1))));
    std::printf("wait %s\n", parts[0].c_str());
  } else if (verb == "cas") {
    const auto parts = split(rest, ':');
    std::printf("cas %s = %s\n", parts.at(0).c_str(),
                s.compare_set(parts[0], parts.at(1), parts.at(2)).c_str());
  } else if (verb == "del") {
    std::printf("del %s = %d\n", rest.c_str(), s.delete_key(rest) ? 1 : 0);
  } else if (verb == "num") {
    std::printf("num = %lld\n", static_cast<long long>(s.num_keys()));
  } else if (verb == "closed") {
    std::printf("closed = %d\n", s.connection_closed() ? 1 : 0);
  } else if (verb == "sleep") {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoll(rest)));
  } else {
    std::printf("error other: unknown step '%s'\n", text.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: c10d_client_tool HOST PORT TIMEOUT_MS PREFIX STEP...\n");
    return 2;
  }
  try {
    store::C10dStore s(argv[1], std::stoi(argv[2]), Duration(std::stoll(argv[3])), argv[4]);
    std::printf("protocol %s\n",
                s.protocol() == store::C10dProtocol::Legacy ? "legacy" : "validated");
    std::fflush(stdout);
    for (int i = 5; i < argc; ++i) {
      try {
        step(s, argv[i]);
      } catch (const TimeoutError& e) {
        std::printf("error timeout: %s\n", e.what());
      } catch (const store::StoreLostError& e) {
        std::printf("error lost: %s\n", e.what());
      } catch (const CommError& e) {
        std::printf("error comm: %s\n", e.what());
      } catch (const std::exception& e) {
        std::printf("error other: %s\n", e.what());
      }
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::printf("error connect: %s\n", e.what());
    return 1;
  }
  return 0;
}
