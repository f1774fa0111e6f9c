// The CPU backend's big-integer family: the reference, big_int_rows.h for every coefficient.
#include "cpu_big_int.h"

#include <vector>

namespace ember::backend {

namespace {

class CpuBigInt final : public BigIntOps {
 public:
  explicit CpuBigInt(CpuThreads& threads) : threads_(threads) {}

  void big_add_async(u64* out, const u64* a, const u64* b, const BigShape& s, bool subtract,
                     Stream) override {
    each(s.n, [&](std::size_t c) {
      const std::size_t o = c * s.words;
      big::add(out + o, a + o, b + o, s, subtract);
    });
  }
  void big_negate_async(u64* out, const u64* a, const BigShape& s, Stream) override {
    each(s.n, [&](std::size_t c) { big::negate(out + c * s.words, a + c * s.words, s); });
  }
  void big_shift_async(u64* out, const BigShape& o, const u64* a, const BigShape& i, int left,
                       int right, Stream) override {
    each(o.n,
         [&](std::size_t c) { big::shift(out + c * o.words, o, a + c * i.words, i, left, right); });
  }
  void big_automorphism_async(u64* out, const u64* a, const BigShape& s, u64 galois,
                              Stream) override {
    const u64 inverse = big::odd_inverse(galois);
    each(s.n, [&](std::size_t c) { big::automorphism(out + c * s.words, a, s, c, inverse); });
  }
  void big_encode_slots_async(u64* out, const BigShape& o, const void* slots, double scale,
                              double bound, u64* flags, Stream) override {
    const std::size_t n = o.n / 2;
    int log_n = 0;
    while ((std::size_t{1} << log_n) < n) ++log_n;
    const auto* w = static_cast<const ckks::Cx*>(slots);
    for (std::size_t k = 0; k < o.n; ++k) {
      double x = 0;
      if (!big::encode_coefficient(out + k * o.words, o, w, n, log_n, k, scale, bound, x)) {
        flags[0] |= ckks::kTooLarge;
        flags[1] = ckks::double_bits(x);
      }
    }
  }
  void big_to_doubles_async(double* out, const u64* a, const BigShape& s, int scale_bits,
                            Stream) override {
    each(s.n, [&](std::size_t c) { out[c] = big::to_double(a + c * s.words, s, scale_bits); });
  }
  void big_to_rns_async(u32* out, const u64* words, const BigShape& in, const BigRnsView& v,
                        Stream) override {
    each(in.n, [&](std::size_t c) {
      const u64* x = words + c * in.words;
      const auto limb = [&](std::size_t j) {
        return static_cast<std::uint32_t>(x[j / 2] >> (32 * (j % 2)));
      };
      const bool negative = big::reads_negative(limb, v);
      for (std::size_t i = 0; i < v.primes; i += big::kBigBlock) {
        u32 r[big::kBigBlock];
        big::rns_residues(limb, v, i, negative, r);
        for (std::size_t k = i; k < v.primes && k < i + big::kBigBlock; ++k)
          out[k * in.n + c] = r[k - i];
      }
    });
  }
  void big_from_rns_async(u64* out, const BigShape& o, const u32* residues, const BigCrtView& v,
                          Stream) override {
    const long count = static_cast<long>(o.n);
#pragma omp parallel num_threads(threads_.team())
    {
      std::vector<u64> y(v.primes);
#pragma omp for schedule(static)
      for (long c = 0; c < count; ++c) {
        for (std::size_t i = 0; i < v.primes; ++i)
          y[i] = big::crt_digit(residues[i * o.n + static_cast<std::size_t>(c)], v, i);
        const auto digit = [&](std::size_t i) { return y[i]; };
        big::crt_combine(out + static_cast<std::size_t>(c) * o.words, o, digit,
                         big::crt_multiple(digit, v), v);
      }
    }
  }
  void big_from_residues_async(u64* out, const BigShape& o, const u64* residues, u64 q,
                               Stream) override {
    each(o.n, [&](std::size_t c) { big::from_residue(out + c * o.words, o, residues[c], q); });
  }
  void big_sample_uniform_async(u64* out, const BigShape& o, const ChaChaKey& key, u64 nonce,
                                Stream) override {
    each(o.n, [&](std::size_t c) { big::uniform(out + c * o.words, o, c, key, nonce); });
  }

 private:
  template <class F>
  void each(std::size_t n, F&& f) {
    const long count = static_cast<long>(n);
#pragma omp parallel for schedule(static) num_threads(threads_.team())
    for (long c = 0; c < count; ++c) f(static_cast<std::size_t>(c));
  }

  CpuThreads& threads_;
};

}  // namespace

std::unique_ptr<BigIntOps> make_cpu_big_int(CpuThreads& threads) {
  return std::make_unique<CpuBigInt>(threads);
}

}  // namespace ember::backend
