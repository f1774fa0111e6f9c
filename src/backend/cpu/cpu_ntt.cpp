// Negacyclic NTT / INTT of one limb on the CPU: Cooley-Tukey forward, Gentleman-Sande inverse.
#include "cpu_ntt.h"

namespace ember::cpu {

namespace {

/// The forward stages with butterfly `ct` (stage m has m groups of 2t coefficients; group i uses
/// twiddle psi^bitrev(m + i)).
template <class Butterfly>
void forward_stages(u64* a, std::size_t n, const u64* w, const u64* ws, const Butterfly& ct) {
  std::size_t t = n;
  for (std::size_t m = 1; m < n; m <<= 1) {
    t >>= 1;
    for (std::size_t i = 0; i < m; ++i) {
      const u64 wi = w[m + i], wsi = ws[m + i];
      u64* x = a + 2 * i * t;
      u64* y = x + t;
      for (std::size_t j = 0; j < t; ++j) ct(x[j], y[j], wi, wsi);
    }
  }
}

}  // namespace

void ntt_forward_limb(u64* a, std::size_t n, const u64* w, const u64* ws, const Modulus& m) {
  const u64 q = m.value;
  if (q >> kUnreducedCtMaxBits) {
    forward_stages(a, n, w, ws,
                   [q](u64& x, u64& y, u64 wi, u64 wsi) { ct_butterfly(x, y, wi, wsi, q); });
    for (std::size_t j = 0; j < n; ++j) a[j] = reduce_4q(a[j], q);
    return;
  }
  // Primes below 2^57 (the GPU's unreduced transforms, see kUnreducedCtMaxBits): the exact Shoup
  // product is in [0, 2q), so a stage without reductions adds 2q to the bound, which from inputs
  // below 4q stays below 38q < 2^63 over 17 stages; one Barrett reduction at the end.
  const u64 two_q = 2 * q;
  forward_stages(a, n, w, ws, [q, two_q](u64& x, u64& y, u64 wi, u64 wsi) {
    const u64 v = x, t = mul_shoup_lazy(y, wi, wsi, q);
    x = v + t;
    y = v - t + two_q;
  });
  for (std::size_t j = 0; j < n; ++j) a[j] = barrett_reduce_64(a[j], m);
}

void ntt_inverse_limb(u64* a, std::size_t n, const u64* w, const u64* ws, u64 n_inv,
                      u64 n_inv_shoup, u64 q) {
  std::size_t t = 1;
  for (std::size_t m = n; m > 1; m >>= 1) {
    const std::size_t h = m >> 1;
    for (std::size_t i = 0; i < h; ++i) {
      const u64 wi = w[h + i], wsi = ws[h + i];
      u64* x = a + 2 * i * t;
      u64* y = x + t;
      for (std::size_t j = 0; j < t; ++j) gs_butterfly(x[j], y[j], wi, wsi, q);
    }
    t <<= 1;
  }
  for (std::size_t j = 0; j < n; ++j) a[j] = mul_shoup(a[j], n_inv, n_inv_shoup, q);
}

}  // namespace ember::cpu
