// Host launchers of the CUDA NTT schedules, and the tuned choice of schedule per size.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "ember/backend/backend.h"
#include "kernels/ntt.cuh"

namespace ember::cuda {

/// The implemented schedules (see ntt.cu): per_stage, hybrid, two_kernel, warp_shuffle,
/// cluster.
const std::vector<std::string>& ntt_variant_names();
/// The measured fastest schedule for a transform of `rows` limbs of size N in one direction on
/// the given arithmetic paths (bench/RESULTS.md has the tables it came from).
std::string tuned_ntt_variant(std::size_t n, std::size_t rows, bool forward,
                              kernels::NttPaths paths);
/// The forward NTT of `count` polynomials followed by a division's affine map, fused into the
/// last kernel (out[k] = (a[k] - NTT(c[k])) * mul (+ addend[k]), see kernels::AffineStore); the
/// transformed values themselves are not written. Returns false, launching nothing, where the
/// schedule for this size is neither the warp-shuffle nor the cluster one (the caller runs the two
/// steps).
bool launch_ntt_forward_affine(const kernels::NttBatch& batch, std::size_t count,
                               const kernels::AffineArgs& args, const u64* mul,
                               const u64* mul_companion, const std::string& variant,
                               cudaStream_t stream);
/// ModUp's forward NTT of `rows` converted rows (batch.data, one polynomial; lifted when
/// batch.lift_rows) fused with the key inner product kp (its automorphism and addend too): the
/// warp-shuffle schedule's column phase, then kernels::ntt_key_product_kernel, whose warps finish
/// every digit's chunk of one output row (prime row_ids[r]) and multiply it by the key.
/// batch.data is scratch afterwards. Returns false, launching nothing, where it does not pay:
/// the schedule for this size is not the warp-shuffle one, or the transformed rows take less
/// than most of the L2 cache (see ntt.cu). `always`: fuse whenever N >= 2^11 (tests).
bool launch_ntt_key_product(const kernels::NttBatch& batch, std::size_t rows,
                            const backend::KeyProductView& kp, const u32* row_ids, u64* q0, u64* q1,
                            u64* p0, u64* p1, const std::string& variant, bool always,
                            cudaStream_t stream);
/// The forward NTT of two degree-1 ciphertexts (batch: a0, a1, b0, b1 back to back, out of place
/// as the batch says) fused with their tensor product d0 = a0 b0, d1 = a0 b1 + a1 b0, d2 = a1 b1
/// (batch.limbs rows each): the warp-shuffle schedule's column phase, then
/// kernels::ntt_tensor_kernel. batch.data is scratch afterwards. Returns false, launching
/// nothing, where the schedule for this size is not the warp-shuffle one or N < 2^11; `always`:
/// fuse whenever N >= 2^11 (tests).
bool launch_ntt_forward_tensor(const kernels::NttBatch& batch, u64* d0, u64* d1, u64* d2,
                               const std::string& variant, bool always, cudaStream_t stream);
/// Runs a forward or inverse NTT over count * limbs limbs with the named schedule.
void launch_ntt(const kernels::NttBatch& batch, std::size_t count, bool forward,
                const std::string& variant, cudaStream_t stream);

}  // namespace ember::cuda
