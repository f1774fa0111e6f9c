// Negacyclic NTT / INTT of one limb on the CPU (Harvey lazy butterflies, twist merged).
#pragma once

#include "ember/core/modarith.h"

namespace ember::cpu {

/// Forward: natural-order coefficients -> bit-reversed evaluations, output in [0, q).
void ntt_forward_limb(u64* a, std::size_t n, const u64* w, const u64* ws, const Modulus& m);
/// Inverse: bit-reversed evaluations -> natural-order coefficients, N^-1 folded, output in [0, q).
void ntt_inverse_limb(u64* a, std::size_t n, const u64* w, const u64* ws, u64 n_inv,
                      u64 n_inv_shoup, u64 q);

}  // namespace ember::cpu
