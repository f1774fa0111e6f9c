// Host-side number theory: modulus setup, inverses, primality, NTT-friendly primes and roots.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/core/modarith.h"

namespace ember {

/// Builds a Modulus (value and Barrett constant). Throws ParameterError for q < 2 or q >= 2^61.
Modulus make_modulus(u64 q);
/// The same for 32-bit words. Throws ParameterError for q < 2 or q >= 2^30.
Modulus32 make_modulus32(u64 q);

/// Modular inverse of a mod q; throws ParameterError if it does not exist.
u64 inverse_mod(u64 a, u64 q);

/// prod_{k != skip} factors[k] mod m (skip = npos: all of them).
u64 product_mod(const std::vector<u64>& factors, u64 m,
                std::size_t skip = static_cast<std::size_t>(-1));

/// floor(P / 2) mod m for the odd product P of `primes`: (P - 1) / 2 = (P mod m - 1) * 2^-1.
u64 half_product_mod(const std::vector<u64>& primes, u64 m);

/// Deterministic Miller-Rabin for 64-bit integers.
bool is_prime(u64 n);

/// True when q is prime and q = 1 mod 2n (a negacyclic NTT of size n exists).
bool is_ntt_friendly(u64 q, std::size_t n);

/// `count` distinct primes of exactly `bits` bits with q = 1 mod 2n, largest first, skipping any in
/// `exclude`. Throws ParameterError when there are not enough such primes.
std::vector<u64> generate_ntt_primes(int bits, std::size_t n, std::size_t count,
                                     const std::vector<u64>& exclude = {});

/// The smallest primitive 2n-th root of unity mod q (psi with psi^n = -1). Throws ParameterError
/// when q is not NTT-friendly for n.
u64 primitive_root_2n(u64 q, std::size_t n);

/// log2 of a power of two n; throws ParameterError otherwise.
int log2_exact(std::size_t n);

}  // namespace ember
