// The CPU backend: the reference implementation of every ring primitive (OpenMP over limbs).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "cpu_big_int.h"
#include "cpu_cggi.h"
#include "cpu_ckks_encode.h"
#include "cpu_integer_encode.h"
#include "cpu_ntt.h"
#include "cpu_threads.h"
#include "ember/backend/backend.h"
#include "ember/backend/rows.h"
#include "ember/core/errors.h"

namespace ember::backend {

namespace {

using backend::rows::kWordsPerBlock;

class CpuBackend final : public Backend {
 public:
  /// CPU device `index`; every CPU device runs on the same OpenMP pool (`threads`).
  CpuBackend(int index, CpuThreads& threads)
      : index_(index),
        threads_(threads),
        cggi_(make_cpu_cggi(threads)),
        ckks_encode_(make_cpu_ckks_encode()),
        integer_encode_(make_cpu_integer_encode()),
        big_int_(make_cpu_big_int(threads)) {}
  Device device() const override { return Device{DeviceKind::cpu, index_}; }
  CggiOps& cggi() override { return *cggi_; }
  CkksEncodeOps& ckks_encode() override { return *ckks_encode_; }
  IntegerEncodeOps& integer_encode() override { return *integer_encode_; }
  BigIntOps& big_int() override { return *big_int_; }

  void* allocate(std::size_t bytes, Stream) override {
    // 64-byte alignment for vector loads; size rounded up as aligned_alloc requires.
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void deallocate(void* p, std::size_t, Stream) noexcept override { std::free(p); }
  void copy_from_host_async(void* d, const void* s, std::size_t n, Stream) override {
    std::memcpy(d, s, n);
  }
  void copy_to_host_async(void* d, const void* s, std::size_t n, Stream) override {
    std::memcpy(d, s, n);
  }
  void copy_async(void* d, const void* s, std::size_t n, Stream) override { std::memmove(d, s, n); }
  void synchronize(Stream) override {}
  Stream default_stream() override { return {}; }
  // Work is done when enqueued: streams and events are null handles.
  Stream create_stream() override { return {}; }
  void destroy_stream(Stream) noexcept override {}
  Event create_event() override { return {}; }
  void destroy_event(Event) noexcept override {}
  void record_event(Event, Stream) override {}
  void wait_event(Stream, Event) override {}
  void synchronize_event(Event) override {}
  void copy_from_peer_async(void* d, const void* s, const Device&, std::size_t n, Stream) override {
    std::memcpy(d, s, n);
  }

  std::vector<double> time_runs(const std::function<void(Stream)>& fn, int warmup,
                                int iters) override {
    for (int i = 0; i < warmup; ++i) fn({});
    std::vector<double> ms;
    for (int i = 0; i < iters; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      fn({});
      auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    return ms;
  }
  std::vector<std::string> ntt_variants() const override { return {"harvey"}; }
  std::string ntt_variant_for(std::size_t, std::size_t, int) const override { return "harvey"; }

  void ntt_forward_async(u64* data, const BasisView& b, std::size_t count, Stream) override {
    ntt_limbs(data, nullptr, b, count, true);
  }
  void ntt_inverse_async(u64* data, const BasisView& b, std::size_t count, Stream) override {
    ntt_limbs(data, nullptr, b, count, false);
  }
  void ntt_forward_async(u32* data, const BasisView32& b, std::size_t count, Stream) override {
    ntt_limbs<u32>(data, nullptr, b, count, true);
  }
  void ntt_inverse_async(u32* data, const BasisView32& b, std::size_t count, Stream) override {
    ntt_limbs<u32>(data, nullptr, b, count, false);
  }
  void ntt_forward_async(u64* out, const u64* const* in, const BasisView& b, std::size_t count,
                         Stream, std::size_t source_rows) override {
    ntt_limbs(out, in, b, count, true, source_rows);
  }
  void ntt_inverse_async(u64* out, const u64* const* in, const BasisView& b, std::size_t count,
                         Stream, std::size_t source_rows) override {
    ntt_limbs(out, in, b, count, false, source_rows);
  }
  void ntt_forward_lifted_async(u64* out, const LiftedRows& src, const BasisView& b,
                                Stream) override {
    const std::size_t rows_per_source = src.rows_per_source;
    if (rows_per_source == 0 || rows_per_source > b.limbs)
      throw ParameterError("ntt_forward_lifted: rows_per_source must be in [1, limbs]");
    const auto& r = *b.ring;
    const long rows = static_cast<long>(b.limbs);
#pragma omp parallel for schedule(static) num_threads(threads_.team())
    for (long t = 0; t < rows; ++t) {
      const u32 id = b.host_ids[t];
      const Modulus& m = r.moduli[id];
      const u64* from = src.words + (t / static_cast<long>(rows_per_source)) * r.n;
      u64* limb = out + t * r.n;
      for (std::size_t c = 0; c < r.n; ++c) limb[c] = barrett_reduce_64(from[c], m);
      cpu::ntt_forward_limb(limb, r.n, r.psi_rev + id * r.n, r.psi_rev_shoup + id * r.n, m);
    }
  }
  /// Every limb of `count` polynomials, in place or (in != nullptr) from in[k].
  /// With `in`, polynomial k's rows below source_rows (all when 0) come from in[k].
  /// On 64- or 32-bit words (W: u64 or u32).
  template <class W>
  void ntt_limbs(W* out, const Word<W>* const* in, const BasisViewT<W>& b, std::size_t count,
                 bool forward, std::size_t source_rows = 0) {
    const auto& r = *b.ring;
    const long total = static_cast<long>(count * b.limbs);
#pragma omp parallel for schedule(static) num_threads(threads_.team())
    for (long t = 0; t < total; ++t) {
      const u32 id = b.host_ids[t % b.limbs];
      W* limb = out + t * r.n;
      if (in && (source_rows == 0 || static_cast<std::size_t>(t) % b.limbs < source_rows)) {
        const W* src = in[t / b.limbs] + (t % b.limbs) * r.n;
        if (src != limb) std::copy(src, src + r.n, limb);
      }
      if (forward)
        cpu::ntt_forward_limb(limb, r.n, r.psi_rev + id * r.n, r.psi_rev_shoup + id * r.n,
                              r.moduli[id]);
      else
        cpu::ntt_inverse_limb(limb, r.n, r.psi_inv_rev + id * r.n, r.psi_inv_rev_shoup + id * r.n,
                              r.n_inv[id], r.n_inv_shoup[id], r.moduli[id].value);
    }
  }

  template <class W, class F>
  void per_limb(const BasisViewT<W>& b, F&& f) {
#pragma omp parallel for schedule(static) num_threads(threads_.team())
    for (long l = 0; l < static_cast<long>(b.limbs); ++l) f(l, b.ring->moduli[b.host_ids[l]]);
  }
  /// out[i] = op(i, limb's modulus) over every word, on 64- or 32-bit words.
  template <class W, class Op>
  void per_word(W* out, const BasisViewT<W>& b, Op&& op) {
    const std::size_t n = b.ring->n;
    per_limb(b, [&](long l, const ModulusT<W>& m) {
      for (std::size_t i = l * n; i < (l + 1) * n; ++i) out[i] = op(i, m);
    });
  }
  template <class W>
  void add_words(W* out, const W* a, const W* c, const BasisViewT<W>& b) {
    per_word(out, b,
             [&](std::size_t i, const ModulusT<W>& m) { return add_mod<W>(a[i], c[i], m.value); });
  }
  template <class W>
  void sub_words(W* out, const W* a, const W* c, const BasisViewT<W>& b) {
    per_word(out, b,
             [&](std::size_t i, const ModulusT<W>& m) { return sub_mod<W>(a[i], c[i], m.value); });
  }
  template <class W>
  void negate_words(W* out, const W* a, const BasisViewT<W>& b) {
    per_word(out, b,
             [&](std::size_t i, const ModulusT<W>& m) { return neg_mod<W>(a[i], m.value); });
  }
  template <class W>
  void multiply_words(W* out, const W* a, const W* c, const BasisViewT<W>& b) {
    per_word(out, b,
             [&](std::size_t i, const ModulusT<W>& m) { return mul_mod<W>(a[i], c[i], m); });
  }
  template <class W>
  void multiply_accumulate_words(W* out, const W* a, const W* c, const BasisViewT<W>& b) {
    per_word(out, b, [&](std::size_t i, const ModulusT<W>& m) {
      return add_mod<W>(out[i], mul_mod<W>(a[i], c[i], m), m.value);
    });
  }

  void add_async(u64* out, const u64* a, const u64* c, const BasisView& b, Stream) override {
    add_words(out, a, c, b);
  }
  void sub_async(u64* out, const u64* a, const u64* c, const BasisView& b, Stream) override {
    sub_words(out, a, c, b);
  }
  void negate_async(u64* out, const u64* a, const BasisView& b, Stream) override {
    negate_words(out, a, b);
  }
  void multiply_async(u64* out, const u64* a, const u64* c, const BasisView& b, Stream) override {
    multiply_words(out, a, c, b);
  }
  void add_async(u32* out, const u32* a, const u32* c, const BasisView32& b, Stream) override {
    add_words(out, a, c, b);
  }
  void sub_async(u32* out, const u32* a, const u32* c, const BasisView32& b, Stream) override {
    sub_words(out, a, c, b);
  }
  void negate_async(u32* out, const u32* a, const BasisView32& b, Stream) override {
    negate_words(out, a, b);
  }
  void multiply_async(u32* out, const u32* a, const u32* c, const BasisView32& b, Stream) override {
    multiply_words(out, a, c, b);
  }
  void multiply_accumulate_async(u32* out, const u32* a, const u32* c, const BasisView32& b,
                                 Stream) override {
    multiply_accumulate_words(out, a, c, b);
  }
  void tensor_async(u64* d0, u64* d1, u64* d2, const u64* a0, const u64* a1, const u64* b0,
                    const u64* b1, const BasisView& b, Stream, const TensorUpper* upper) override {
    tensor_words(d0, d1, d2, a0, a1, b0, b1, b, upper);
  }
  void tensor_async(u32* d0, u32* d1, u32* d2, const u32* a0, const u32* a1, const u32* b0,
                    const u32* b1, const BasisView32& b, Stream) override {
    tensor_words(d0, d1, d2, a0, a1, b0, b1, b, nullptr);
  }
  template <class W>
  void tensor_words(W* d0, W* d1, W* d2, const W* a0, const W* a1, const W* b0, const W* b1,
                    const BasisViewT<W>& b, const TensorUpper* upper) {
    const std::size_t n = b.ring->n;
    per_limb(b, [&](long l, const ModulusT<W>& m) {
      const bool up = upper && static_cast<std::size_t>(l) >= upper->split;
      const std::size_t shift = up ? upper->split * n : 0;  // the upper operands start there
      const W *p0 = a0, *p1 = a1, *q0 = b0, *q1 = b1;
      if constexpr (sizeof(W) == 8)
        if (up) p0 = upper->a0, p1 = upper->a1, q0 = upper->b0, q1 = upper->b1;
      for (std::size_t i = l * n; i < (l + 1) * n; ++i) {
        const std::size_t at = i - shift;
        const W x0 = p0[at], x1 = p1[at], y0 = q0[at], y1 = q1[at];
        d0[i] = mul_mod<W>(x0, y0, m);
        d1[i] = backend::rows::mul_add_mul<W>(x0, y1, x1, y0, m);
        d2[i] = mul_mod<W>(x1, y1, m);
      }
    });
  }
  void multiply_accumulate_async(u64* out, const u64* a, const u64* c, const BasisView& b,
                                 Stream) override {
    multiply_accumulate_words(out, a, c, b);
  }
  void dot_plain_async(u64* out0, u64* out1, const std::vector<const u64*>& a0,
                       const std::vector<const u64*>& a1, const std::vector<const u64*>& p,
                       const u64* add0, const u64* add1, const BasisView& b, Stream) override {
    dot_plain_words(out0, out1, a0, a1, p, add0, add1, b);
  }
  void dot_plain_async(u32* out0, u32* out1, const std::vector<const u32*>& a0,
                       const std::vector<const u32*>& a1, const std::vector<const u32*>& p,
                       const u32* add0, const u32* add1, const BasisView32& b, Stream) override {
    dot_plain_words(out0, out1, a0, a1, p, add0, add1, b);
  }
  template <class W>
  void dot_plain_words(W* out0, W* out1, const std::vector<const W*>& a0,
                       const std::vector<const W*>& a1, const std::vector<const W*>& p,
                       const W* add0, const W* add1, const BasisViewT<W>& b) {
    if (p.empty() || p.size() > kMaxDotTerms || a0.size() != p.size() || a1.size() != p.size())
      throw ParameterError("dot_plain: 1 to 32 terms, as many ciphertexts as plaintexts");
    const std::size_t n = b.ring->n, terms = p.size();
    per_limb(b, [&](long l, const ModulusT<W>& m) {
      for (std::size_t i = l * n; i < (l + 1) * n; ++i) {
        backend::rows::WideOf<W> s0, s1;
        for (std::size_t t = 0; t < terms; ++t) {
          s0.add_product(a0[t][i], p[t][i]);
          s1.add_product(a1[t][i], p[t][i]);
          backend::rows::fold_every(t, m, s0, s1);
        }
        const W r0 = s0.reduce(m), r1 = s1.reduce(m);
        out0[i] = add0 ? add_mod<W>(r0, add0[i], m.value) : r0;
        out1[i] = add1 ? add_mod<W>(r1, add1[i], m.value) : r1;
      }
    });
  }
  void multiply_scalar_async(u64* out, const u64* a, const std::vector<u64>& scalars,
                             const BasisView& b, Stream) override {
    multiply_scalar_words<u64>(out, a, scalars, b);
  }
  void multiply_scalar_async(u32* out, const u32* a, const std::vector<u64>& scalars,
                             const BasisView32& b, Stream) override {
    multiply_scalar_words<u32>(out, a, scalars, b);
  }
  template <class W>
  void multiply_scalar_words(W* out, const W* a, const std::vector<u64>& scalars,
                             const BasisViewT<W>& b) {
    const std::size_t n = b.ring->n;
    per_limb(b, [&](long l, const ModulusT<W>& m) {
      const W s = static_cast<W>(scalars[l] % m.value);
      const W ss = shoup_precompute<W>(s, m.value);
      for (std::size_t i = l * n; i < (l + 1) * n; ++i) out[i] = mul_shoup<W>(a[i], s, ss, m.value);
    });
  }
  void automorphism_accumulate_async(u64* out, const u64* a, u64 k, const std::vector<u64>& scalars,
                                     const BasisView& b, Stream) override {
    automorphism_accumulate_words(out, a, k, scalars, b);
  }
  void automorphism_accumulate_async(u32* out, const u32* a, u64 k, const std::vector<u64>& scalars,
                                     const BasisView32& b, Stream) override {
    automorphism_accumulate_words(out, a, k, scalars, b);
  }
  template <class W>
  void automorphism_accumulate_words(W* out, const W* a, u64 k, const std::vector<u64>& scalars,
                                     const BasisViewT<W>& b) {
    const std::size_t n = b.ring->n;
    const int log_n = b.ring->log_n;
    per_limb(b, [&](long l, const ModulusT<W>& m) {
      const W s = static_cast<W>(scalars[l] % m.value);
      const W ss = shoup_precompute<W>(s, m.value);
      const W* src = a + l * n;
      W* dst = out + l * n;
      for (std::size_t j = 0; j < n; ++j) {
        const W v = src[backend::rows::automorphism_eval_source(static_cast<u32>(j), k, log_n)];
        dst[j] = add_mod<W>(dst[j], mul_shoup<W>(v, s, ss, m.value), m.value);
      }
    });
  }
  void automorphism_async(u64* out, const u64* a, u64 k, bool eval, const BasisView& b,
                          Stream) override {
    automorphism_words(out, a, k, eval, b);
  }
  void automorphism_async(u32* out, const u32* a, u64 k, bool eval, const BasisView32& b,
                          Stream) override {
    automorphism_words(out, a, k, eval, b);
  }
  void narrow_words_async(u32* out, const u64* a, std::size_t count, Stream) override {
    for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<u32>(a[i]);
  }
  void widen_words_async(u64* out, const u32* a, std::size_t count, Stream) override {
    for (std::size_t i = 0; i < count; ++i) out[i] = a[i];
  }
  template <class W>
  void automorphism_words(W* out, const W* a, u64 k, bool eval, const BasisViewT<W>& b) {
    const std::size_t n = b.ring->n;
    const int log_n = b.ring->log_n;
    per_limb(b, [&](long l, const ModulusT<W>& m) {
      const W* src = a + l * n;
      W* dst = out + l * n;
      if (eval) {
        for (std::size_t j = 0; j < n; ++j)
          dst[j] = src[backend::rows::automorphism_eval_source(static_cast<u32>(j), k, log_n)];
      } else {
        for (std::size_t i = 0; i < n; ++i) {
          bool neg;
          u32 d = backend::rows::automorphism_coeff_dest(static_cast<u32>(i), k, log_n, neg);
          dst[d] = neg ? neg_mod<W>(src[i], m.value) : src[i];
        }
      }
    });
  }

  void linear_combination_async(u64* out0, u64* out1, const std::vector<const u64*>& a0,
                                const std::vector<const u64*>& a1,
                                const std::vector<std::vector<u64>>& scalars,
                                const std::vector<u64>& constant, const BasisView& b, Stream,
                                bool constant_coeff) override {
    linear_combination_words(out0, out1, a0, a1, scalars, constant, b, constant_coeff);
  }
  void linear_combination_async(u32* out0, u32* out1, const std::vector<const u32*>& a0,
                                const std::vector<const u32*>& a1,
                                const std::vector<std::vector<u64>>& scalars,
                                const std::vector<u64>& constant, const BasisView32& b, Stream,
                                bool constant_coeff) override {
    linear_combination_words(out0, out1, a0, a1, scalars, constant, b, constant_coeff);
  }
  template <class W>
  void linear_combination_words(W* out0, W* out1, const std::vector<const W*>& a0,
                                const std::vector<const W*>& a1,
                                const std::vector<std::vector<u64>>& scalars,
                                const std::vector<u64>& constant, const BasisViewT<W>& b,
                                bool constant_coeff) {
    check_linear_combination(a0.size(), a1.size(), scalars, constant, b.limbs);
    const std::size_t n = b.ring->n, terms = a0.size();
    per_limb(b, [&](long l, const ModulusT<W>& m) {
      std::vector<W> s(terms);
      for (std::size_t t = 0; t < terms; ++t) s[t] = static_cast<W>(scalars[t][l] % m.value);
      const W c = static_cast<W>(constant[l] % m.value);
      for (std::size_t i = l * n; i < (l + 1) * n; ++i) {
        backend::rows::WideOf<W> s0, s1;
        if (!constant_coeff || i == l * n) s0.add_product(c, 1);
        for (std::size_t t = 0; t < terms; ++t) {
          s0.add_product(a0[t][i], s[t]);
          s1.add_product(a1[t][i], s[t]);
          backend::rows::fold_every(t, m, s0, s1);
        }
        out0[i] = s0.reduce(m);
        out1[i] = s1.reduce(m);
      }
    });
  }
  void linear_map_async(const std::vector<u64*>& out0, const std::vector<u64*>& out1,
                        const std::vector<const u64*>& a0, const std::vector<const u64*>& a1,
                        const std::vector<u64>& weights, const std::vector<u64>& constants,
                        const BasisView& b, Stream, bool constant_coeff) override {
    linear_map_words(out0, out1, a0, a1, weights, constants, b, constant_coeff);
  }
  void linear_map_async(const std::vector<u32*>& out0, const std::vector<u32*>& out1,
                        const std::vector<const u32*>& a0, const std::vector<const u32*>& a1,
                        const std::vector<u64>& weights, const std::vector<u64>& constants,
                        const BasisView32& b, Stream, bool constant_coeff) override {
    linear_map_words(out0, out1, a0, a1, weights, constants, b, constant_coeff);
  }
  template <class W>
  void linear_map_words(const std::vector<W*>& out0, const std::vector<W*>& out1,
                        const std::vector<const W*>& a0, const std::vector<const W*>& a1,
                        const std::vector<u64>& weights, const std::vector<u64>& constants,
                        const BasisViewT<W>& b, bool constant_coeff) {
    check_linear_map(out0.size(), out1.size(), a0.size(), a1.size(), weights, constants, b.limbs);
    const std::size_t n = b.ring->n, inputs = a0.size(), outputs = out0.size();
    const std::size_t limbs = b.limbs;
    // Products between reductions: 15 (each below 2^120 on 64-bit words, 2^60 on 32-bit ones,
    // after a reduced residue: the sum fits 128 or 64 bits).
    constexpr std::size_t kStage = kMaxLinearTerms - 1;
    per_limb(b, [&](long l, const ModulusT<W>& m) {
      std::vector<W> w;
      std::vector<std::size_t> used;  // the inputs of output j with a nonzero weight
      // Running sums of output j per coefficient, reduced to one residue after every stage; the
      // inputs are streamed one at a time over all coefficients.
      std::vector<backend::rows::WideOf<W>> s0(n), s1(n);
      const std::size_t row = l * n;
      for (std::size_t j = 0; j < outputs; ++j) {
        w.clear();
        used.clear();
        for (std::size_t i = 0; i < inputs; ++i) {
          const W v = static_cast<W>(weights[(j * inputs + i) * limbs + l] % m.value);
          if (v) {
            w.push_back(v);
            used.push_back(i);
          }
        }
        const W c = static_cast<W>(constants[j * limbs + l] % m.value);
        for (std::size_t k = 0; k < n; ++k) {
          s0[k] = {};
          s1[k] = {};
          s0[k].add_product(constant_coeff && k ? 0 : c, 1);
        }
        for (std::size_t at = 0; at < used.size(); at += kStage) {
          const std::size_t end = std::min(used.size(), at + kStage);
          for (std::size_t t = at; t < end; ++t) {
            const W* x0 = a0[used[t]] + row;
            const W* x1 = a1[used[t]] + row;
            for (std::size_t k = 0; k < n; ++k) {
              s0[k].add_product(x0[k], w[t]);
              s1[k].add_product(x1[k], w[t]);
            }
          }
          for (std::size_t k = 0; k < n; ++k) {
            s0[k].fold(m);
            s1[k].fold(m);
          }
        }
        for (std::size_t k = 0; k < n; ++k) {
          out0[j][row + k] = s0[k].reduce(m);
          out1[j][row + k] = s1[k].reduce(m);
        }
      }
    });
  }
  void affine_sub_async(u64* const* out, const u64* const* a, const u64* c, const u64* mul,
                        const u64* mul_companion, const u64* const* addends, std::size_t count,
                        const BasisView& b, Stream) override {
    affine_sub_words(out, a, c, mul, mul_companion, addends, count, b);
  }
  void affine_sub_async(u32* const* out, const u32* const* a, const u32* c, const u32* mul,
                        const u32* mul_companion, const u32* const* addends, std::size_t count,
                        const BasisView32& b, Stream) override {
    affine_sub_words(out, a, c, mul, mul_companion, addends, count, b);
  }
  template <class W>
  void affine_sub_words(W* const* out, const W* const* a, const W* c, const W* mul,
                        const W* mul_companion, const W* const* addends, std::size_t count,
                        const BasisViewT<W>& b) {
    const std::size_t n = b.ring->n, words = b.limbs * n;
    for (std::size_t k = 0; k < count; ++k) {
      const W* addend = addends ? addends[k] : nullptr;
      const W* ck = c + k * words;
      per_limb(b, [&](long l, const ModulusT<W>& m) {
        for (std::size_t i = l * n; i < (l + 1) * n; ++i) {
          const W v =
              mul_shoup<W>(sub_mod<W>(a[k][i], ck[i], m.value), mul[l], mul_companion[l], m.value);
          out[k][i] = addend ? add_mod<W>(v, addend[i], m.value) : v;
        }
      });
    }
  }

  void scale_plain_async(u64* out, const u64* m, u64 t, u64 q_mod_t, const u64* q_div_t,
                         const BasisView& b, Stream) override {
    const std::size_t n = b.ring->n;
    std::vector<u64> rem(n);
    for (std::size_t c = 0; c < n; ++c)
      rem[c] = backend::rows::scale_plain_remainder(m[c], t, q_mod_t);
    per_limb(b, [&](long l, const Modulus& mod) {
      for (std::size_t c = 0; c < n; ++c)
        out[l * n + c] = backend::rows::scale_plain_value(m[c], rem[c], q_div_t[l], mod);
    });
  }
  void key_inner_product_async(u64* q0, u64* q1, u64* p0, u64* p1, const KeyProductView& kp,
                               const BasisView& qlp, Stream) override {
    key_inner_product<u64>(q0, q1, p0, p1, kp, qlp);
  }
  void key_inner_product_async(u32* q0, u32* q1, u32* p0, u32* p1, const KeyProductView32& kp,
                               const BasisView32& qlp, Stream) override {
    key_inner_product<u32>(q0, q1, p0, p1, kp, qlp);
  }
  template <class W>
  void key_inner_product(W* q0, W* q1, W* p0, W* p1, const KeyProductViewT<W>& kp,
                         const BasisViewT<W>& qlp) {
    const std::size_t n = qlp.ring->n;
    const int log_n = qlp.ring->log_n;
    per_limb(qlp, [&](long r, const ModulusT<W>& m) {
      const bool in_q = static_cast<u32>(r) < kp.q_rows;
      W* o0 = in_q ? q0 + r * n : p0 + (r - kp.q_rows) * n;
      W* o1 = in_q ? q1 + r * n : p1 + (r - kp.q_rows) * n;
      for (std::size_t c = 0; c < n; ++c) {
        const std::size_t src = kp.galois ? backend::rows::automorphism_eval_source(
                                                static_cast<u32>(c), kp.galois, log_n)
                                          : c;
        backend::rows::key_product_row<W>(kp, n, static_cast<u32>(r), c, src, m, o0[c], o1[c]);
      }
    });
  }

  void baby_giant_sums_async(const BabyGiantView& v, const BasisView& qlp, Stream) override {
    baby_giant_words(v, qlp);
  }
  void baby_giant_sums_async(const backend::BabyGiantView32& v, const BasisView32& qlp,
                             Stream) override {
    baby_giant_words(v, qlp);
  }
  template <class W>
  void baby_giant_words(const backend::BabyGiantViewT<W>& v, const BasisViewT<W>& qlp) {
    const std::size_t n = qlp.ring->n;
    const u32 log_n = static_cast<u32>(qlp.ring->log_n);
    per_limb(qlp, [&](long r, const ModulusT<W>& m) {
      for (std::size_t c = 0; c < n; ++c)
        backend::rows::baby_giant_row<backend::BabyGiantView::kMaxGiants, W>(
            v, n, log_n, static_cast<u32>(r), c, m);
    });
  }

  void base_convert_async(u64* out, const u64* a, const BaseConvView& conv, const BasisView& from,
                          const BasisView& to, Stream) override {
    convert<u64>(out, a, nullptr, conv, from, to);
  }

  void base_convert_async(u32* out, const u32* a, const BaseConvView32& conv,
                          const BasisView32& from, const BasisView32& to, Stream) override {
    convert<u32>(out, a, nullptr, conv, from, to);
  }

  void base_convert_many_async(const std::vector<backend::ConvJob32>& jobs, Stream) override {
    for (const auto& j : jobs) convert<u32>(j.out, j.in, nullptr, j.conv, j.from, j.to);
  }
  void base_convert_many_async(const std::vector<ConvJob>& jobs, Stream) override {
    for (const auto& j : jobs) convert<u64>(j.out, j.in, j.in_sub, j.conv, j.from, j.to);
  }

  // y_i = [(a_i - sub_i) * qhat_inv_i]_{q_i}, then out_j = sum_i y_i * qhat_mod_p[i][j] mod p_j.
  template <class W>
  void convert(W* out, const W* a, const W* sub, const BaseConvViewT<W>& conv,
               const BasisViewT<W>& from, const BasisViewT<W>& to) {
    const std::size_t n = from.ring->n;
    const std::size_t L = conv.from_limbs;
    std::vector<W> y(L * n);
    per_limb(from, [&](long i, const ModulusT<W>& m) {
      for (std::size_t c = 0; c < n; ++c)
        y[c * L + i] = backend::rows::conversion_input<W>(
            backend::rows::conversion_word<W>(a, sub, i * n + c, m.value), i, conv, m.value);
    });
    std::vector<W> overflow(n, 0);
    if (conv.inv_q)
      for (std::size_t c = 0; c < n; ++c)
        overflow[c] = backend::rows::conversion_overflow<W>(&y[c * L], 1, L, conv.inv_q);
    per_limb(to, [&](long j, const ModulusT<W>& m) {
      for (std::size_t c = 0; c < n; ++c)
        out[j * n + c] = backend::rows::convert_row<W>(&y[c * L], 1, conv, j, overflow[c], m);
    });
  }

  void rns_from_words_async(u64* out, const u64* words, const CrtView& crt, const BasisView& b,
                            Stream) override {
    const std::size_t n = b.ring->n;
    per_limb(b, [&](long l, const Modulus& m) {
      for (std::size_t c = 0; c < n; ++c) {
        const u64* w = words + c * crt.words;
        u64 acc = 0;
        for (std::size_t k = 0; k < crt.words; ++k)
          acc =
              add_mod(acc, mul_mod(barrett_reduce_64(w[k], m), crt.pow2_64k[l * crt.words + k], m),
                      m.value);
        out[l * n + c] = acc;
      }
    });
  }

  void words_from_rns_async(u64* out, const u64* a, const CrtView& crt, const BasisView& b,
                            Stream) override {
    const std::size_t n = b.ring->n;
    const std::size_t L = b.limbs;
#pragma omp parallel num_threads(threads_.team())
    {
      std::vector<u64> digits(L);
#pragma omp for schedule(static)
      for (long c = 0; c < static_cast<long>(n); ++c) {
        auto residue = [&](std::size_t l) { return a[l * n + c]; };
        backend::rows::garner_row(residue, *b.ring, b.host_ids, L, crt.garner_inv, digits.data(),
                                  out + c * L, 1);
      }
    }
  }

  void count_wide_coefficients_async(u64* count, const u64* a, u64 q0_inv, const BasisView& b,
                                     Stream) override {
    const long n = static_cast<long>(b.ring->n);
    u64 wide = 0;
#pragma omp parallel for schedule(static) reduction(+ : wide) num_threads(threads_.team())
    for (long c = 0; c < n; ++c)
      wide +=
          backend::rows::two_prime_value_holds(a, n, c, b.ring->moduli, b.host_ids, b.limbs, q0_inv)
              ? 0
              : 1;
    *count += wide;
  }

  void sample_uniform_async(u64* out, const ChaChaKey& key, u64 nonce, const BasisView& b,
                            Stream) override {
    // Coefficient c of limb l takes words 2(l N + c) and 2(l N + c) + 1: 4 per block.
    const std::size_t n = b.ring->n;
    const long blocks = static_cast<long>(b.limbs * n / 4);
#pragma omp parallel for schedule(static) num_threads(threads_.team())
    for (long blk = 0; blk < blocks; ++blk) {
      u64 w[kWordsPerBlock];
      chacha20_words(key, static_cast<u64>(blk), nonce, w);
      for (int t = 0; t < 4; ++t) {
        const std::size_t idx = blk * 4 + t;
        const Modulus& m = b.ring->moduli[b.host_ids[idx / n]];
        out[idx] = backend::rows::uniform_residue(w[2 * t + 1], w[2 * t], m);
      }
    }
  }

  void sample_small_async(u64* out, const ChaChaKey& key, u64 nonce, const SmallSampler& dist,
                          const BasisView& b, Stream) override {
    const std::size_t n = b.ring->n;
    const long blocks = static_cast<long>(n / kWordsPerBlock);
#pragma omp parallel for schedule(static) num_threads(threads_.team())
    for (long blk = 0; blk < blocks; ++blk) {
      u64 w[kWordsPerBlock];
      chacha20_words(key, static_cast<u64>(blk), nonce, w);
      for (int t = 0; t < kWordsPerBlock; ++t) {
        const std::size_t c = blk * kWordsPerBlock + t;
        const std::int64_t v = backend::rows::small_from_word(w[t], dist);
        for (std::size_t l = 0; l < b.limbs; ++l)
          out[l * n + c] = backend::rows::signed_to_residue(v, b.ring->moduli[b.host_ids[l]].value);
      }
    }
  }

  void embed_signed_async(u64* out, const std::int64_t* values, const BasisView& b,
                          Stream) override {
    const std::size_t n = b.ring->n;
    per_limb(b, [&](long l, const Modulus& m) {
      for (std::size_t c = 0; c < n; ++c)
        out[l * n + c] = backend::rows::signed_to_residue(values[c], m.value);
    });
  }

 private:
  int index_;
  CpuThreads& threads_;
  std::unique_ptr<CggiOps> cggi_;
  std::unique_ptr<CkksEncodeOps> ckks_encode_;
  std::unique_ptr<IntegerEncodeOps> integer_encode_;
  std::unique_ptr<BigIntOps> big_int_;
};

/// The process's CPU devices, made on first use; one OpenMP thread setting for all of them.
class CpuDevices {
 public:
  CpuThreads& threads() { return threads_; }
  CpuBackend& get(int index) {
    if (index < 0 || index >= kMaxCpuDevices)
      throw DeviceError("no CPU device cpu:" + std::to_string(index) +
                        ": use cpu:0 to cpu:" + std::to_string(kMaxCpuDevices - 1));
    std::lock_guard lock(mutex_);
    auto& slot = devices_[index];
    if (!slot) slot = std::make_unique<CpuBackend>(index, threads_);
    return *slot;
  }

 private:
  CpuThreads threads_;
  std::mutex mutex_;
  std::unique_ptr<CpuBackend> devices_[kMaxCpuDevices];
};

CpuDevices& cpu_devices() {
  static CpuDevices instance;
  return instance;
}

}  // namespace

Backend& cpu_backend(int index) { return cpu_devices().get(index); }

void set_cpu_threads(int n) { cpu_devices().threads().set(n); }
int cpu_threads() { return cpu_devices().threads().configured(); }

}  // namespace ember::backend
