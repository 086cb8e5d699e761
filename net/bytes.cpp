#include "net/bytes.hpp"

#include <cstdio>

namespace ringlab::net {

std::string hex_bytes(std::span<const std::byte> bytes) {
  std::string out;
  char digits[4];
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(digits, sizeof digits, "%02x", std::to_integer<unsigned>(bytes[i]));
    if (i) out += ' ';
    out += digits;
  }
  return out;
}

}  // namespace ringlab::net
