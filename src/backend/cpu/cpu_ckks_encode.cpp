// The CPU backend's CKKS encoding family: ckks_fft.h's per-element functions in plain loops, in
// the order the CUDA kernels apply them (each element's arithmetic is independent of the order
// of elements, and every FFT stage reads only the previous stage's output).
#include "cpu_ckks_encode.h"

#include <algorithm>

namespace ember::backend {

namespace {

using ckks::Cx;

class CpuCkksEncode final : public CkksEncodeOps {
 public:
  void load_slots_async(void* slots, const void* values, ckks::SlotType type, std::size_t count,
                        bool repeat, std::size_t n, u64* flags, Stream) override {
    Cx* out = static_cast<Cx*>(slots);
    u64 f = 0, largest = flags[2];
    const std::size_t read = repeat ? count : std::min(count, n);
    for (std::size_t i = 0; i < read; ++i) {
      const Cx z = ckks::load_value(values, type, i);
      f |= ckks::value_flags(z);
      largest = std::max(largest, ckks::double_bits(ckks::value_magnitude(z)));
    }
    for (std::size_t s = 0; s < n; ++s) out[s] = ckks::slot_value(values, type, count, repeat, s);
    flags[0] |= f;
    flags[2] = largest;
  }

  void special_fft_async(void* slots, std::size_t n, const void* twiddles, bool inverse,
                         Stream) override {
    ckks::special_fft_stages(static_cast<Cx*>(slots), n, static_cast<const Cx*>(twiddles), inverse);
  }

  void round_to_residues_async(u64* out, const void* slots, double scale, double bound,
                               const BasisView& b, u64* flags, Stream) override {
    const std::size_t big_n = b.ring->n, n = big_n / 2;
    const int log_n = b.ring->log_n - 1;
    const Cx* w = static_cast<const Cx*>(slots);
    for (std::size_t k = 0; k < big_n; ++k) {
      const double x = f_mul_scale(ckks::encoded_coefficient(w, n, log_n, k), scale);
      const double v = ckks::round_even(x);
      if (!(ckks::m_fabs(v) <= bound)) {
        flags[0] |= ckks::kTooLarge;
        flags[1] = ckks::double_bits(x);
        continue;
      }
      for (std::size_t l = 0; l < b.limbs; ++l)
        out[l * big_n + k] = ckks::residue_of_rounded(v, b.ring->moduli[b.ids[l]]);
    }
  }

  void two_prime_slots_async(void* slots, const u64* a, u64 q0_inv, double scale, bool check,
                             const BasisView& b, u64* flags, Stream) override {
    const std::size_t big_n = b.ring->n, n = big_n / 2;
    const int log_n = b.ring->log_n - 1;
    const Modulus& m0 = b.ring->moduli[b.ids[0]];
    const Modulus& m1 = b.ring->moduli[b.ids[b.limbs > 1 ? 1 : 0]];
    Cx* out = static_cast<Cx*>(slots);
    bool any_wrapped = false;
    for (std::size_t k = 0; k < n; ++k) {
      bool w0 = false, w1 = false;
      const double re =
          ckks::two_prime_coefficient(a, big_n, k, m0, m1, b.limbs > 1, q0_inv, scale, w0);
      const double im =
          ckks::two_prime_coefficient(a, big_n, k + n, m0, m1, b.limbs > 1, q0_inv, scale, w1);
      any_wrapped = any_wrapped || w0 || w1;
      out[ckks::bit_reverse(k, log_n)] = Cx{re, im};
    }
    if (check && any_wrapped) flags[0] |= ckks::kWrapped;
  }

  void coefficient_slots_async(void* slots, const double* coeffs, std::size_t n, Stream) override {
    int log_n = 0;
    while ((std::size_t{1} << log_n) < n) ++log_n;
    Cx* out = static_cast<Cx*>(slots);
    for (std::size_t k = 0; k < n; ++k)
      out[ckks::bit_reverse(k, log_n)] = Cx{coeffs[k], coeffs[k + n]};
  }

  void store_slots_async(void* out, const void* slots, ckks::SlotType type, std::size_t count,
                         Stream) override {
    const Cx* z = static_cast<const Cx*>(slots);
    if (type == ckks::SlotType::c128) {
      std::copy(z, z + count, static_cast<Cx*>(out));
      return;
    }
    double* d = static_cast<double*>(out);
    for (std::size_t i = 0; i < count; ++i) d[i] = z[i].re;
  }

 private:
  static double f_mul_scale(double c, double scale) { return ckks::f_mul(c, scale); }
};

}  // namespace

std::unique_ptr<CkksEncodeOps> make_cpu_ckks_encode() { return std::make_unique<CpuCkksEncode>(); }

}  // namespace ember::backend
