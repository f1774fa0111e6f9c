// Host launchers of the NTT schedules: per-stage, hybrid (Ozerk et al.), two-kernel radix-8
// (Jung et al.), warp-shuffle (HE-Booster) and one-pass clusters; the tuned table picks one per
// size.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>

#include "ember/core/errors.h"
#include "kernels/ntt_affine32.cuh"
#include "kernels/ntt_key_product.cuh"
#include "kernels/ntt_key_product32.cuh"
#include "kernels/ntt_tensor.cuh"
#include "launch/ntt.h"
#include "launch/ntt_launch.h"
#include "launch/ntt_tuned_table.h"
#include "runtime/cuda_check.h"
#include "runtime/launch.h"

namespace ember::cuda {

using kernels::NttBatch;
using kernels::NttBatchT;

namespace ntt_detail {

namespace {
/// An attribute of the current device, asked once per device index (`cache`: one slot per
/// index, 0 until first asked).
template <cudaDeviceAttr kAttr>
int current_device_attribute() {
  static std::atomic<int> cache[64] = {};
  int dev = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  int value = cache[dev & 63].load(std::memory_order_relaxed);
  if (value == 0) {
    check(cudaDeviceGetAttribute(&value, kAttr, dev), "cudaDeviceGetAttribute");
    cache[dev & 63].store(value, std::memory_order_relaxed);
  }
  return value;
}
}  // namespace

/// Blocks that keep every SM of the current device busy twice over: below this, a schedule's
/// kernels split their work into smaller blocks, since small transforms are bound by the latency
/// of each block's chain of rounds, not by throughput.
std::size_t busy_blocks() {
  return 2 * static_cast<std::size_t>(current_device_attribute<cudaDevAttrMultiProcessorCount>());
}

/// The L2 cache size of the current device.
std::size_t l2_bytes() {
  return static_cast<std::size_t>(current_device_attribute<cudaDevAttrL2CacheSize>());
}

}  // namespace ntt_detail

namespace {

using namespace ntt_detail;

/// The batch the kernels after a schedule's first one take: in place on the output.
template <class WordT>
NttBatchT<WordT> in_place(NttBatchT<WordT> a) {
  a.src0 = a.src1 = a.src2 = a.src3 = nullptr;
  a.lift_rows = 0;
  a.lift_maps = nullptr;
  a.lift_sub = nullptr;
  return a;
}

void stage(const NttBatch& a, std::size_t rows, bool forward, u32 t, bool last, cudaStream_t s) {
  const u32 half = a.n / 2;
  const u32 threads = std::min<u32>(256, half);
  dim3 grid((half + threads - 1) / threads, static_cast<u32>(rows));
  const u32 m = a.n / (2 * t);
  if (forward && a.lift_rows && a.lift_maps)
    launch(kernels::ntt_stage_kernel<true, kernels::kConvertLift>, grid, threads, 0, s,
           "ntt_stage_kernel", a, log2u(t), m, last);
  else if (forward && a.lift_rows)
    launch(kernels::ntt_stage_kernel<true, kernels::kReduceLift>, grid, threads, 0, s,
           "ntt_stage_kernel", a, log2u(t), m, last);
  else if (forward)
    launch(kernels::ntt_stage_kernel<true, kernels::kNoLift>, grid, threads, 0, s,
           "ntt_stage_kernel", a, log2u(t), m, last);
  else
    launch(kernels::ntt_stage_kernel<false, kernels::kNoLift>, grid, threads, 0, s,
           "ntt_stage_kernel", a, log2u(t), m, last);
}

/// Chunk phase: n / s_size chunks of s_size contiguous values (16 <= s_size <= 8192), on 64- or
/// 32-bit words (the latter on the integer path, without lifts).
template <class WordT>
void chunks(const NttBatchT<WordT>& a, std::size_t rows, bool forward, u32 s_size, bool last,
            cudaStream_t s) {
  // Conversions in the first load run in the column, stage and cluster kernels only (the
  // schedules launch_ntt_forward_affine takes).
  if (a.lift_rows && a.lift_maps)
    throw Error("NTT chunk kernels do not convert lifted input: use a column or stage schedule");
  const u32 n1 = a.n / s_size;
  u32 subs = std::min<u32>(n1, std::max<u32>(1, 2048 / s_size));
  while (subs > 1 && std::size_t{n1 / subs} * rows < busy_blocks()) subs /= 2;
  const u32 threads = subs * s_size / 8;
  // Values plus each chunk's local twiddle table of (w, w_shoup) pairs.
  const std::size_t smem = std::size_t{subs} * s_size * 3 * sizeof(WordT);
  const dim3 grid(n1 / subs, static_cast<u32>(rows));
  dispatch_log<4, 13>(log2u(s_size), [&](auto L) {
    constexpr int kLog = decltype(L)::value;
    if constexpr (sizeof(WordT) == 4) {
      constexpr auto kInt = kernels::NttPaths::kInt;
      if (forward)
        launch_smem(kernels::ntt_chunk_kernel<true, kLog, kInt, false, WordT>, grid, threads, smem,
                    s, a, subs, last);
      else
        launch_smem(kernels::ntt_chunk_kernel<false, kLog, kInt, false, WordT>, grid, threads, smem,
                    s, a, subs, last);
    } else {
      dispatch_paths(a.paths, [&](auto P) {
        constexpr kernels::NttPaths kP = decltype(P)::value;
        if (forward && a.lift_rows)  // ModUp's lifted rows (see ntt_columns.cu)
          launch_smem(kernels::ntt_chunk_kernel<true, kLog, kP, true>, grid, threads, smem, s, a,
                      subs, last);
        else if (forward)
          launch_smem(kernels::ntt_chunk_kernel<true, kLog, kP, false>, grid, threads, smem, s, a,
                      subs, last);
        else
          launch_smem(kernels::ntt_chunk_kernel<false, kLog, kP, false>, grid, threads, smem, s, a,
                      subs, last);
      });
    }
  });
}

// Two warps per block (kernels::kWarpChunkThreads): a small batch spreads over every SM instead
// of queueing eight warps on a few of them (each warp's chunk is a long dependent chain).
using kernels::kWarpChunkThreads;

void warp_chunks(const NttBatch& a, std::size_t rows, bool forward, bool last, cudaStream_t s) {
  const u32 n1 = a.n / 256;
  const u32 warps = n1 * static_cast<u32>(rows);
  const u32 threads = kWarpChunkThreads;
  const u32 blocks = (warps * 32 + threads - 1) / threads;
  // Inverse integer-path batches of one wave at 12 blocks per SM, but more than two blocks per
  // SM, take the kernel built for 16 (64 registers). Measured on an H200 (bench/RESULTS.md):
  // BFV N15 (496) relinearization (18 rows) 0.0811 -> 0.0786 ms, rotation 0.0836 -> 0.0824;
  // larger batches were 1-2 % slower with it (32 rows at N15 (880), 48 in BFV N15 products),
  // and BGV N15 products, whose ModDown transforms 2 rows, 1 %.
  const bool small_inverse = !forward && a.paths == kernels::NttPaths::kInt &&
                             std::size_t{blocks} >= busy_blocks() &&
                             std::size_t{blocks} <= 6 * busy_blocks();
  dispatch_paths(a.paths, [&](auto P) {
    constexpr kernels::NttPaths kP = decltype(P)::value;
    if (forward)
      launch(kernels::ntt_warp_chunk_kernel<true, kP>, blocks, threads, 0, s,
             "ntt_warp_chunk_kernel", a, warps, last);
    else if (small_inverse)
      launch(kernels::ntt_warp_chunk_kernel<false, kernels::NttPaths::kInt, 16>, blocks, threads, 0,
             s, "ntt_warp_chunk_kernel", a, warps, last);
    else
      launch(kernels::ntt_warp_chunk_kernel<false, kP>, blocks, threads, 0, s,
             "ntt_warp_chunk_kernel", a, warps, last);
  });
}

/// Stages with half-span >= `min_t` one kernel each (forward: from N/2 down; inverse: up to N/2).
void per_stage_range(const NttBatch& a, std::size_t rows, bool forward, u32 min_t, bool last,
                     cudaStream_t s) {
  if (forward) {
    for (u32 t = a.n / 2; t >= min_t && t >= 1; t >>= 1)
      stage(t == a.n / 2 ? a : in_place(a), rows, true, t, last && t == 1, s);
  } else {
    for (u32 t = min_t; t <= a.n / 2; t <<= 1)
      stage(t == min_t ? a : in_place(a), rows, false, t, last && t == a.n / 2, s);
  }
}

void run_per_stage(const NttBatch& a, std::size_t rows, bool fwd, cudaStream_t s) {
  per_stage_range(a, rows, fwd, 1, true, s);
}

void run_hybrid(const NttBatch& a, std::size_t rows, bool fwd, cudaStream_t s) {
  const u32 chunk = std::min<u32>(a.n, 2048);
  if (fwd) {
    if (chunk < a.n) per_stage_range(a, rows, true, chunk, false, s);
    chunks(chunk < a.n ? in_place(a) : a, rows, true, chunk, true, s);
  } else {
    chunks(a, rows, false, chunk, chunk == a.n, s);
    if (chunk < a.n) per_stage_range(in_place(a), rows, false, chunk, true, s);
  }
}

template <class WordT>
void run_two_kernel(const NttBatchT<WordT>& a, std::size_t rows, bool fwd, cudaStream_t s) {
  if (a.n <= 8192) return chunks(a, rows, fwd, a.n, true, s);
  const u32 log_n = log2u(a.n);
  const u32 n2 = 1u << ((log_n + 1) / 2);
  const u32 n1 = a.n / n2;
  if (fwd) {
    columns(a, rows, true, n1, false, s);
    chunks(in_place(a), rows, true, n2, true, s);
  } else {
    chunks(a, rows, false, n2, false, s);
    columns(in_place(a), rows, false, n1, true, s);
  }
}

/// The forward warp-shuffle schedule's first phase (the stages with half-span >= 256); returns
/// the batch its chunk phase runs on.
NttBatch warp_shuffle_forward_head(const NttBatch& a, std::size_t rows, cudaStream_t s) {
  const u32 n1 = a.n / 256;
  if (n1 >= 8)
    columns(a, rows, true, n1, false, s);
  else if (n1 > 1)
    per_stage_range(a, rows, true, 256, false, s);
  return n1 > 1 ? in_place(a) : a;
}

void run_warp_shuffle(const NttBatch& a, std::size_t rows, bool fwd, cudaStream_t s) {
  if (a.n < 256) return run_two_kernel(a, rows, fwd, s);
  const u32 n1 = a.n / 256;
  if (fwd) {
    warp_chunks(warp_shuffle_forward_head(a, rows, s), rows, true, true, s);
  } else {
    warp_chunks(a, rows, false, n1 == 1, s);
    if (n1 >= 8)
      columns(in_place(a), rows, false, n1, true, s);
    else if (n1 > 1)
      per_stage_range(in_place(a), rows, false, 256, true, s);
  }
}

/// One pass per limb through a thread-block cluster where the size has one (2^12 .. 2^16);
/// elsewhere the warp-shuffle schedule (the two-kernel one below N = 256).
void run_cluster(const NttBatch& a, std::size_t rows, bool fwd, cudaStream_t s) {
  if (!cluster_transform(a, rows, fwd, s)) run_warp_shuffle(a, rows, fwd, s);
}

}  // namespace

const std::vector<std::string>& ntt_variant_names() {
  static const std::vector<std::string> names = {"per_stage", "hybrid", "two_kernel",
                                                 "warp_shuffle", "cluster"};
  return names;
}

namespace {
/// The row of `rows` nearest to (log_n, limbs): log_n first, then limbs on a log scale; null
/// when `rows` is empty. Row is TunedNtt or backend::NttTableEntry (`keep` filters).
template <class Row, class Keep>
const Row* nearest_row(const Row* rows, std::size_t count, int log_n, std::size_t limbs,
                       Keep&& keep) {
  const Row* best = nullptr;
  double best_d = 1e300;
  for (std::size_t i = 0; i < count; ++i) {
    const Row& t = rows[i];
    if (!keep(t)) continue;
    const double d = std::abs(t.log_n - log_n) * 100.0 +
                     std::abs(std::log2(static_cast<double>(t.limbs)) -
                              std::log2(static_cast<double>(std::max<std::size_t>(limbs, 1))));
    if (d < best_d) {
      best_d = d;
      best = &t;
    }
  }
  return best;
}
}  // namespace

std::string tuned_ntt_variant(std::size_t n, std::size_t rows, bool forward,
                              kernels::NttPaths paths, const TunedGpu& builtin,
                              const std::vector<backend::NttTableEntry>& measured) {
  // The measured winner for this N and direction at the nearest measured number of limbs in one
  // launch (log distance); sizes outside the table take the closest N. Below N = 2^9 only
  // two_kernel fits the smem kernel. Integer-only batches take the table measured on the
  // integer path, the others the FP64 one.
  const int log_n = static_cast<int>(log2u(n));
  if (log_n < 9) return "two_kernel";
  const bool integer = paths == kernels::NttPaths::kInt;
  // A measured table (BackendOptions::ntt_table) replaces the built-in one on the paths it
  // has rows for, and is taken as measured (no rule below overrides it).
  if (const auto* m = nearest_row(measured.data(), measured.size(), log_n, rows,
                                  [&](const auto& e) { return e.integer_path == integer; }))
    return forward ? m->forward : m->inverse;
  // In scheme operations, the few-row transforms of N = 2^14 integer-path key switching and BFV
  // products (inverse: 2 or 3 rows; forward: 9 or 12) take the one-launch cluster schedule,
  // which there beats the table's winners measured on back-to-back transforms alone. Measured on
  // an H200 (bench/RESULTS.md, thirteenth session): BFV N14 rotate 0.0310 -> 0.0305 ms,
  // relinearize 0.0303 -> 0.0294, multiply 0.0676 -> 0.0667; slower at N = 2^13 and on the
  // FP64 path (CKKS N14).
  if (log_n == 14 && integer && rows <= (forward ? 12u : 4u)) return "cluster";
  const TunedNtt* best = integer ? nearest_row(builtin.integer, builtin.integer_rows, log_n, rows,
                                               [](const TunedNtt&) { return true; })
                                 : nearest_row(builtin.fp64, builtin.fp64_rows, log_n, rows,
                                               [](const TunedNtt&) { return true; });
  if (!best) return "warp_shuffle";
  return forward ? best->forward : best->inverse;
}

std::string NttSchedule::pick(std::size_t n, std::size_t rows, bool forward,
                              kernels::NttPaths paths) const {
  return variant == "auto" ? tuned_ntt_variant(n, rows, forward, paths, builtin, measured)
                           : variant;
}

const TunedGpu& tuned_gpu(int device) {
  backend::GpuInfo info;
  for (const auto& g : backend::cuda_devices())
    if (g.index == device) info = g;
  for (const TunedGpu* g : kTunedGpus)
    if (info.name == g->name) return *g;
  // No table of this name: the nearest measured GPU by SM count and peak memory bandwidth, each
  // on a log scale, since the schedules' trade-offs (blocks in flight, passes over memory)
  // scale with both.
  const auto dist = [&](const TunedGpu& g) {
    return std::abs(std::log2(std::max(1, info.multiprocessors) / double(g.multiprocessors))) +
           std::abs(std::log2(std::max(1.0, info.memory_bandwidth_gbs) / g.bandwidth_gbs));
  };
  const TunedGpu* best = kTunedGpus[0];
  for (const TunedGpu* g : kTunedGpus)
    if (dist(*g) < dist(*best)) best = g;
  return *best;
}

namespace {
/// The column phase, then kernels::ntt_key_product_kernel (see launch_ntt_key_product).
bool fused_key_product(const NttBatch& batch, std::size_t rows, const backend::KeyProductView& kp,
                       const u32* row_ids, u64* q0, u64* q1, u64* p0, u64* p1,
                       cudaStream_t stream) {
  columns(batch, rows, true, batch.n / 256, false, stream);
  const u32 warps = (batch.n / 256) * kp.rows;
  const u32 blocks = (warps * 32 + kWarpChunkThreads - 1) / kWarpChunkThreads;
  dispatch_paths(batch.paths, [&](auto P) {
    constexpr kernels::NttPaths kP = decltype(P)::value;
    if (kp.galois)
      launch(kernels::ntt_key_product_kernel<kP, true>, blocks, kWarpChunkThreads, 0, stream,
             "ntt_key_product_kernel", in_place(batch), kp, row_ids, q0, q1, p0, p1);
    else
      launch(kernels::ntt_key_product_kernel<kP, false>, blocks, kWarpChunkThreads, 0, stream,
             "ntt_key_product_kernel", in_place(batch), kp, row_ids, q0, q1, p0, p1);
  });
  return true;
}
}  // namespace

bool launch_ntt_key_product(const NttBatch& batch, std::size_t rows,
                            const backend::KeyProductView& kp, const u32* row_ids, u64* q0, u64* q1,
                            u64* p0, u64* p1, const NttSchedule& schedule, bool always,
                            cudaStream_t stream) {
  // The chunk phase follows a column phase (N / 256 >= 8 columns per chunk position); the
  // kernels without an automorphism carry no addend.
  if (batch.n < 2048 || rows == 0 || rows > 65535 || (kp.add && !kp.galois)) return false;
  if (always) return fused_key_product(batch, rows, kp, row_ids, q0, q1, p0, p1, stream);
  if (schedule.pick(batch.n, rows, true, batch.paths) != "warp_shuffle") return false;
  // Fusing saves writing the transformed rows and reading them back, which costs little while
  // they stay in the L2 cache, and its warps each loop over the digits (fewer warps in flight).
  // Measured (bench/RESULTS.md): on an H200 (60 MB of L2) BGV N15 (59 MB of rows, integer path)
  // and CKKS N16 (170 MB) relinearization 11 % faster fused, BFV N14 (1 MB) 9 % slower; CKKS
  // N15 (42 MB, FP64 path) 3 % slower on the H200 and 2-5 % on an H100 (50 MB of L2). The
  // integer path's chunk phase is compute bound, which hides the fused kernel's loads, and there
  // fusing paid from three quarters of the L2 size on; the FP64 path's from the L2 size on.
  // Integer-path products without an automorphism pay fused from N = 2^15 on, whatever their
  // size: BFV N15 (496) relinearization (19 MB) 0.0830 -> 0.0809 ms on an H200, while its
  // rotation (automorphism on the fly) went 0.0835 -> 0.0862.
  const std::size_t bytes = rows * batch.n * sizeof(u64);
  const bool integer = batch.paths == kernels::NttPaths::kInt;
  const bool plain_integer = integer && !kp.galois && batch.n >= 32768;
  if (!plain_integer && (integer ? 4 * bytes < 3 * l2_bytes() : bytes < l2_bytes())) return false;
  return fused_key_product(batch, rows, kp, row_ids, q0, q1, p0, p1, stream);
}

bool launch_ntt_forward_tensor(const NttBatch& batch, u64* d0, u64* d1, u64* d2,
                               const NttSchedule& schedule, bool always, cudaStream_t stream) {
  const std::size_t rows = 4 * std::size_t{batch.limbs};
  if (batch.n < 2048 || rows > 65535) return false;
  if (!always && schedule.pick(batch.n, rows, true, batch.paths) != "warp_shuffle") return false;
  columns(batch, rows, true, batch.n / 256, false, stream);
  dispatch_paths(batch.paths, [&](auto P) {
    launch(kernels::ntt_tensor_kernel<decltype(P)::value>, (batch.n / 256) * batch.limbs,
           kernels::kTensorThreads, 0, stream, "ntt_tensor_kernel", in_place(batch), d0, d1, d2);
  });
  return true;
}

bool launch_ntt_forward_affine(const NttBatch& batch, std::size_t count,
                               const kernels::AffineArgs& args, const u64* mul,
                               const u64* mul_companion, const NttSchedule& schedule,
                               cudaStream_t stream) {
  const std::size_t rows = count * batch.limbs;
  std::string v = schedule.pick(batch.n, rows, true, batch.paths);
  // The cluster transform with the map saves the warp-shuffle schedule's second launch, which
  // pays off for small batches only: measured on an H200 (bench/RESULTS.md), 2 x 2 rows (BFV N13
  // key switching) 3-10 % faster, 2 x 4 rows (BGV N13) 5 % slower.
  constexpr std::size_t kClusterAffineRows = 4;
  if (v == "cluster" && rows <= kClusterAffineRows && count <= backend::Backend::kMaxAffineTerms &&
      cluster_transform_affine(batch, rows, args, mul, mul_companion, stream))
    return true;
  if (v == "cluster") v = "warp_shuffle";
  if (v != "warp_shuffle" || batch.n < 256 || rows == 0 || rows > 65535 ||
      count > backend::Backend::kMaxAffineTerms)
    return false;
  const NttBatch b = warp_shuffle_forward_head(batch, rows, stream);
  const u32 n1 = batch.n / 256, warps = n1 * static_cast<u32>(rows);
  dispatch_paths(b.paths, [&](auto P) {
    launch(kernels::ntt_warp_chunk_affine_kernel<decltype(P)::value>,
           (warps * 32 + kWarpChunkThreads - 1) / kWarpChunkThreads, kWarpChunkThreads, 0, stream,
           "ntt_warp_chunk_affine_kernel", b, warps, args, mul, mul_companion);
  });
  return true;
}

namespace {
/// The rows of a launch of `count` polynomials of `limbs` limbs (0: nothing to launch);
/// ParameterError above one grid's 65535 rows.
std::size_t launch_rows(std::size_t count, std::size_t limbs) {
  const std::size_t rows = count * limbs;
  if (rows > 65535)
    throw ParameterError("NTT batch of " + std::to_string(rows) +
                         " limbs is too large for one launch: split it below 65536 limbs");
  return rows;
}
}  // namespace

bool launch_ntt_key_product32(const kernels::NttBatchT<u32>& batch, std::size_t ext_rows,
                              const backend::KeyProductView32& kp, const u32* row_ids, u32* q0,
                              u32* q1, u32* p0, u32* p1, cudaStream_t stream) {
  // The schedule of run_two_kernel: columns of N1 values, then chunks of N2 = N / N1.
  if (batch.n <= 8192 || ext_rows == 0 || ext_rows > 65535 || kp.rows == 0) return false;
  const u32 log_n = log2u(batch.n), n2 = 1u << ((log_n + 1) / 2), n1 = batch.n / n2;
  columns(batch, ext_rows, true, n1, false, stream);
  const u32 lanes = n2 / 8, subs = 256 / lanes;  // 256 threads: subs chunks of one row
  const dim3 grid(n1 / subs, kp.rows);
  const std::size_t smem = std::size_t{subs} * n2 * 3 * sizeof(u32);  // values, (w, w_shoup)
  dispatch_log<7, 9>(log2u(n2), [&](auto L) {
    constexpr int kLog = decltype(L)::value;
    if (kp.galois)
      launch_smem(kernels::ntt_key_product32_kernel<kLog, true>, grid, 256, smem, stream,
                  in_place(batch), subs, kp, row_ids, q0, q1, p0, p1);
    else
      launch_smem(kernels::ntt_key_product32_kernel<kLog, false>, grid, 256, smem, stream,
                  in_place(batch), subs, kp, row_ids, q0, q1, p0, p1);
  });
  return true;
}

bool launch_ntt_forward_affine32(const kernels::NttBatchT<u32>& batch, std::size_t count,
                                 const kernels::AffineArgsT<u32>& args, const u32* mul,
                                 const u32* mul_shoup, cudaStream_t stream) {
  const std::size_t rows = count * batch.limbs;
  if (batch.n <= 8192 || rows == 0 || rows > 65535 || count > backend::Backend::kMaxAffineTerms)
    return false;
  const u32 log_n = log2u(batch.n), n2 = 1u << ((log_n + 1) / 2), n1 = batch.n / n2;
  columns(batch, rows, true, n1, false, stream);
  // The chunk kernels' shape (see chunks): subs chunks a block, values and twiddle pairs.
  u32 subs = std::min<u32>(n1, std::max<u32>(1, 2048 / n2));
  while (subs > 1 && std::size_t{n1 / subs} * rows < busy_blocks()) subs /= 2;
  const std::size_t smem = std::size_t{subs} * n2 * 3 * sizeof(u32);
  const dim3 grid(n1 / subs, static_cast<u32>(rows));
  dispatch_log<7, 9>(log2u(n2), [&](auto L) {
    launch_smem(kernels::ntt_chunk_affine32_kernel<decltype(L)::value>, grid, subs * n2 / 8, smem,
                stream, in_place(batch), subs, args, mul, mul_shoup);
  });
  return true;
}

void launch_ntt32(const kernels::NttBatchT<u32>& batch, std::size_t count, bool forward,
                  cudaStream_t stream) {
  const std::size_t rows = launch_rows(count, batch.limbs);
  if (rows == 0) return;
  if (batch.n < 16) throw ParameterError("32-bit-word NTTs need N >= 16");
  run_two_kernel(batch, rows, forward, stream);
}

void launch_ntt(const NttBatch& batch, std::size_t count, bool forward, const NttSchedule& schedule,
                cudaStream_t stream) {
  const std::size_t rows = launch_rows(count, batch.limbs);
  if (rows == 0) return;
  std::string v = schedule.pick(batch.n, rows, forward, batch.paths);
  // The warp-shuffle kernel reads no lifted input: at N = 256 it would be the first kernel.
  if (batch.lift_rows && (v == "warp_shuffle" || v == "cluster") && batch.n <= 256)
    v = "two_kernel";
  if (v == "per_stage")
    run_per_stage(batch, rows, forward, stream);
  else if (v == "hybrid")
    run_hybrid(batch, rows, forward, stream);
  else if (v == "two_kernel")
    run_two_kernel(batch, rows, forward, stream);
  else if (v == "warp_shuffle")
    run_warp_shuffle(batch, rows, forward, stream);
  else if (v == "cluster")
    run_cluster(batch, rows, forward, stream);
  else
    throw ParameterError("unknown NTT variant '" + v +
                         "': use auto, per_stage, hybrid, two_kernel, warp_shuffle or cluster");
}

}  // namespace ember::cuda
