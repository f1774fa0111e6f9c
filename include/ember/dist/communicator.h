// Communicator: collectives (broadcast, all-gather, reduce-scatter, all-reduce) of RNS polynomials
// over a DeviceSet in one process, through NCCL or through copies between devices.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ember/dist/device_set.h"
#include "ember/ring/rns_poly.h"

namespace ember::dist {

/// How a Communicator moves words. `automatic`: NCCL for GPUs when it is compiled in, copies
/// otherwise. `nccl`: NCCL or DeviceError. `copy`: copy_between_devices (peer to peer between
/// GPUs) and the modular sums on each device; the reference the NCCL path is tested against.
enum class Exchange { automatic, nccl, copy };

/// Whether this build has NCCL (EMBER_NCCL); the Communicator of a GPU set then uses it.
bool nccl_compiled();

/// At most this many devices take part in a sum: every word is below 2^61 (a reduced residue), so
/// the sum of 8 fits in 64 bits, which NCCL adds before the reduction modulo each row's prime.
inline constexpr std::size_t kMaxReduceDevices = 8;

/// Polynomials by reference, one per rank (refs / const_refs make them from a vector).
using PolyRefs = std::vector<ring::RnsPoly*>;
using ConstPolyRefs = std::vector<const ring::RnsPoly*>;

inline PolyRefs refs(std::vector<ring::RnsPoly>& polys) {
  PolyRefs out;
  for (auto& p : polys) out.push_back(&p);
  return out;
}
inline ConstPolyRefs const_refs(const std::vector<ring::RnsPoly>& polys) {
  ConstPolyRefs out;
  for (const auto& p : polys) out.push_back(&p);
  return out;
}

/// Collectives over the devices of a set, rank d being devices[d]. Polynomials are given one per
/// rank, rank d's on devices[d]; all share the ring, form and (for whole polynomials) basis.
/// A polynomial split by rows over the set ("parts") has part d over rows [r_d, r_{d+1}) of the
/// whole basis, the range sizes given by the parts' limbs.
///
/// Ordering: each rank has its own stream. A collective waits (on the device, the host does not)
/// for the work queued so far on the streams of the polynomials it reads and writes (RnsPoly::
/// stream()), and later work on those streams waits for it (StreamJoin): the `_async` forms are
/// ordered like any other RnsPoly operation and return once the work is queued (the CPU finishes
/// before returning). New outputs are made on the stream of the rank's input. The forms without
/// the suffix return when the results are written.
///
/// Sums are modulo each row's prime; inputs must be reduced (words below their prime, as every
/// RnsPoly is). A Communicator is not thread-safe: one collective at a time per object.
class Communicator {
 public:
  /// Opens the devices, one stream each, and (for GPUs with NCCL) one NCCL communicator each
  /// (ncclCommInitAll). Throws DeviceError when a device does not exist or `exchange` == nccl
  /// cannot be had (CPU devices, a build without NCCL).
  explicit Communicator(DeviceSet devices, Exchange exchange = Exchange::automatic);
  ~Communicator();
  Communicator(Communicator&&) noexcept;
  Communicator& operator=(Communicator&&) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  const DeviceSet& devices() const;
  std::size_t size() const;
  /// "nccl" or "copy".
  std::string exchange_name() const;
  bool uses_nccl() const;
  /// Rank d's stream (on devices[d]).
  backend::Stream stream(std::size_t rank) const;

  /// Every rank's polynomial becomes root's (in place).
  void broadcast_async(const PolyRefs& polys, std::size_t root);
  /// wholes[d] (rows of every part, in rank order) = the concatenation of parts.
  void all_gather_into_async(const ConstPolyRefs& parts, const PolyRefs& wholes);
  /// New whole polynomials, one per rank (their basis: the parts' primes in rank order).
  std::vector<ring::RnsPoly> all_gather_async(const ConstPolyRefs& parts);
  /// parts[d] = rows [r_d, r_{d+1}) of sum_e wholes[e] mod q, the ranges given by parts' limbs.
  /// Throws ParameterError over more than kMaxReduceDevices devices.
  void reduce_scatter_into_async(const ConstPolyRefs& wholes, const PolyRefs& parts);
  /// New parts over `ranges` (check_partition), or over partition_rows when `ranges` is empty.
  std::vector<ring::RnsPoly> reduce_scatter_async(const ConstPolyRefs& wholes,
                                                  const std::vector<RowRange>& ranges = {});
  /// Every rank's polynomial becomes sum_e polys[e] mod q (in place).
  void all_reduce_async(const PolyRefs& polys);

  void broadcast(const PolyRefs& polys, std::size_t root);
  std::vector<ring::RnsPoly> all_gather(const ConstPolyRefs& parts);
  std::vector<ring::RnsPoly> reduce_scatter(const ConstPolyRefs& wholes,
                                            const std::vector<RowRange>& ranges = {});
  void all_reduce(const PolyRefs& polys);
  /// Waits until every collective queued so far is done.
  void synchronize();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

/// Rows `range` of `whole` as a new polynomial on `device` (the part of a split), whose operations
/// run on `stream` (of that device; the null Stream: its default stream).
ring::RnsPoly take_rows(const ring::RnsPoly& whole, RowRange range, backend::Device device,
                        backend::Stream stream = {});

}  // namespace ember::dist
