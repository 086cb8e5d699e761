// The proofs of token_proof.hpp, on OpenSSL's HMAC and random generator.
#include "store/token_proof.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <vector>

#include "ops/comm_error.hpp"

namespace ringlab::store {

Nonce fresh_nonce() {
  Nonce nonce{};
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) !=
      1)
    throw CommError("cannot draw a random challenge (OpenSSL's RAND_bytes failed)");
  return nonce;
}

Proof prove(std::string_view token, std::string_view label,
            std::initializer_list<std::span<const std::byte>> parts) {
  std::vector<unsigned char> message(label.begin(), label.end());
  message.push_back(0);
  for (const auto& part : parts) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(part.data());
    message.insert(message.end(), bytes, bytes + part.size());
  }
  // An empty token (an open job) is an empty key, which HMAC allows; the key
  // pointer must still be valid.
  static const unsigned char kNoKey = 0;
  const void* key = token.empty() ? static_cast<const void*>(&kNoKey) : token.data();
  Proof proof{};
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key, static_cast<int>(token.size()), message.data(), message.size(),
            reinterpret_cast<unsigned char*>(proof.data()), &length) ||
      length != proof.size())
    throw CommError("cannot compute the job token's HMAC-SHA256 (OpenSSL's HMAC failed)");
  return proof;
}

bool same_proof(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace ringlab::store
