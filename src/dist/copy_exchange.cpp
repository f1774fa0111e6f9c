// The copy fallback of the collectives: copy_between_devices, then modular sums on each device.
#include <cstddef>
#include <vector>

#include "ember/backend/buffer.h"
#include "exchange.h"
#include "sum_mod.h"

namespace ember::dist {

namespace {

using backend::Buffer;
using backend::copy_between_devices;

class CopyExchange final : public ExchangeImpl {
 public:
  const char* name() const override { return "copy"; }

  void broadcast(const Ranks& r, const std::vector<u64*>& bufs, std::size_t words,
                 std::size_t root) override {
    for (std::size_t d = 0; d < r.size(); ++d)
      if (d != root) copy(r, d, bufs[d], root, bufs[root], words);
  }

  void all_gather(const Ranks& r, const std::vector<const u64*>& parts,
                  const std::vector<u64*>& wholes, const std::vector<RowRange>& ranges,
                  std::size_t n) override {
    for (std::size_t d = 0; d < r.size(); ++d)
      for (std::size_t s = 0; s < r.size(); ++s)
        copy(r, d, wholes[d] + ranges[s].begin * n, s, parts[s], ranges[s].size() * n);
  }

  void reduce_scatter(const Ranks& r, const std::vector<const u64*>& wholes,
                      const std::vector<u64*>& parts, const std::vector<RowRange>& ranges,
                      std::size_t n, const std::vector<backend::BasisView>& views) override {
    // Rank d stages rows r_d of every other rank's polynomial, then sums them with its own.
    for (std::size_t d = 0; d < r.size(); ++d) {
      const std::size_t words = ranges[d].size() * n, offset = ranges[d].begin * n;
      Buffer stage(*r.backends[d], (r.size() - 1) * words * sizeof(u64), r.streams[d]);
      std::vector<const u64*> in{wholes[d] + offset};
      for (std::size_t s = 0; s < r.size(); ++s) {
        if (s == d) continue;
        u64* dst = stage.as<u64>() + (in.size() - 1) * words;
        copy(r, d, dst, s, wholes[s] + offset, words);
        in.push_back(dst);
      }
      sum_mod_rows_async(*r.backends[d], parts[d], in, ranges[d].size(), n, views[d],
                         ranges[d].begin, r.streams[d]);
    }  // stage is released on rank d's stream, after the sum
  }

  void all_reduce(const Ranks& r, const std::vector<u64*>& bufs, std::size_t rows, std::size_t n,
                  const std::vector<backend::BasisView>& views) override {
    // Reduce onto rank 0 (its copy of the others, then the sum in place), then broadcast.
    const std::size_t words = rows * n;
    {
      Buffer stage(*r.backends[0], (r.size() - 1) * words * sizeof(u64), r.streams[0]);
      std::vector<const u64*> in{bufs[0]};
      for (std::size_t s = 1; s < r.size(); ++s) {
        u64* dst = stage.as<u64>() + (s - 1) * words;
        copy(r, 0, dst, s, bufs[s], words);
        in.push_back(dst);
      }
      sum_mod_rows_async(*r.backends[0], bufs[0], in, rows, n, views[0], 0, r.streams[0]);
    }
    broadcast(r, bufs, words, 0);
  }

 private:
  static void copy(const Ranks& r, std::size_t dst_rank, u64* dst, std::size_t src_rank,
                   const u64* src, std::size_t words) {
    copy_between_devices(*r.backends[dst_rank], dst, r.streams[dst_rank], *r.backends[src_rank],
                         src, r.streams[src_rank], words * sizeof(u64));
  }
};

}  // namespace

std::unique_ptr<ExchangeImpl> make_copy_exchange() { return std::make_unique<CopyExchange>(); }

}  // namespace ember::dist
