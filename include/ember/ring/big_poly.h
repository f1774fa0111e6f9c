// BigPoly: a polynomial of Z[X]/(X^N + 1) with coefficients mod 2^bits held as multi-word integers
// (HEAAN's form), and BigMultiplier, its exact products through CRT, NTT and the inverse CRT.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "ember/backend/buffer.h"
#include "ember/ring/rns_poly.h"
#include "ember/ring/sampler.h"

namespace ember::ring {

using backend::BigShape;

/// Coefficients mod 2^bits, 64-bit words little-endian, coefficient-major (big_int_rows.h). Two's
/// complement: a coefficient read as signed lies in [-2^(bits-1), 2^(bits-1)).
class BigPoly {
 public:
  /// Uninitialized.
  BigPoly(std::size_t n, int bits, Device device, backend::Stream stream = {});
  static BigPoly zeros(std::size_t n, int bits, Device device);
  /// From n * words_for(bits) host words (the top word of each coefficient is masked).
  static BigPoly from_host(std::size_t n, int bits, Device device, const u64* words);
  /// The centered lift of `small`'s first limb (coeff form), mod 2^bits: secrets and errors.
  static BigPoly from_residues(const RnsPoly& small, int bits);
  /// Uniform mod 2^bits from the sampler's stream (a fresh nonce).
  static BigPoly uniform(Sampler& sampler, std::size_t n, int bits, Device device);
  static std::size_t words_for(int bits) { return static_cast<std::size_t>(bits + 63) / 64; }

  BigPoly(BigPoly&&) noexcept = default;
  BigPoly& operator=(BigPoly&&) noexcept = default;
  BigPoly copy() const;
  BigPoly to(Device device) const;
  std::vector<u64> to_host() const;

  std::size_t n() const { return shape_.n; }
  int bits() const { return shape_.bits; }
  std::size_t words() const { return shape_.words; }
  const BigShape& shape() const { return shape_; }
  Device device() const { return device_; }
  backend::Stream stream() const { return stream_; }
  backend::Backend& backend() const;
  u64* data() { return storage_.as<u64>(); }
  const u64* data() const { return storage_.as<const u64>(); }

  /// a + b, a - b, -a mod 2^bits (same n, bits and device).
  BigPoly add(const BigPoly& o) const;
  BigPoly sub(const BigPoly& o) const;
  BigPoly negate() const;
  /// This polynomial (read signed) times 2^left, or divided by 2^right with rounding half up
  /// (at most one of them nonzero), mod 2^out_bits. left = right = 0 changes the width only:
  /// HEAAN's mod-down when out_bits < bits.
  BigPoly shifted(int out_bits, int left, int right) const;
  /// This polynomial at X^galois (an odd galois; 5^k mod 2N rotates CKKS's slots left by k,
  /// 2N - 1 conjugates them): a signed permutation of the coefficients, the same width.
  BigPoly automorphism(u64 galois) const;

 private:
  void check_same(const BigPoly& o, const char* op) const;
  BigShape shape_;
  Device device_;
  backend::Stream stream_;
  backend::Buffer storage_;
};

/// Exact negacyclic products of BigPolys over a ring of NTT-friendly primes below 2^30, whose
/// residues are 32-bit words (RnsPoly32: the CRT writes them, the NTTs and products run on them,
/// the inverse CRT reads them; the same code as the 64-bit RNS path instantiated for u32): the
/// first primes whose product P exceeds 4 N 2^(a_bits + b_bits) hold every coefficient of the
/// product over Z of the inputs' representatives in [0, 2^bits) within P / 4, so the inverse CRT
/// (big::crt_combine) gives it exactly and its low out_bits bits are the product mod 2^out_bits
/// (for out_bits at most each input's bits).
class BigMultiplier {
 public:
  /// Throws ParameterError when `ring`'s primes cannot hold the largest product asked for later.
  explicit BigMultiplier(std::shared_ptr<const RingContext> ring);
  ~BigMultiplier();
  const std::shared_ptr<const RingContext>& ring() const { return ring_; }
  /// The primes a product of inputs of a_bits and b_bits needs (ParameterError when the ring has
  /// too few).
  RnsBasis basis_for(int a_bits, int b_bits) const;
  /// The CRT: a's residues over `basis` (a prefix of the ring's primes), coeff form; `centered`
  /// reads a's coefficients signed (in [-2^(bits-1), 2^(bits-1))) instead of in [0, 2^bits).
  RnsPoly32 to_rns(const BigPoly& a, const RnsBasis& basis, bool centered = false) const;
  /// to_rns then the NTT: eval form (a transform several products reuse).
  RnsPoly32 transform(const BigPoly& a, const RnsBasis& basis, bool centered = false) const;
  /// The product of two transforms over the same basis: INTT, inverse CRT, centered, mod
  /// 2^out_bits.
  BigPoly product(const RnsPoly32& a, const RnsPoly32& b, int out_bits) const;
  /// a b mod 2^out_bits.
  BigPoly multiply(const BigPoly& a, const BigPoly& b, int out_bits) const;
  /// The inverse CRT of a coeff-form polynomial over a prefix basis whose coefficients are below
  /// a quarter of the basis's product: centered, mod 2^out_bits.
  BigPoly from_rns(const RnsPoly32& a, int out_bits) const;

 private:
  struct Tables;
  // Device kind and index, primes, limbs; and for the CRT the centered input's bits (0: unsigned).
  using TableKey = std::tuple<int, int, std::size_t, std::size_t, int>;
  /// The CRT's tables for inputs of `words` words (centered_bits > 0: read signed at that width),
  /// and the inverse CRT's for outputs of `out_bits` bits, over `basis` on `be` (built once each).
  const Tables& forward_tables(const RnsBasis& basis, std::size_t words, int centered_bits,
                               backend::Backend& be) const;
  const Tables& inverse_tables(const RnsBasis& basis, int out_bits, backend::Backend& be) const;
  void check_prefix(const RnsBasis& basis, const char* op) const;
  std::shared_ptr<const RingContext> ring_;
  mutable std::mutex mutex_;
  mutable std::map<TableKey, std::unique_ptr<Tables>> forward_, inverse_;
};

}  // namespace ember::ring
