// Number theory on the host: modulus setup, primality, NTT-friendly primes and primitive roots.
#include "ember/core/numtheory.h"

#include <algorithm>
#include <string>

#include "ember/core/errors.h"

namespace ember {

namespace {

/// make_modulus on words of type W: floor(2^(2 bits) / q) and floor(2^(k + bits - 2) / q).
template <class W>
ModulusT<W> make_modulus_of(u64 q) {
  constexpr int kMax = kMaxModulusBitsOf<W>;
  if (q < 2 || q >= (u64{1} << kMax))
    throw ParameterError("modulus " + std::to_string(q) + " is out of range: use 2 <= q < 2^" +
                         std::to_string(kMax) + " on " + std::to_string(kWordBits<W>) +
                         "-bit words");
  constexpr int kBits = kWordBits<W>;
  ModulusT<W> m;
  m.value = static_cast<W>(q);
  // floor(2^(2 bits) / q) = floor((2^(2 bits) - 1) / q) unless q divides 2^(2 bits), impossible
  // for odd q > 1; for even q (powers of two are allowed as plain moduli) the correction below is
  // exact.
  const unsigned __int128 all_ones = kBits == 64
                                         ? ~static_cast<unsigned __int128>(0)
                                         : (static_cast<unsigned __int128>(1) << (2 * kBits)) - 1;
  unsigned __int128 ratio = all_ones / q;
  if (all_ones % q == q - 1) ratio += 1;
  m.ratio_hi = static_cast<W>(ratio >> kBits);
  m.ratio_lo = static_cast<W>(ratio);
  const int k = bit_length(q);
  m.product_ratio = static_cast<W>((static_cast<unsigned __int128>(1) << (k + kBits - 2)) / q);
  return m;
}

}  // namespace

Modulus make_modulus(u64 q) { return make_modulus_of<u64>(q); }

Modulus32 make_modulus32(u64 q) { return make_modulus_of<u32>(q); }

u64 inverse_mod(u64 a, u64 q) {
  // Extended Euclid on signed 128-bit values.
  __int128 t = 0, new_t = 1, r = q, new_r = a % q;
  while (new_r != 0) {
    __int128 quotient = r / new_r;
    __int128 tmp = t - quotient * new_t;
    t = new_t;
    new_t = tmp;
    tmp = r - quotient * new_r;
    r = new_r;
    new_r = tmp;
  }
  if (r != 1)
    throw ParameterError(std::to_string(a) + " has no inverse modulo " + std::to_string(q));
  if (t < 0) t += q;
  return static_cast<u64>(t);
}

u64 product_mod(const std::vector<u64>& factors, u64 m, std::size_t skip) {
  const Modulus mm = make_modulus(m);
  u64 r = 1 % m;
  for (std::size_t k = 0; k < factors.size(); ++k)
    if (k != skip) r = mul_mod(r, barrett_reduce_64(factors[k], mm), mm);
  return r;
}

u64 half_product_mod(const std::vector<u64>& primes, u64 m) {
  return mul_mod(sub_mod(product_mod(primes, m), 1 % m, m), inverse_mod(2, m), make_modulus(m));
}

namespace {
u64 mul_mod_u128(u64 a, u64 b, u64 n) {
  return static_cast<u64>(static_cast<unsigned __int128>(a) * b % n);
}
u64 pow_mod_u128(u64 b, u64 e, u64 n) {
  u64 r = 1 % n;
  b %= n;
  while (e) {
    if (e & 1) r = mul_mod_u128(r, b, n);
    b = mul_mod_u128(b, b, n);
    e >>= 1;
  }
  return r;
}
}  // namespace

bool is_prime(u64 n) {
  if (n < 2) return false;
  for (u64 p : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
    if (n % p == 0) return n == p;
  }
  u64 d = n - 1;
  int s = 0;
  while ((d & 1) == 0) {
    d >>= 1;
    ++s;
  }
  // These bases are a proven deterministic witness set for all n < 2^64.
  for (u64 a : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
    u64 x = pow_mod_u128(a, d, n);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int i = 1; i < s; ++i) {
      x = mul_mod_u128(x, x, n);
      if (x == n - 1) {
        composite = false;
        break;
      }
    }
    if (composite) return false;
  }
  return true;
}

int log2_exact(std::size_t n) {
  if (n == 0 || (n & (n - 1)) != 0)
    throw ParameterError("ring degree " + std::to_string(n) + " is not a power of two");
  int l = 0;
  while ((std::size_t{1} << l) < n) ++l;
  return l;
}

bool is_ntt_friendly(u64 q, std::size_t n) {
  return q > 2 && (q - 1) % (2 * n) == 0 && is_prime(q);
}

std::vector<u64> generate_ntt_primes(int bits, std::size_t n, std::size_t count,
                                     const std::vector<u64>& exclude) {
  log2_exact(n);
  if (bits < 2 || bits > kMaxModulusBits)
    throw ParameterError("prime size " + std::to_string(bits) + " bits is out of range: use 2..61");
  const u64 step = 2 * static_cast<u64>(n);
  const u64 upper = (u64{1} << bits);
  const u64 lower = (u64{1} << (bits - 1));
  std::vector<u64> primes;
  // Largest candidate q = 1 mod 2n below 2^bits.
  u64 q = ((upper - 1) / step) * step + 1;
  if (q >= upper) q -= step;
  for (; q > lower && primes.size() < count; q -= step) {
    if (is_prime(q) && std::find(exclude.begin(), exclude.end(), q) == exclude.end())
      primes.push_back(q);
    if (q < step) break;
  }
  if (primes.size() < count)
    throw ParameterError("only " + std::to_string(primes.size()) + " NTT-friendly primes of " +
                         std::to_string(bits) + " bits exist for N=" + std::to_string(n) +
                         "; ask for fewer primes or more bits");
  return primes;
}

u64 primitive_root_2n(u64 q, std::size_t n) {
  if (!is_ntt_friendly(q, n))
    throw ParameterError("modulus " + std::to_string(q) + " is not an NTT-friendly prime for N=" +
                         std::to_string(n) + " (need a prime q = 1 mod 2N)");
  const u64 order = 2 * static_cast<u64>(n);
  const u64 cofactor = (q - 1) / order;
  // A candidate g^cofactor has order dividing 2n; it is primitive iff its n-th power is -1.
  u64 best = 0;
  for (u64 g = 2; g < q; ++g) {
    u64 psi = pow_mod_u128(g, cofactor, q);
    if (pow_mod_u128(psi, n, q) != q - 1) continue;
    // Choose the smallest primitive root among psi^(odd k) so the result does not depend on g.
    u64 psi2 = mul_mod_u128(psi, psi, q);
    u64 cur = psi;
    best = psi;
    for (u64 k = 1; k < order; k += 2) {
      if (cur < best) best = cur;
      cur = mul_mod_u128(cur, psi2, q);
    }
    break;
  }
  return best;
}

}  // namespace ember
