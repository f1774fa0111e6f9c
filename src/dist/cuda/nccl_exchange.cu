// The NCCL exchange of the collectives: one communicator per GPU, grouped calls, then the
// reduction modulo each row's prime on each GPU.
#include <cuda_runtime.h>
#include <nccl.h>

#include <exception>
#include <string>
#include <vector>

#include "../exchange.h"
#include "../sum_mod.h"
#include "ember/core/errors.h"

namespace ember::dist {

namespace {

cudaStream_t raw(backend::Stream s) { return static_cast<cudaStream_t>(s.handle); }

void check(ncclResult_t status, const char* what, ncclComm_t comm = nullptr) {
  if (status == ncclSuccess || status == ncclInProgress) return;
  std::string msg = std::string("NCCL ") + what + ": " + ncclGetErrorString(status);
  if (comm) {
    const char* last = ncclGetLastError(comm);
    if (last && *last) msg += std::string(" (") + last + ")";
  }
  throw DeviceError(msg);
}

/// ncclGroupStart / ncclGroupEnd around the calls of every rank, so that all GPUs progress
/// together (one thread drives every rank). The end runs even when a call throws.
class Group {
 public:
  Group() { check(ncclGroupStart(), "ncclGroupStart"); }
  ~Group() noexcept(false) {
    const ncclResult_t status = ncclGroupEnd();
    if (std::uncaught_exceptions() == uncaught_) check(status, "ncclGroupEnd");
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

 private:
  int uncaught_ = std::uncaught_exceptions();
};

bool equal_sizes(const std::vector<RowRange>& ranges) {
  for (const auto& r : ranges)
    if (r.size() != ranges.front().size()) return false;
  return true;
}

class NcclExchange final : public ExchangeImpl {
 public:
  explicit NcclExchange(const DeviceSet& devices) : comms_(devices.size(), nullptr) {
    std::vector<int> list;
    for (const auto& d : devices.devices()) list.push_back(d.index);
    check(ncclCommInitAll(comms_.data(), static_cast<int>(list.size()), list.data()),
          "ncclCommInitAll");
  }
  ~NcclExchange() override {
    for (ncclComm_t c : comms_)
      if (c) ncclCommDestroy(c);
  }

  const char* name() const override { return "nccl"; }

  void broadcast(const Ranks& r, const std::vector<u64*>& bufs, std::size_t words,
                 std::size_t root) override {
    Group g;
    for (std::size_t d = 0; d < r.size(); ++d)
      check(ncclBroadcast(bufs[root], bufs[d], words, ncclUint64, static_cast<int>(root), comms_[d],
                          raw(r.streams[d])),
            "ncclBroadcast", comms_[d]);
  }

  void all_gather(const Ranks& r, const std::vector<const u64*>& parts,
                  const std::vector<u64*>& wholes, const std::vector<RowRange>& ranges,
                  std::size_t n) override {
    Group g;
    if (equal_sizes(ranges)) {
      for (std::size_t d = 0; d < r.size(); ++d)
        check(ncclAllGather(parts[d], wholes[d], ranges[d].size() * n, ncclUint64, comms_[d],
                            raw(r.streams[d])),
              "ncclAllGather", comms_[d]);
      return;
    }
    // Uneven parts: one broadcast from each rank into its rows of every whole polynomial.
    for (std::size_t s = 0; s < r.size(); ++s)
      for (std::size_t d = 0; d < r.size(); ++d)
        check(ncclBroadcast(d == s ? parts[s] : nullptr, wholes[d] + ranges[s].begin * n,
                            ranges[s].size() * n, ncclUint64, static_cast<int>(s), comms_[d],
                            raw(r.streams[d])),
              "ncclBroadcast", comms_[d]);
  }

  void reduce_scatter(const Ranks& r, const std::vector<const u64*>& wholes,
                      const std::vector<u64*>& parts, const std::vector<RowRange>& ranges,
                      std::size_t n, const std::vector<backend::BasisView>& views) override {
    {
      Group g;
      if (equal_sizes(ranges)) {
        for (std::size_t d = 0; d < r.size(); ++d)
          check(ncclReduceScatter(wholes[d], parts[d], ranges[d].size() * n, ncclUint64, ncclSum,
                                  comms_[d], raw(r.streams[d])),
                "ncclReduceScatter", comms_[d]);
      } else {
        // Uneven parts: one reduction onto each rank of its rows.
        for (std::size_t s = 0; s < r.size(); ++s)
          for (std::size_t d = 0; d < r.size(); ++d)
            check(ncclReduce(wholes[d] + ranges[s].begin * n, d == s ? parts[s] : nullptr,
                             ranges[s].size() * n, ncclUint64, ncclSum, static_cast<int>(s),
                             comms_[d], raw(r.streams[d])),
                  "ncclReduce", comms_[d]);
      }
    }
    for (std::size_t d = 0; d < r.size(); ++d)
      sum_mod_rows_async(*r.backends[d], parts[d], {parts[d]}, ranges[d].size(), n, views[d],
                         ranges[d].begin, r.streams[d]);
  }

  void all_reduce(const Ranks& r, const std::vector<u64*>& bufs, std::size_t rows, std::size_t n,
                  const std::vector<backend::BasisView>& views) override {
    {
      Group g;
      for (std::size_t d = 0; d < r.size(); ++d)
        check(ncclAllReduce(bufs[d], bufs[d], rows * n, ncclUint64, ncclSum, comms_[d],
                            raw(r.streams[d])),
              "ncclAllReduce", comms_[d]);
    }
    for (std::size_t d = 0; d < r.size(); ++d)
      sum_mod_rows_async(*r.backends[d], bufs[d], {bufs[d]}, rows, n, views[d], 0, r.streams[d]);
  }

 private:
  std::vector<ncclComm_t> comms_;
};

}  // namespace

std::unique_ptr<ExchangeImpl> make_nccl_exchange(const DeviceSet& devices) {
  return std::make_unique<NcclExchange>(devices);
}

}  // namespace ember::dist
