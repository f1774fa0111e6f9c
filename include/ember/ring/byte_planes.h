// Matrices of residues as the byte planes the integer tensor-core kernels read (host side).
#pragma once

#include <cstddef>
#include <vector>

#include "ember/core/modarith.h"

namespace ember::ring {

/// The byte planes of the matrix W[k][j] (k < 32 blocks rows of input bytes, j < to columns):
/// plane b holds byte b of every W[k][j], as [to rounded up to 8][8 blocks u32 words of four
/// consecutive k], the words of one column in mma fragment order (backend::rows::byte_plane_slot).
/// The layout of BaseConvView::byte_planes (eight planes) and of the big-integer CRT's tables.
std::vector<u32> byte_planes_of(const std::vector<std::vector<u64>>& w, std::size_t to,
                                std::size_t blocks, int planes);

/// The same planes in fragment order, for kernels that stage one column tile at a time: tile T
/// (columns 8T .. 8T + 7) is contiguous, and in it plane b, pair of blocks kp (rows 64 kp ..
/// 64 kp + 63) is 32 lanes' four words, [((T planes + b) pairs + kp) 32 + lane][4] with
/// pairs = (blocks + 1) / 2, lane = 4g + t: words 0, 1 are the mma.m16n8k32 B fragment of block
/// 2 kp for lane (g, t) (column 8T + g, rows 32 kb + 4t .. + 3 and 32 kb + 16 + 4t .. + 3 of
/// block kb, a byte each), words 2, 3 that of block 2 kp + 1: a pair is one 16-byte read a lane.
std::vector<u32> fragment_tiles_of(const std::vector<std::vector<u64>>& w, std::size_t to,
                                   std::size_t blocks, int planes);

}  // namespace ember::ring
