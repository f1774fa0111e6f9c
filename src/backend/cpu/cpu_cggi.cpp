// The CPU backend's CGGI family: the reference implementation over cggi_rows.h and cggi_fft.h,
// OpenMP over the ciphertexts of a batch.
#include "cpu_cggi.h"

#include <algorithm>
#include <vector>

#include "ember/backend/cggi_fft.h"
#include "ember/backend/cggi_rows.h"
#include "ember/core/errors.h"

namespace ember::backend {

namespace {

using cggi::i64;

using cggi::Cx;

/// Scratch of one blind rotation: the accumulator, the CMux's difference, its (k+1) l digit
/// spectra and the limbs of one output's products (N / 2 complex values each).
template <class T>
struct RotationScratch {
  std::vector<T> acc, diff;
  std::vector<Cx> spectra, sums;
  explicit RotationScratch(const CggiShape& s)
      : acc((s.k + 1) * s.N),
        diff((s.k + 1) * s.N),
        spectra(s.rows() * s.N / 2),
        sums(s.limbs * s.N / 2) {}
};

/// The phases of one blind rotation: each CMux decomposes the k+1 polynomials of X^e acc - acc,
/// transforms the (k+1) l digit rows and accumulates the k+1 outputs (the units a GPU block
/// shares out among its threads), every floating-point operation in the GPU's order.
template <class T>
struct Rotation {
  const CggiShape& s;
  const BootstrapKeyView& bsk;
  RotationScratch<T>& w;
  const T* in;

  int log2_2n() const { return s.log2_n + 1; }

  /// acc = (0, X^-b test).
  void start(const T* test) {
    const std::size_t N = s.N, two_n = 2 * N;
    std::fill(w.acc.begin(), w.acc.begin() + s.k * N, T{0});
    const std::size_t b = cggi::mod_switch(in[s.n], log2_2n());
    cggi::rotate_monomial(w.acc.data() + s.k * N, test, N, (two_n - b) % two_n);
  }
  /// The exponent of CMux i (0: the CMux adds nothing).
  std::size_t exponent(std::size_t i) const { return cggi::mod_switch(in[i], log2_2n()); }
  /// Polynomial p of X^e acc - acc, decomposed into its l digit polynomials, folded
  /// (coefficients j and j + N/2 as one complex value).
  void decompose(std::size_t p, std::size_t e) {
    const std::size_t N = s.N, L = s.bk_levels, half = N / 2;
    T* diff = w.diff.data() + p * N;
    cggi::rotate_minus_self(diff, w.acc.data() + p * N, N, e);
    for (std::size_t j = 0; j < half; ++j)
      cggi::decompose_pair_each(
          diff[j], diff[j + half], s.bk_base_log, s.bk_levels, [&](int l, i64 a, i64 b) {
            w.spectra[(p * L + l) * half + j] = {static_cast<double>(a), static_cast<double>(b)};
          });
  }
  void transform(std::size_t r) {
    cggi::fft_forward(w.spectra.data() + r * s.N / 2, s.N / 2, static_cast<const Cx*>(bsk.forward));
  }
  /// acc_o += sum over the key's limbs c of 2^(c limb_bits) round(invFFT(sum_r digits_r
  /// key_(i, r, o, c))), the rows summed in row order.
  void accumulate(std::size_t i, std::size_t o) {
    const std::size_t half = s.N / 2, rows = s.rows(), limbs = s.limbs;
    const std::size_t row_stride = (s.k + 1) * limbs;  // key rows apart, in polynomials
    const Cx* key = static_cast<const Cx*>(bsk.ggsw) + i * s.ggsw_ntt_words() / 2;
    for (std::size_t c = 0; c < limbs; ++c) {
      Cx* sum = w.sums.data() + c * half;
      const Cx* k0 = key + (o * limbs + c) * half;
      for (std::size_t f = 0; f < half; ++f) {
        Cx a{0.0, 0.0};
        for (std::size_t r = 0; r < rows; ++r)
          a = cggi::cx_mac(a, w.spectra[r * half + f], k0[r * row_stride * half + f]);
        sum[f] = a;
      }
      cggi::fft_inverse_unscaled(sum, half, static_cast<const Cx*>(bsk.inverse));
    }
    T* acc = w.acc.data() + o * s.N;
    for (std::size_t j = 0; j < half; ++j) {
      T lo = acc[j], hi = acc[j + half];
      for (std::size_t c = 0; c < limbs; ++c) {
        const int shift = static_cast<int>(c) * s.limb_bits;
        lo = static_cast<T>(lo + cggi::limb_to_torus<T>(w.sums[c * half + j].re, shift));
        hi = static_cast<T>(hi + cggi::limb_to_torus<T>(w.sums[c * half + j].im, shift));
      }
      acc[j] = lo;
      acc[j + half] = hi;
    }
  }
  void finish(T* out) { cggi::sample_extract(out, w.acc.data(), s.k, s.N); }
};

/// One blind rotation of `test` by the small-key ciphertext `in`, extracted into `out`, on
/// the calling thread.
template <class T>
void blind_rotate_one(T* out, const T* in, const T* test, const CggiShape& s,
                      const BootstrapKeyView& bsk, RotationScratch<T>& w) {
  Rotation<T> r{s, bsk, w, in};
  r.start(test);
  for (std::size_t i = 0; i < s.n; ++i) {
    const std::size_t e = r.exponent(i);
    if (e == 0) continue;
    for (std::size_t p = 0; p <= s.k; ++p) r.decompose(p, e);
    for (std::size_t row = 0; row < s.rows(); ++row) r.transform(row);
    for (std::size_t o = 0; o <= s.k; ++o) r.accumulate(i, o);
  }
  r.finish(out);
}

class CpuCggi final : public CggiOps {
 public:
  explicit CpuCggi(CpuThreads& threads) : threads_(threads) {}

  void bootstrap_key_transform_async(void* out_words, const void* ggsw, std::size_t count,
                                     const CggiShape& s, const void* forward, Stream) override {
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      const T* in = static_cast<const T*>(ggsw);
      Cx* out = static_cast<Cx*>(out_words);
      const std::size_t N = s.N, half = N / 2, polys = count * s.rows() * (s.k + 1);
      const long total = static_cast<long>(polys);
#pragma omp parallel for schedule(static) num_threads(threads_.team())
      for (long t = 0; t < total; ++t)
        cggi::fourier_key_polynomial(out + t * s.limbs * half, in + t * N, half,
                                     static_cast<const Cx*>(forward), s.limb_bits, s.limbs);
    });
  }

  void blind_rotate_extract_async(void* out, const void* in, const void* test_polys,
                                  std::size_t test_stride, std::size_t count, const CggiShape& s,
                                  const BootstrapKeyView& bsk, Stream) override {
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      T* o = static_cast<T*>(out);
      const T* x = static_cast<const T*>(in);
      const T* test = static_cast<const T*>(test_polys);
      const long total = static_cast<long>(count);
      const std::size_t in_words = s.n + 1, out_words = s.big_dim() + 1;
      // One thread per ciphertext, and no more threads than ciphertexts. (Sharing one rotation
      // among threads costs three barriers per CMux: 16% faster on an idle 2-core machine,
      // 80 times slower when another process holds a core. Latency belongs to the GPU.)
      const int team = static_cast<int>(std::min<long>(threads_.team(), std::max(total, 1L)));
#pragma omp parallel num_threads(team)
      {
        RotationScratch<T> w(s);
#pragma omp for schedule(dynamic)
        for (long t = 0; t < total; ++t)
          blind_rotate_one(o + t * out_words, x + t * in_words, test + t * test_stride, s, bsk, w);
      }
    });
  }

  void key_switch_async(void* out, const void* in, const void* ksk, std::size_t count,
                        const CggiShape& s, Stream) override {
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      T* o = static_cast<T*>(out);
      const T* x = static_cast<const T*>(in);
      const T* key = static_cast<const T*>(ksk);
      const std::size_t big = s.big_dim(), n = s.n, row = s.ks_levels * (n + 1);
      const long total = static_cast<long>(count);
      const int team = static_cast<int>(std::min<long>(threads_.team(), std::max(total, 1L)));
#pragma omp parallel for schedule(static) num_threads(team)
      for (long t = 0; t < total; ++t) {
        T* dst = o + t * (n + 1);
        const T* src = x + t * (big + 1);
        std::fill(dst, dst + n, T{0});
        dst[n] = src[big];
        for (std::size_t i = 0; i < big; ++i)
          cggi::key_switch_row(dst, src[i], key + i * row, n, s.ks_base_log, s.ks_levels);
      }
    });
  }

  void add_messages_async(void* words, const std::uint8_t* values, u64 scale, u64 offset,
                          std::uint8_t limit, std::uint32_t* bad, std::size_t dim,
                          std::size_t count, const CggiShape& s, Stream) override {
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      T* w = static_cast<T*>(words);
      for (std::size_t i = 0; i < count; ++i) {
        if (values[i] >= limit) *bad = 1;
        T& body = w[i * (dim + 1) + dim];
        body = cggi::plus_message(body, values[i], static_cast<T>(scale), static_cast<T>(offset));
      }
    });
  }
  void decode_messages_async(std::uint8_t* out, const void* words, const std::uint8_t* key,
                             std::size_t dim, std::size_t count, int message_bits,
                             const CggiShape& s, Stream) override {
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      const T* w = static_cast<const T*>(words);
      const long total = static_cast<long>(count);
#pragma omp parallel for schedule(static) num_threads(threads_.team()) if (total > 256)
      for (long i = 0; i < total; ++i)
        out[i] = cggi::message_of_phase(cggi::lwe_phase(w + i * (dim + 1), key, dim), message_bits);
    });
  }
  void linear_async(void* out, const void* a, const void* b, std::int64_t ca, std::int64_t cb,
                    u64 constant, std::size_t dim, std::size_t count, const CggiShape& s,
                    Stream) override {
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      T* o = static_cast<T*>(out);
      const T* x = static_cast<const T*>(a);
      const T* y = static_cast<const T*>(b);
      const T wa = static_cast<T>(ca), wb = static_cast<T>(cb), c = static_cast<T>(constant);
      const std::size_t words = dim + 1;
      const long total = static_cast<long>(count * words);
#pragma omp parallel for schedule(static) num_threads(threads_.team()) if (total > (1 << 16))
      for (long t = 0; t < total; ++t) {
        T v = static_cast<T>(wa * x[t]);
        if (y) v = static_cast<T>(v + wb * y[t]);
        if (static_cast<std::size_t>(t) % words == dim) v = static_cast<T>(v + c);
        o[t] = v;
      }
    });
  }

  void gather_async(void* out, const std::uint32_t* out_index, const void* src,
                    const std::uint32_t* src_lits, std::size_t dim, std::size_t count,
                    const CggiShape& s, Stream) override {
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      T* o = static_cast<T*>(out);
      const T* x = static_cast<const T*>(src);
      const std::size_t words = dim + 1;
      const long total = static_cast<long>(count);
#pragma omp parallel for schedule(static) \
    num_threads(threads_.team()) if (count * words > (std::size_t{1} << 16))
      for (long i = 0; i < total; ++i) {
        const std::uint32_t lit = src_lits ? src_lits[i] : static_cast<std::uint32_t>(2 * i);
        const T* from = x + (lit >> 1) * words;
        T* to = o + (out_index ? out_index[i] : static_cast<std::size_t>(i)) * words;
        if (lit & 1)
          for (std::size_t w = 0; w < words; ++w) to[w] = static_cast<T>(T{0} - from[w]);
        else
          std::copy(from, from + words, to);
      }
    });
  }

 private:
  CpuThreads& threads_;
};

}  // namespace

std::unique_ptr<CggiOps> make_cpu_cggi(CpuThreads& threads) {
  return std::make_unique<CpuCggi>(threads);
}

}  // namespace ember::backend
