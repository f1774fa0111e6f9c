// A ring of shared-memory buffers that a block fills with a table's tiles ahead of use (cp.async).
#pragma once

#include "ember/core/config.h"

namespace ember::cuda::kernels {

/// Stages tile T of a table (tile_words 16-byte words at table + T tile_words) through kStages
/// shared buffers: the whole block copies each tile once for all its warps, kStages - 1 tiles
/// ahead of the one in use, so the copies' latency hides behind the products. Every thread of
/// the block must call start() and then acquire(0), acquire(1), .. in order (they hold barriers).
template <int kStages>
struct TileStager {
  uint4* buffers;  // [kStages][tile_words], shared
  const uint4* table;
  u32 tile_words;
  u32 tiles;

  __device__ __forceinline__ void issue(u32 tile) const {
    if (tile < tiles) {
      uint4* to = buffers + (tile % kStages) * tile_words;
      const uint4* from = table + static_cast<std::size_t>(tile) * tile_words;
      for (u32 i = threadIdx.x; i < tile_words; i += blockDim.x) {
        const auto s = static_cast<u32>(__cvta_generic_to_shared(to + i));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(from + i));
      }
    }
    asm volatile("cp.async.commit_group;");  // empty past the last tile: the count stays even
  }
  __device__ __forceinline__ void start() const {
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) issue(s);
  }
  /// Tile `tile` in shared memory, once every thread's copies of it landed; then the copy of tile
  /// + kStages - 1 into the buffer the block finished with (tile - 1's: every warp passed the
  /// barrier after its products on it).
  __device__ __forceinline__ const uint4* acquire(u32 tile) const {
    asm volatile("cp.async.wait_group %0;" ::"n"(kStages - 2));
    __syncthreads();
    issue(tile + kStages - 1);
    return buffers + (tile % kStages) * tile_words;
  }
};

}  // namespace ember::cuda::kernels
