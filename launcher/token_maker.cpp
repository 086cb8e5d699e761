#include "launcher/token_maker.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace ringlab::launch {

namespace {
bool token_given(const LaunchOptions& o) {
  if (std::getenv(kJobTokenVariable)) return true;
  return std::any_of(o.extra_environment.begin(), o.extra_environment.end(),
                     [](const auto& variable) { return variable.first == kJobTokenVariable; });
}
}  // namespace

std::string fresh_job_token() {
  unsigned char bytes[32];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(std::string("cannot make a job token (getrandom): ") +
                               std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char byte : bytes) {
    token += kHex[byte >> 4];
    token += kHex[byte & 15];
  }
  return token;
}

std::string job_token_for(const LaunchOptions& options) {
  return options.nnodes == 1 && !token_given(options) ? fresh_job_token() : "";
}

}  // namespace ringlab::launch
