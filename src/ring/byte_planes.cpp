// Matrices of residues as byte planes in mma fragment order.
#include "ember/ring/byte_planes.h"

#include "ember/backend/rows.h"

namespace ember::ring {

std::vector<u32> byte_planes_of(const std::vector<std::vector<u64>>& w, std::size_t to,
                                std::size_t blocks, int planes) {
  const std::size_t to_pad = (to + 7) / 8 * 8, words = 8 * blocks;
  std::vector<u32> out(static_cast<std::size_t>(planes) * to_pad * words, 0);
  for (std::size_t k = 0; k < w.size(); ++k)
    for (std::size_t j = 0; j < to; ++j)
      for (std::size_t b = 0; b < static_cast<std::size_t>(planes); ++b) {
        const u32 byte = static_cast<u32>(w[k][j] >> (8 * b)) & 0xff;
        out[(b * to_pad + j) * words +
            backend::rows::byte_plane_slot(static_cast<u32>(k / 4), static_cast<u32>(blocks))] |=
            byte << (8 * (k % 4));
      }
  return out;
}

std::vector<u32> fragment_tiles_of(const std::vector<std::vector<u64>>& w, std::size_t to,
                                   std::size_t blocks, int planes) {
  const std::size_t tiles = (to + 7) / 8, pairs = (blocks + 1) / 2;
  std::vector<u32> out(static_cast<std::size_t>(planes) * tiles * pairs * 128, 0);
  const auto planes_count = static_cast<std::size_t>(planes);
  for (std::size_t k = 0; k < w.size(); ++k) {
    const std::size_t kb = k / 32, r = k % 32, t = (r % 16) / 4, half = r / 16;
    for (std::size_t j = 0; j < to; ++j) {
      const std::size_t lane = 4 * (j % 8) + t, word = 2 * (kb % 2) + half;
      for (std::size_t b = 0; b < planes_count; ++b) {
        const u32 byte = static_cast<u32>(w[k][j] >> (8 * b)) & 0xff;
        out[((((j / 8) * planes_count + b) * pairs + kb / 2) * 32 + lane) * 4 + word] |=
            byte << (8 * (r % 4));
      }
    }
  }
  return out;
}

}  // namespace ember::ring
