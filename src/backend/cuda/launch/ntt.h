// Host launchers of the CUDA NTT schedules, and the tuned choice of schedule per size.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "ember/backend/backend.h"
#include "kernels/ntt.cuh"
#include "launch/ntt_tuned_types.h"

namespace ember::cuda {

/// The implemented schedules (see ntt.cu): per_stage, hybrid, two_kernel, warp_shuffle,
/// cluster.
const std::vector<std::string>& ntt_variant_names();
/// The built-in table for GPU `device`: the one measured on a GPU of its name, else the one
/// measured on the GPU nearest to it in multiprocessor count and memory bandwidth (log scale).
const TunedGpu& tuned_gpu(int device);

/// Which schedule the launchers run: `variant` ("auto" or a name from ntt_variant_names), and
/// for "auto" the winner in `measured` (BackendOptions::ntt_table, rows of the batch's path
/// first) or else in `builtin`. References into a backend's options snapshot: no copy per launch.
struct NttSchedule {
  const std::string& variant;
  const TunedGpu& builtin;
  const std::vector<backend::NttTableEntry>& measured;
  /// The schedule for `rows` limbs of size n in one direction on the given paths.
  std::string pick(std::size_t n, std::size_t rows, bool forward, kernels::NttPaths paths) const;
};
/// The measured fastest schedule for a transform of `rows` limbs of size N in one direction on
/// the given arithmetic paths, from `measured` where it has rows for those paths, else from
/// `builtin` (bench/RESULTS.md has the tables they came from).
std::string tuned_ntt_variant(std::size_t n, std::size_t rows, bool forward,
                              kernels::NttPaths paths, const TunedGpu& builtin,
                              const std::vector<backend::NttTableEntry>& measured);
/// The forward NTT of `count` polynomials followed by a division's affine map, fused into the
/// last kernel (out[k] = (a[k] - NTT(c[k])) * mul (+ addend[k]), see kernels::AffineStore); the
/// transformed values themselves are not written. Returns false, launching nothing, where the
/// schedule for this size is neither the warp-shuffle nor the cluster one (the caller runs the two
/// steps).
bool launch_ntt_forward_affine(const kernels::NttBatch& batch, std::size_t count,
                               const kernels::AffineArgs& args, const u64* mul,
                               const u64* mul_companion, const NttSchedule& schedule,
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
                            u64* p0, u64* p1, const NttSchedule& schedule, bool always,
                            cudaStream_t stream);
/// The forward NTT of two degree-1 ciphertexts (batch: a0, a1, b0, b1 back to back, out of place
/// as the batch says) fused with their tensor product d0 = a0 b0, d1 = a0 b1 + a1 b0, d2 = a1 b1
/// (batch.limbs rows each): the warp-shuffle schedule's column phase, then
/// kernels::ntt_tensor_kernel. batch.data is scratch afterwards. Returns false, launching
/// nothing, where the schedule for this size is not the warp-shuffle one or N < 2^11; `always`:
/// fuse whenever N >= 2^11 (tests).
bool launch_ntt_forward_tensor(const kernels::NttBatch& batch, u64* d0, u64* d1, u64* d2,
                               const NttSchedule& schedule, bool always, cudaStream_t stream);
/// A forward or inverse NTT over count * limbs limbs of 32-bit words (primes below 2^30): the
/// two-kernel schedule (one chunk up to N = 2^13, columns then chunks above), the same column and
/// chunk kernels as the 64-bit words' instantiated for u32.
void launch_ntt32(const kernels::NttBatchT<u32>& batch, std::size_t count, bool forward,
                  cudaStream_t stream);
/// ModUp's forward NTT of the converted rows of 32-bit words (batch: ext_rows limbs, in place)
/// fused with the key product: launch_ntt32's column phase, then
/// kernels::ntt_key_product32_kernel over the kp.rows rows of Q_l u P (prime ids row_ids).
/// Returns false, launching nothing, below N = 2^14 (one-chunk transforms).
bool launch_ntt_key_product32(const kernels::NttBatchT<u32>& batch, std::size_t ext_rows,
                              const backend::KeyProductView32& kp, const u32* row_ids, u32* q0,
                              u32* q1, u32* p0, u32* p1, cudaStream_t stream);
/// The forward NTT of `count` polynomials of 32-bit words (batch: in place) with the division's
/// affine map args as its last store (kernels::ntt_chunk_affine32_kernel after launch_ntt32's
/// column phase). Returns false, launching nothing, below N = 2^14 or above
/// Backend::kMaxAffineTerms polynomials.
bool launch_ntt_forward_affine32(const kernels::NttBatchT<u32>& batch, std::size_t count,
                                 const kernels::AffineArgsT<u32>& args, const u32* mul,
                                 const u32* mul_shoup, cudaStream_t stream);
/// Runs a forward or inverse NTT over count * limbs limbs with the named schedule.
void launch_ntt(const kernels::NttBatch& batch, std::size_t count, bool forward,
                const NttSchedule& schedule, cudaStream_t stream);

}  // namespace ember::cuda
