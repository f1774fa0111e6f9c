// The CPU backend's big-integer family: the reference, big_int_rows.h for every coefficient.
#include "cpu_big_int.h"

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
    each(o.n, [&](std::size_t c) {
      big::shift(out + c * o.words, o, a + c * i.words, i, left, right);
    });
  }
  void big_centered_async(u64* out, const BigShape& o, const u64* v, const u64* p,
                          const u64* half, std::size_t p_words, Stream) override {
    each(o.n, [&](std::size_t c) {
      big::centered(out + c * o.words, o, v + c * p_words, p, half, p_words);
    });
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
