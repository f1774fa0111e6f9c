// The CGGI family of backend operations: batched blind rotation with sample extraction, LWE key
// switching, the gates' linear pre-step and the bootstrapping key's transform, with their views.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/backend/runtime.h"
#include "ember/core/modarith.h"

namespace ember::backend {

/// The sizes every CGGI operation needs. Torus words are u32 (torus_bits 32) or u64 (64); an LWE
/// ciphertext under the small key has n + 1 words, under the big (extracted) key k N + 1, mask
/// first, body last. Ciphertexts of a batch are contiguous.
struct CggiShape {
  int torus_bits = 32;
  std::size_t n = 0;    // small LWE dimension
  std::size_t k = 1;    // GLWE dimension
  std::size_t N = 0;    // polynomial size (a power of two)
  int log2_n = 0;       // log2 N
  int bk_base_log = 0;  // bootstrapping key decomposition
  int bk_levels = 0;
  int ks_base_log = 0;  // key-switching key decomposition
  int ks_levels = 0;
  int limb_bits = 32;  // the bootstrapping key's words split into limbs of this many bits
  int limbs = 1;       // ... this many, at most 8 (see cggi_fft.h)

  std::size_t big_dim() const { return k * N; }
  std::size_t rows() const { return (k + 1) * static_cast<std::size_t>(bk_levels); }
  std::size_t word_bytes() const { return torus_bits / 8; }
  /// Doubles of one GGSW of the key in the Fourier domain: rows x (k+1) outputs x limbs x N
  /// (N / 2 complex values per limb polynomial).
  std::size_t ggsw_ntt_words() const { return rows() * (k + 1) * limbs * N; }
};

/// Calls f(T{}) with T the torus word of `torus_bits` (u32 for 32, u64 otherwise; Params and
/// CggiShape only ever hold 32 or 64) and returns its result: the one dispatch on the word type
/// both backends and the cggi layer use.
template <class F>
decltype(auto) with_torus(int torus_bits, F&& f) {
  if (torus_bits == 32) return f(u32{});
  return f(u64{});
}

/// The bootstrapping key in the Fourier domain and the transform's tables (cggi_fft.h),
/// backend memory. The key is premultiplied by 2 / N, so that products need only the unscaled
/// inverse.
struct BootstrapKeyView {
  const void* ggsw = nullptr;     // cggi::Cx, n GGSWs: [i][row][out][limb][N / 2]
  const void* forward = nullptr;  // cggi::Cx tw[N / 2]
  const void* inverse = nullptr;  // cggi::Cx itw[N / 2] = conj(tw)
};

/// Backend operations of CGGI. Pointers are backend memory; torus arrays are u32 or u64 words
/// per shape.torus_bits (void* here). Every call is stream-ordered (see runtime.h).
class CggiOps {
 public:
  virtual ~CggiOps() = default;

  /// The bootstrapping key's transform: `count` GGSWs in coefficient form (torus words,
  /// [i][row][out][N]) to ggsw_ntt_words() doubles each (cggi::fourier_key_polynomial: limb
  /// split, fold, forward FFT by the twiddles `forward`, times 2 / N).
  virtual void bootstrap_key_transform_async(void* out, const void* ggsw, std::size_t count,
                                             const CggiShape& shape, const void* forward,
                                             Stream stream) = 0;

  /// For each of `count` small-key LWE ciphertexts (n + 1 words): the blind rotation of the
  /// test polynomial (N torus words; test_stride words between those of consecutive
  /// ciphertexts, 0: one for all), then the sample extraction of its constant coefficient:
  /// count big-key LWE ciphertexts (k N + 1 words) in `out`.
  virtual void blind_rotate_extract_async(void* out, const void* in, const void* test_polys,
                                          std::size_t test_stride, std::size_t count,
                                          const CggiShape& shape, const BootstrapKeyView& bsk,
                                          Stream stream) = 0;

  /// Key switching of `count` big-key LWE ciphertexts (k N + 1 words) to the small key (n + 1
  /// words): ksk is k N x ks_levels small-key LWE ciphertexts.
  virtual void key_switch_async(void* out, const void* in, const void* ksk, std::size_t count,
                                const CggiShape& shape, Stream stream) = 0;

  /// The linear pre-step of gates: out[i] = ca a[i] + cb b[i] + (0, .., 0, constant) for
  /// `count` ciphertexts of dim + 1 words (b may be null: cb ignored). Wraps mod 2^W.
  virtual void linear_async(void* out, const void* a, const void* b, std::int64_t ca,
                            std::int64_t cb, u64 constant, std::size_t dim, std::size_t count,
                            const CggiShape& shape, Stream stream) = 0;

  /// Encryption's message step: the body of ciphertext i (of `count` encryptions of zero of
  /// dim + 1 words) becomes plus_message(body, values[i], scale, offset); values of `limit` or
  /// more set *bad (a word in backend memory, left as it is otherwise). The masks and noise come
  /// from the host's CSPRNG; the messages stay in backend memory.
  virtual void add_messages_async(void* words, const std::uint8_t* values, u64 scale, u64 offset,
                                  std::uint8_t limit, std::uint32_t* bad, std::size_t dim,
                                  std::size_t count, const CggiShape& shape, Stream stream) = 0;
  /// Decryption in backend memory: out[i] = message_of_phase(lwe_phase(ciphertext i, key),
  /// message_bits) for `count` ciphertexts of dim + 1 words, the key's dim 0/1 bytes in backend
  /// memory.
  virtual void decode_messages_async(std::uint8_t* out, const void* words, const std::uint8_t* key,
                                     std::size_t dim, std::size_t count, int message_bits,
                                     const CggiShape& shape, Stream stream) = 0;

  /// An indexed copy of `count` ciphertexts of dim + 1 words with optional negation (NOT of a
  /// Boolean ciphertext: every word negated mod 2^W, as linear_async with ca = -1 gives):
  /// out[o_i] = (-1)^(l_i & 1) src[l_i >> 1], where l_i = src_lits[i] (2 i when src_lits is
  /// null) and o_i = out_index[i] (i when out_index is null). src_lits and out_index are u32
  /// arrays in backend memory; out must not overlap src. The circuit scheduler's gather of
  /// operands into a batch and scatter of results into its ciphertext pool.
  virtual void gather_async(void* out, const std::uint32_t* out_index, const void* src,
                            const std::uint32_t* src_lits, std::size_t dim, std::size_t count,
                            const CggiShape& shape, Stream stream) = 0;
};

}  // namespace ember::backend
