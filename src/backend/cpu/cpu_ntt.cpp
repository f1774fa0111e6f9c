// Negacyclic NTT / INTT of one limb on the CPU: Cooley-Tukey forward, Gentleman-Sande inverse, on
// 64- or 32-bit words (one code, two instantiations).
#include "cpu_ntt.h"

namespace ember::cpu {

namespace {

/// The forward stages with butterfly `ct` (stage m has m groups of 2t coefficients; group i uses
/// twiddle psi^bitrev(m + i)).
template <class W, class Butterfly>
void forward_stages(W* a, std::size_t n, const W* w, const W* ws, const Butterfly& ct) {
  std::size_t t = n;
  for (std::size_t m = 1; m < n; m <<= 1) {
    t >>= 1;
    for (std::size_t i = 0; i < m; ++i) {
      const W wi = w[m + i], wsi = ws[m + i];
      W* x = a + 2 * i * t;
      W* y = x + t;
      for (std::size_t j = 0; j < t; ++j) ct(x[j], y[j], wi, wsi);
    }
  }
}

}  // namespace

template <class W>
void ntt_forward_limb(W* a, std::size_t n, const W* w, const W* ws, const ModulusT<W>& m) {
  const W q = m.value;
  if constexpr (sizeof(W) == 8) {
    if (!(q >> kUnreducedCtMaxBits)) {
      // Primes below 2^57 (the GPU's unreduced transforms, see kUnreducedCtMaxBits): the exact
      // Shoup product is in [0, 2q), so a stage without reductions adds 2q to the bound, which
      // from inputs below 4q stays below 38q < 2^63 over 17 stages; one Barrett reduction at the
      // end. (32-bit words have no such headroom.)
      const u64 two_q = 2 * q;
      forward_stages(a, n, w, ws, [q, two_q](u64& x, u64& y, u64 wi, u64 wsi) {
        const u64 v = x, t = mul_shoup_lazy(y, wi, wsi, q);
        x = v + t;
        y = v - t + two_q;
      });
      for (std::size_t j = 0; j < n; ++j) a[j] = barrett_reduce_64(a[j], m);
      return;
    }
  }
  forward_stages(a, n, w, ws, [q](W& x, W& y, W wi, W wsi) { ct_butterfly<W>(x, y, wi, wsi, q); });
  for (std::size_t j = 0; j < n; ++j) a[j] = reduce_4q<W>(a[j], q);
}

template <class W>
void ntt_inverse_limb(W* a, std::size_t n, const W* w, const W* ws, Word<W> n_inv,
                      Word<W> n_inv_shoup, Word<W> q) {
  std::size_t t = 1;
  for (std::size_t m = n; m > 1; m >>= 1) {
    const std::size_t h = m >> 1;
    for (std::size_t i = 0; i < h; ++i) {
      const W wi = w[h + i], wsi = ws[h + i];
      W* x = a + 2 * i * t;
      W* y = x + t;
      for (std::size_t j = 0; j < t; ++j) gs_butterfly<W>(x[j], y[j], wi, wsi, q);
    }
    t <<= 1;
  }
  for (std::size_t j = 0; j < n; ++j) a[j] = mul_shoup<W>(a[j], n_inv, n_inv_shoup, q);
}

template void ntt_forward_limb<u64>(u64*, std::size_t, const u64*, const u64*, const Modulus&);
template void ntt_forward_limb<u32>(u32*, std::size_t, const u32*, const u32*, const Modulus32&);
template void ntt_inverse_limb<u64>(u64*, std::size_t, const u64*, const u64*, u64, u64, u64);
template void ntt_inverse_limb<u32>(u32*, std::size_t, const u32*, const u32*, u32, u32, u32);

}  // namespace ember::cpu
