// The CPU backend's BFV/BGV encoding family: integer_plain.h's per-element functions in plain
// loops (each element is independent; N words are one pass over memory, no thread team needed).
#include "cpu_integer_encode.h"

namespace ember::backend {

namespace {

class CpuIntegerEncode final : public IntegerEncodeOps {
 public:
  void load_plain_async(u64* out, const void* values, integer::IntType type, std::size_t count,
                        std::size_t n, u64 t, const u32* index, u64* flag, Stream) override {
    bool all_in_range = true;
    for (std::size_t i = 0; i < n; ++i) {
      bool in_range = true;
      const u64 v = i < count ? integer::load_reduced(values, type, i, t, in_range) : 0;
      all_in_range = all_in_range && in_range;
      out[index ? index[i] : i] = v;
    }
    if (!all_in_range) flag[0] = 1;
  }

  void multiply_plain_async(u64* out, const u64* m, u64 k, const Modulus& t, std::size_t n,
                            Stream) override {
    for (std::size_t i = 0; i < n; ++i) out[i] = mul_mod(m[i], k, t);
  }

  void lift_plain_async(u64* out, const u64* m, u64 t, const BasisView& b, Stream) override {
    const std::size_t n = b.ring->n;
    for (std::size_t l = 0; l < b.limbs; ++l) {
      const u64 q = b.ring->host_moduli[b.host_ids[l]].value;
      for (std::size_t i = 0; i < n; ++i) out[l * n + i] = integer::centered_residue(m[i], t, q);
    }
  }

  void message_async(u64* out, const u64* v, u64 q, const Modulus& t, u64 factor_inv, std::size_t n,
                     Stream) override {
    for (std::size_t i = 0; i < n; ++i) out[i] = integer::message_of(v[i], q, t, factor_inv);
  }

  void store_plain_async(std::int64_t* out, const u64* m, u64 t, const u32* index,
                         std::size_t count, Stream) override {
    for (std::size_t i = 0; i < count; ++i) out[i] = integer::centered(m[index ? index[i] : i], t);
  }
};

}  // namespace

std::unique_ptr<IntegerEncodeOps> make_cpu_integer_encode() {
  return std::make_unique<CpuIntegerEncode>();
}

}  // namespace ember::backend
