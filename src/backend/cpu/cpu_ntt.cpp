// Negacyclic NTT / INTT of one limb on the CPU: Cooley-Tukey forward, Gentleman-Sande inverse.
#include "cpu_ntt.h"

namespace ember::cpu {

void ntt_forward_limb(u64* a, std::size_t n, const u64* w, const u64* ws, u64 q) {
  // Stage m has m groups of 2t coefficients; group i uses twiddle psi^bitrev(m + i).
  std::size_t t = n;
  for (std::size_t m = 1; m < n; m <<= 1) {
    t >>= 1;
    for (std::size_t i = 0; i < m; ++i) {
      const u64 wi = w[m + i], wsi = ws[m + i];
      u64* x = a + 2 * i * t;
      u64* y = x + t;
      for (std::size_t j = 0; j < t; ++j) ct_butterfly(x[j], y[j], wi, wsi, q);
    }
  }
  for (std::size_t j = 0; j < n; ++j) a[j] = reduce_4q(a[j], q);
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
