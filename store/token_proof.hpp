// Proof of the job's secret (RINGLAB_JOB_TOKEN) without sending it: each
// side of a store connection and of a rank-to-rank handshake sends a fresh
// random nonce, and answers the other's with HMAC-SHA256(token, label ‖
// nonces ‖ what the two agree on). A label per role (the store, its client,
// the accepting rank, the connecting rank) keeps a proof made for one role
// from passing for another; the nonces keep an old proof from being
// replayed. Only proofs cross the wire, never the token; the store never
// holds it or anything made from it.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string_view>

namespace ringlab::store {

inline constexpr std::size_t kNonceBytes = 16;
inline constexpr std::size_t kProofBytes = 32;

using Nonce = std::array<std::byte, kNonceBytes>;
using Proof = std::array<std::byte, kProofBytes>;

// What each proof is made for.
inline constexpr std::string_view kStoreServerProof = "ringlab store server";
inline constexpr std::string_view kStoreClientProof = "ringlab store client";
inline constexpr std::string_view kAcceptingRankProof = "ringlab rank accepting";
inline constexpr std::string_view kConnectingRankProof = "ringlab rank connecting";

// 16 bytes from OpenSSL's random generator; throws CommError if it fails.
Nonce fresh_nonce();

// HMAC-SHA256 keyed with the token over the label, then each part.
Proof prove(std::string_view token, std::string_view label,
            std::initializer_list<std::span<const std::byte>> parts);

// Compares in constant time (CRYPTO_memcmp).
bool same_proof(std::span<const std::byte> a, std::span<const std::byte> b);

}  // namespace ringlab::store
