// The CGGI context: keys, LWE ciphertext batches, encryption, vectorized gates and programmable
// bootstrapping on one device.
//
// Bootstrapping order: key switching, then blind rotation (KS-then-PBS, as tfhe-rs's Boolean and
// shortint defaults): ciphertexts at rest are under the big key (the GLWE key's coefficients,
// dimension k N); a gate is a linear combination, a key switch to the small key (dimension n),
// a blind rotation of the test polynomial and a sample extraction back to the big key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ember/backend/buffer.h"
#include "ember/backend/cggi_fft.h"
#include "ember/cggi/params.h"
#include "ember/ring/sampler.h"

namespace ember::cggi {

/// A batch of `count` LWE ciphertexts under the big key (dim = k N, dim + 1 torus words each,
/// mask then body), contiguous in backend memory. message_bits 0: Boolean (gate encoding
/// +-1/8); 1..4: an integer m encoded as m 2^-(bits+1) (one padding bit). key_id 0: trivial
/// (no key: constants).
struct LweBatch {
  std::uint64_t params_id = 0, key_id = 0;
  int torus_bits = 32;
  int message_bits = 0;
  std::size_t dim = 0, count = 0;
  std::shared_ptr<backend::Buffer> words;
  /// Where operations on this batch (as first operand) run; their results keep it.
  backend::Stream stream{};

  std::size_t words_per_ct() const { return dim + 1; }
  /// The same ciphertexts (shared words) whose operations run on `s`, a stream of their device.
  LweBatch on_stream(backend::Stream s) const {
    LweBatch c = *this;
    c.stream = s;
    return c;
  }
  /// Every word, widened to u64 (count x (dim + 1)).
  std::vector<std::uint64_t> to_host() const;
  /// A copy on `device` (GPU to GPU peer to peer where the GPUs allow it), on its default
  /// stream, complete when returned.
  LweBatch to(backend::Device device) const;
};

/// The secret keys: the small LWE key (n bits) and the GLWE key (k N bits, polynomial-major),
/// whose coefficients in order are the big LWE key.
struct ClientKey {
  std::uint64_t params_id = 0, key_id = 0;
  std::vector<std::uint8_t> lwe, glwe;
};

/// The server's keys, in backend memory: the bootstrapping key (n GGSWs of the small key's bits
/// under the GLWE key, NTT domain) and the key-switching key (k N x ks_levels LWE encryptions
/// under the small key of the big key's bits times 2^-(j+1) ks_base_log).
struct ServerKey {
  std::uint64_t params_id = 0, key_id = 0;
  backend::Buffer bsk;  // u64, n x shape.ggsw_ntt_words()
  backend::Buffer ksk;  // torus words, k N x ks_levels x (n + 1)
  /// A copy on `device` (the NTT-domain words are the same on every backend), complete when
  /// returned: the bootstrapping key replicated to another GPU.
  ServerKey to(backend::Device device) const;
  backend::Device device() const { return bsk.backend()->device(); }
};

enum class Gate { and_, nand, or_, nor, xor_, xnor, andny, andyn, orny, oryn };

/// Operations run on their first operand's stream (LweBatch::on_stream; the default stream
/// otherwise), and return once it has finished: results are ready, on any stream.
/// Every method validates its operands: MismatchError for objects of other parameters, another
/// key, another device or the other encoding (bits / integers), ParameterError for wrong sizes
/// and values; the backend's errors (DeviceError, DeviceMemoryError) pass through. Methods that
/// change nothing (all but keygen / server_key / encrypt*, which draw randomness from the
/// context's thread-safe sampler) may run concurrently.
class Context {
 public:
  /// Validates the parameters (ParameterError) and binds the context to `device`.
  Context(const Params& params, backend::Device device);

  const Params& params() const { return params_; }
  const backend::CggiShape& shape() const { return shape_; }
  std::uint64_t params_id() const { return params_id_; }
  backend::Device device() const { return device_; }
  backend::Backend& backend() const { return *be_; }

  ClientKey keygen();
  /// The server keys of `ck`; progress(done, total) is called as GGSWs are made.
  ServerKey server_key(const ClientKey& ck,
                       const std::function<void(std::size_t, std::size_t)>& progress = {});

  LweBatch encrypt_bits(const std::vector<std::uint8_t>& bits, const ClientKey& ck);
  std::vector<std::uint8_t> decrypt_bits(const LweBatch& c, const ClientKey& ck) const;
  /// encrypt_bits of `count` bits (bytes, 0 or 1: ParameterError otherwise) in this context's
  /// backend memory: the masks and noise are drawn on the host as encrypt_bits draws them (the
  /// same words for the same sampler state), the messages are added where the bits are
  /// (add_messages_async).
  LweBatch encrypt_bits_in_place(const std::uint8_t* bits, std::size_t count, const ClientKey& ck);
  /// encrypt_ints of `count` values (bytes in [0, 2^bits)) in this context's backend memory, the
  /// same way.
  LweBatch encrypt_ints_in_place(const std::uint8_t* values, std::size_t count, int bits,
                                 const ClientKey& ck);
  /// decrypt_bits or decrypt_ints (by c's message bits) into `out`, c.count bytes in this
  /// context's backend memory.
  void decrypt_in_place(const LweBatch& c, const ClientKey& ck, std::uint8_t* out) const;
  /// Integers in [0, 2^bits), bits in [1, 4].
  LweBatch encrypt_ints(const std::vector<std::uint64_t>& values, int bits, const ClientKey& ck);
  std::vector<std::uint64_t> decrypt_ints(const LweBatch& c, const ClientKey& ck) const;
  /// Each ciphertext's phase minus the nearest valid encoding, in torus units (noise studies).
  std::vector<double> phase_errors(const LweBatch& c, const ClientKey& ck) const;

  /// gate(a[i], b[i]) for every i, bootstrapped. Throws MismatchError for batches of other
  /// contexts, keys or sizes.
  LweBatch gate(Gate g, const LweBatch& a, const LweBatch& b, const ServerKey& sk);
  /// The majority of a[i], b[i], c[i] (a full adder's carry): one bootstrap of a + b + c.
  LweBatch maj(const LweBatch& a, const LweBatch& b, const LweBatch& c, const ServerKey& sk);
  /// a[i] ^ b[i] ^ c[i] (a full adder's sum): one bootstrap of 2 (a + b + c) + 1/2.
  LweBatch xor3(const LweBatch& a, const LweBatch& b, const LweBatch& c, const ServerKey& sk);
  /// s[i] ? a[i] : b[i] (two bootstraps per element).
  LweBatch mux(const LweBatch& s, const LweBatch& a, const LweBatch& b, const ServerKey& sk);
  LweBatch not_(const LweBatch& a);
  LweBatch constant(const std::vector<std::uint8_t>& bits);
  LweBatch copy(const LweBatch& a);
  /// The same blind rotation as a gate with the identity: fresh noise (for tests and refresh).
  LweBatch bootstrap(const LweBatch& a, const ServerKey& sk);

  /// table[m[i]] for every i: one programmable bootstrap each. table has 2^bits entries, each
  /// below 2^bits (ParameterError otherwise).
  LweBatch apply_lut(const LweBatch& a, const std::vector<std::uint64_t>& table,
                     const ServerKey& sk);
  /// a + b (no bootstrap): the sum must stay below 2^bits for the next apply_lut.
  LweBatch add(const LweBatch& a, const LweBatch& b);
  /// c a (no bootstrap), c a small integer.
  LweBatch mul_scalar(const LweBatch& a, std::int64_t c);
  /// a + v (plaintext integer; no bootstrap).
  LweBatch add_scalar(const LweBatch& a, std::int64_t v);

  /// The backend's view of a server key's bootstrapping key with this context's NTT tables
  /// (for direct CggiOps calls: tests, the circuit layer).
  backend::BootstrapKeyView key_view(const ServerKey& sk) const;

  /// Ciphertexts [start, start + count) of a batch (a copy); ParameterError out of range.
  LweBatch slice(const LweBatch& a, std::size_t start, std::size_t count) const;
  /// The batches one after the other (same parameters, encoding and key).
  LweBatch concat(const std::vector<const LweBatch*>& parts) const;
  /// out[i] = a[index[i]] (a copy; indices may repeat); ParameterError for an index out of range.
  LweBatch take(const LweBatch& a, const std::vector<std::uint32_t>& index) const;

  /// Rebuilds objects from host words (deserialization); throws SerializationError for sizes
  /// that do not fit these parameters and for words out of range.
  LweBatch batch_from_host(const std::vector<std::uint64_t>& words, std::size_t count,
                           int message_bits, std::uint64_t key_id) const;
  ClientKey client_key_from(std::vector<std::uint8_t> lwe, std::vector<std::uint8_t> glwe,
                            std::uint64_t key_id) const;
  ServerKey server_key_from(const std::vector<std::uint64_t>& bsk,
                            const std::vector<std::uint64_t>& ksk, std::uint64_t key_id) const;
  /// Host copies of a server key's words (ksk widened to u64).
  std::vector<std::uint64_t> bsk_to_host(const ServerKey& sk) const;
  std::vector<std::uint64_t> ksk_to_host(const ServerKey& sk) const;

 private:
  /// Encryptions of `count` messages (message_bits 0: Booleans; else integers of that many bits)
  /// from host bytes, or (in_backend) from bytes in backend memory.
  LweBatch encrypt_messages(const std::uint8_t* values, std::size_t count, int message_bits,
                            bool in_backend, const ClientKey& ck);
  /// ParameterError unless `bits` in [1, 4] fits this N's lookups.
  void check_int_bits(int bits) const;
  void check(const LweBatch& c, const char* what) const;
  LweBatch empty_batch(std::size_t count, int message_bits, std::uint64_t key_id,
                       backend::Stream stream = {}) const;
  /// Key switch then blind rotation of `in` (big key) with test polynomials (torus words;
  /// stride 0: one for all).
  LweBatch bootstrap_with(const LweBatch& in, const backend::Buffer& tests, std::size_t stride,
                          int message_bits, const ServerKey& sk);
  LweBatch linear(const LweBatch& a, const LweBatch* b, std::int64_t ca, std::int64_t cb,
                  std::uint64_t constant, int message_bits);

  Params params_;
  backend::CggiShape shape_;
  std::uint64_t params_id_;
  backend::Device device_;
  backend::Backend* be_;
  // The FFT's twiddles (cggi_fft.h) on the backend and on the host (key generation).
  backend::Buffer forward_table_, inverse_table_;
  std::vector<backend::cggi::Cx> host_tw_, host_itw_;
  std::unique_ptr<ring::Sampler> sampler_;
};

}  // namespace ember::cggi
