// Negacyclic NTT / INTT of one limb on the CPU (Harvey lazy butterflies, twist merged), on 64- or
// 32-bit words.
#pragma once

#include "ember/core/modarith.h"

namespace ember::cpu {

/// Forward: natural-order coefficients -> bit-reversed evaluations, output in [0, q).
template <class W>
void ntt_forward_limb(W* a, std::size_t n, const W* w, const W* ws, const ModulusT<W>& m);
/// Inverse: bit-reversed evaluations -> natural-order coefficients, N^-1 folded, output in [0, q).
template <class W>
void ntt_inverse_limb(W* a, std::size_t n, const W* w, const W* ws, Word<W> n_inv,
                      Word<W> n_inv_shoup, Word<W> q);

}  // namespace ember::cpu
