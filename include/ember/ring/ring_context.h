// RingContext: the ring Z_q[X]/(X^N + 1) for a set of NTT-friendly primes, with NTT tables.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/backend/backend.h"
#include "ember/backend/buffer.h"
#include "ember/core/modarith.h"

namespace ember::ring {

using backend::Backend;
using backend::BasisView;
using backend::BasisView32;
using backend::RingTablesView;
using backend::RingTablesView32;

/// NTT tables of one prime, on the host.
struct PrimeTables {
  Modulus modulus;
  u64 psi = 0;  // primitive 2N-th root used
  std::vector<u64> psi_rev, psi_rev_shoup, psi_inv_rev, psi_inv_rev_shoup;
  u64 n_inv = 0, n_inv_shoup = 0;
};

/// Immutable after construction; thread-safe to read. Backend copies of the tables are built on
/// first use per device and cached.
class RingContext : public std::enable_shared_from_this<RingContext> {
 public:
  /// Throws ParameterError if n is not a power of two in [16, 2^17], a prime is not NTT-friendly
  /// for n, or primes repeat.
  static std::shared_ptr<const RingContext> create(std::size_t n, const std::vector<u64>& primes);

  std::size_t n() const { return n_; }
  int log_n() const { return log_n_; }
  std::size_t prime_count() const { return primes_.size(); }
  u64 prime(std::size_t id) const { return primes_[id].modulus.value; }
  const PrimeTables& prime_tables(std::size_t id) const { return primes_[id]; }

  /// The tables laid out in `be`'s memory (built once per device).
  const RingTablesView& tables_on(Backend& be) const;
  /// Kernel view of the basis made of primes `ids` on `be` (cached per id list and device).
  BasisView basis_on(Backend& be, const std::vector<u32>& ids) const;
  /// The same on 32-bit words: tables of every prime below 2^30 (built once per device; rows of
  /// larger primes are left zero). Throws ParameterError when a prime of `ids` has 30 bits or
  /// more.
  BasisView32 basis32_on(Backend& be, const std::vector<u32>& ids) const;

  RingContext(std::size_t n, int log_n, std::vector<PrimeTables> primes);

 private:
  struct DeviceTables;
  std::size_t n_;
  int log_n_;
  std::vector<PrimeTables> primes_;
  mutable std::mutex mutex_;
  mutable std::map<std::pair<int, int>, std::shared_ptr<DeviceTables>> device_tables_;
  DeviceTables& device_tables(Backend& be) const;
  /// The ids' entry of dt (its device copy built on first use); mutex_ held.
  const std::vector<u32>& basis_ids(DeviceTables& dt, Backend& be, const std::vector<u32>& ids,
                                    const u32*& device_ids) const;
};

/// An ordered list of primes of one ring: the moduli of a polynomial's limbs.
class RnsBasis {
 public:
  RnsBasis() = default;
  /// Throws ParameterError for an empty list, an unknown id or a repeated id.
  RnsBasis(std::shared_ptr<const RingContext> ctx, std::vector<u32> ids);
  /// A row -> prime map that may repeat primes (batched launches over several bases); not a
  /// basis in the CRT sense. Throws ParameterError for an unknown id.
  static RnsBasis unchecked(std::shared_ptr<const RingContext> ctx, std::vector<u32> ids);
  /// The basis of all primes of the context, in order.
  static RnsBasis all(std::shared_ptr<const RingContext> ctx);

  const std::shared_ptr<const RingContext>& context() const { return ctx_; }
  const std::vector<u32>& ids() const { return ids_; }
  std::size_t size() const { return ids_.size(); }
  std::size_t n() const { return ctx_->n(); }
  u64 prime(std::size_t limb) const { return ctx_->prime(ids_[limb]); }
  std::vector<u64> primes() const;
  BasisView on(Backend& be) const { return ctx_->basis_on(be, ids_); }
  /// The 32-bit-word view (primes below 2^30, see RingContext::basis32_on).
  BasisView32 on32(Backend& be) const { return ctx_->basis32_on(be, ids_); }
  /// on(be) for 64-bit words, on32(be) for 32-bit ones.
  template <class W>
  backend::BasisViewT<W> view_on(Backend& be) const {
    if constexpr (sizeof(W) == 8)
      return on(be);
    else
      return on32(be);
  }
  /// Concatenation (this, other); throws MismatchError for other rings or shared primes.
  RnsBasis concat(const RnsBasis& other) const;
  bool operator==(const RnsBasis& o) const { return ctx_ == o.ctx_ && ids_ == o.ids_; }
  bool operator!=(const RnsBasis& o) const { return !(*this == o); }

 private:
  std::shared_ptr<const RingContext> ctx_;
  std::vector<u32> ids_;
};

}  // namespace ember::ring
