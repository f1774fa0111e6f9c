// The word movers behind a Communicator: the copy fallback and NCCL, on raw rows of each rank.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "ember/backend/backend.h"
#include "ember/dist/device_set.h"

namespace ember::dist {

/// A communicator's devices, their backends and one stream each (rank d: devices[d]).
struct Ranks {
  std::vector<backend::Backend*> backends;
  std::vector<backend::Stream> streams;
  std::size_t size() const { return backends.size(); }
};

/// Collectives on words. Every pointer is in its rank's memory; the work is queued on the ranks'
/// streams. `n` words per row; ranges and views as in Communicator (views: the whole basis on each
/// rank's backend, for the reduction modulo each row's prime). Validation is the caller's.
class ExchangeImpl {
 public:
  virtual ~ExchangeImpl() = default;
  virtual const char* name() const = 0;
  virtual void broadcast(const Ranks& r, const std::vector<u64*>& bufs, std::size_t words,
                         std::size_t root) = 0;
  virtual void all_gather(const Ranks& r, const std::vector<const u64*>& parts,
                          const std::vector<u64*>& wholes, const std::vector<RowRange>& ranges,
                          std::size_t n) = 0;
  virtual void reduce_scatter(const Ranks& r, const std::vector<const u64*>& wholes,
                              const std::vector<u64*>& parts, const std::vector<RowRange>& ranges,
                              std::size_t n, const std::vector<backend::BasisView>& views) = 0;
  virtual void all_reduce(const Ranks& r, const std::vector<u64*>& bufs, std::size_t rows,
                          std::size_t n, const std::vector<backend::BasisView>& views) = 0;
};

/// copy_between_devices and sum_mod_rows_async: any device kind, the reference.
std::unique_ptr<ExchangeImpl> make_copy_exchange();

#if defined(EMBER_WITH_NCCL)
/// One NCCL communicator per GPU of `devices` (ncclCommInitAll); DeviceError when NCCL fails.
std::unique_ptr<ExchangeImpl> make_nccl_exchange(const DeviceSet& devices);
#endif

}  // namespace ember::dist
