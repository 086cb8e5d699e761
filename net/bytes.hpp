// Integers in wire buffers, little-endian, and bytes shown as hex: shared by
// the store's protocol (store/protocol.hpp) and the TCP transport's frames
// (transport/tcp/framing.hpp), whose layouts both write integers this way.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <type_traits>

namespace ringlab::net {

// Writes value's sizeof(T) bytes at out, least significant first.
template <typename T>
void put_le(std::byte* out, T value) {
  using U = std::make_unsigned_t<T>;
  auto bits = static_cast<U>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out[i] = static_cast<std::byte>((bits >> (8 * i)) & 0xFF);
}

// Reads sizeof(T) bytes at in, least significant first.
template <typename T>
T get_le(const std::byte* in) {
  using U = std::make_unsigned_t<T>;
  U bits = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    bits = static_cast<U>(bits | (static_cast<U>(std::to_integer<unsigned>(in[i])) << (8 * i)));
  return static_cast<T>(bits);
}

// "52 4c 54 46" for error messages about garbage.
std::string hex_bytes(std::span<const std::byte> bytes);

}  // namespace ringlab::net
