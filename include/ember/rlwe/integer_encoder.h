// IntegerEncoder: BFV/BGV plaintexts in backend memory. Integer values (host or device memory)
// become N coefficients modulo t on the context's device (range check, reduction, the batch
// encoder's slot order and its inverse NTT modulo t there), and back: a decryption's message,
// the NTT modulo t, the slot order and centering, written to host or device memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ember/backend/buffer.h"
#include "ember/backend/integer_plain.h"
#include "ember/ring/rns_poly.h"

namespace ember::rlwe {

using backend::integer::IntType;

/// N plaintext coefficients in [0, t) in one device's memory (shared, immutable once made).
class PlainCoeffs {
 public:
  PlainCoeffs(std::shared_ptr<const void> owner, const u64* words, std::size_t n,
              backend::Device device, backend::Stream stream)
      : owner_(std::move(owner)), words_(words), n_(n), device_(device), stream_(stream) {}
  const u64* data() const { return words_; }
  std::size_t n() const { return n_; }
  backend::Device device() const { return device_; }
  /// The stream that wrote the words (readers on other streams wait for it first).
  backend::Stream stream() const { return stream_; }
  /// The coefficients on the host (synchronizes).
  std::vector<u64> to_host() const;

 private:
  std::shared_ptr<const void> owner_;  // the RnsPoly or Buffer holding the words
  const u64* words_;
  std::size_t n_;
  backend::Device device_;
  backend::Stream stream_;
};

class IntegerEncoder {
 public:
  /// Where values live: host memory, or the encoder's device (backend memory).
  enum class Memory { host, device };
  /// Ring degree n, plain modulus t, the batch encoder's slot order (slot i is the eval-form word
  /// slot_index[i] modulo t; empty when t does not allow batching) on `device`.
  IntegerEncoder(std::size_t n, u64 t, const std::vector<u32>& slot_index, backend::Device device);

  std::size_t n() const { return n_; }
  u64 plain_modulus() const { return t_; }
  backend::Device device() const { return device_; }
  bool batching() const { return static_cast<bool>(t_ring_); }

  /// `count` <= n values of `type` (zero-padded to n) as the plaintext's coefficients: in slot
  /// order through the inverse NTT modulo t (batched), or as they are. Throws ParameterError for
  /// a value outside (-t, t) (only a flag is read back) or count > n, and for batched without
  /// batching.
  PlainCoeffs encode(const void* values, IntType type, std::size_t count, Memory where,
                     bool batched) const;
  /// N host words, each checked to be below t.
  PlainCoeffs from_host(const u64* coeffs) const;
  /// m k mod t.
  PlainCoeffs multiply(const PlainCoeffs& m, u64 k) const;
  /// The centered plaintext as an integer polynomial over basis q, in `form` (BGV's message
  /// polynomial: RnsPoly::from_signed of the centered values, from backend memory).
  ring::RnsPoly lift(const PlainCoeffs& m, const ring::RnsBasis& q, ring::Form form) const;
  /// A decryption's message (integer::message_of) from n words v of backend memory written on
  /// `stream`: q = 0 for BFV's rounded values, else q_0 for BGV's and its factor.
  PlainCoeffs message(const u64* v, backend::Stream stream, u64 q, u64 factor) const;
  /// The first `count` values (int64, centered modulo t) into `out` (host or device memory):
  /// the slots (NTT modulo t, slot order) when batched, else the coefficients. Synchronizes.
  void decode(const PlainCoeffs& m, bool batched, std::int64_t* out, std::size_t count,
              Memory where) const;

 private:
  void check_device(const PlainCoeffs& m, const char* op) const;
  void check_batching(const char* op) const;
  std::size_t n_;
  u64 t_;
  Modulus t_mod_;
  backend::Device device_;
  std::shared_ptr<const ring::RingContext> t_ring_;    // the ring modulo t (null: no batching)
  std::shared_ptr<const backend::Buffer> slot_index_;  // n u32 words, backend memory
};

}  // namespace ember::rlwe
