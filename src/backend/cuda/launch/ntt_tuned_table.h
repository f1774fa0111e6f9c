// Measured fastest NTT schedule per (log N, limbs in one launch) and direction, on the FP64
// path (batches with a prime of at most 50 bits) and on the integer path (the others); generated
// by bench/make_ntt_table.py.
#pragma once

namespace ember::cuda {

struct TunedNtt {
  int log_n;
  int limbs;
  const char* forward;
  const char* inverse;
};

// NVIDIA H200, 2026-11-22, 50-bit primes
inline constexpr TunedNtt kTunedNttFloat[] = {
    {12, 1, "warp_shuffle", "warp_shuffle"},  // 4.5 / 4.0 us
    {12, 8, "warp_shuffle", "warp_shuffle"},  // 5.2 / 4.9 us
    {12, 24, "warp_shuffle", "hybrid"},  // 5.8 / 6.5 us
    {12, 40, "warp_shuffle", "hybrid"},  // 6.3 / 6.8 us
    {12, 64, "warp_shuffle", "two_kernel"},  // 7.1 / 7.0 us
    {13, 1, "warp_shuffle", "warp_shuffle"},  // 4.6 / 4.4 us
    {13, 8, "warp_shuffle", "warp_shuffle"},  // 5.8 / 5.9 us
    {13, 24, "warp_shuffle", "hybrid"},  // 6.7 / 9.2 us
    {13, 40, "warp_shuffle", "warp_shuffle"},  // 7.9 / 11.6 us
    {13, 64, "warp_shuffle", "warp_shuffle"},  // 9.2 / 13.3 us
    {14, 1, "two_kernel", "warp_shuffle"},  // 4.5 / 4.6 us
    {14, 8, "warp_shuffle", "two_kernel"},  // 6.6 / 6.4 us
    {14, 24, "warp_shuffle", "two_kernel"},  // 8.7 / 9.5 us
    {14, 40, "warp_shuffle", "warp_shuffle"},  // 13.2 / 14.4 us
    {14, 64, "two_kernel", "warp_shuffle"},  // 15.7 / 17.1 us
    {15, 1, "two_kernel", "two_kernel"},  // 4.8 / 5.1 us
    {15, 8, "warp_shuffle", "two_kernel"},  // 8.3 / 7.5 us
    {15, 24, "warp_shuffle", "warp_shuffle"},  // 14.7 / 16.2 us
    {15, 40, "warp_shuffle", "warp_shuffle"},  // 19.5 / 20.2 us
    {15, 64, "warp_shuffle", "warp_shuffle"},  // 28.0 / 28.7 us
    {16, 1, "two_kernel", "two_kernel"},  // 5.5 / 5.5 us
    {16, 8, "warp_shuffle", "two_kernel"},  // 11.3 / 13.0 us
    {16, 24, "warp_shuffle", "warp_shuffle"},  // 22.6 / 22.6 us
    {16, 40, "warp_shuffle", "warp_shuffle"},  // 35.7 / 36.5 us
    {16, 64, "warp_shuffle", "warp_shuffle"},  // 57.3 / 59.6 us
    {17, 1, "warp_shuffle", "two_kernel"},  // 7.1 / 6.4 us
    {17, 8, "warp_shuffle", "warp_shuffle"},  // 19.8 / 21.3 us
    {17, 24, "warp_shuffle", "two_kernel"},  // 48.8 / 49.2 us
    {17, 40, "warp_shuffle", "two_kernel"},  // 85.4 / 83.3 us
    {17, 64, "warp_shuffle", "two_kernel"},  // 135.1 / 127.6 us
};

// NVIDIA H200, 2026-11-22, 50-bit primes with EMBER_NTT_FP64=0 (the integer path)
inline constexpr TunedNtt kTunedNttInt[] = {
    {12, 1, "warp_shuffle", "warp_shuffle"},  // 4.6 / 4.5 us
    {12, 8, "warp_shuffle", "warp_shuffle"},  // 5.2 / 5.4 us
    {12, 24, "warp_shuffle", "warp_shuffle"},  // 5.5 / 6.5 us
    {12, 40, "warp_shuffle", "hybrid"},  // 6.4 / 7.5 us
    {12, 64, "warp_shuffle", "hybrid"},  // 7.3 / 8.0 us
    {13, 1, "warp_shuffle", "warp_shuffle"},  // 4.8 / 5.0 us
    {13, 8, "warp_shuffle", "warp_shuffle"},  // 5.8 / 6.6 us
    {13, 24, "warp_shuffle", "hybrid"},  // 6.9 / 9.8 us
    {13, 40, "warp_shuffle", "warp_shuffle"},  // 8.9 / 13.4 us
    {13, 64, "warp_shuffle", "warp_shuffle"},  // 10.5 / 17.3 us
    {14, 1, "two_kernel", "warp_shuffle"},  // 5.0 / 5.3 us
    {14, 8, "warp_shuffle", "two_kernel"},  // 6.8 / 6.7 us
    {14, 24, "warp_shuffle", "two_kernel"},  // 10.2 / 10.8 us
    {14, 40, "warp_shuffle", "two_kernel"},  // 17.0 / 16.0 us
    {14, 64, "warp_shuffle", "two_kernel"},  // 19.6 / 22.0 us
    {15, 1, "two_kernel", "two_kernel"},  // 5.5 / 5.6 us
    {15, 8, "warp_shuffle", "two_kernel"},  // 9.1 / 8.3 us
    {15, 24, "warp_shuffle", "warp_shuffle"},  // 17.8 / 20.9 us
    {15, 40, "warp_shuffle", "warp_shuffle"},  // 24.7 / 25.9 us
    {15, 64, "warp_shuffle", "warp_shuffle"},  // 36.1 / 38.8 us
    {16, 1, "two_kernel", "two_kernel"},  // 6.5 / 6.3 us
    {16, 8, "warp_shuffle", "two_kernel"},  // 13.3 / 13.4 us
    {16, 24, "warp_shuffle", "warp_shuffle"},  // 29.3 / 29.7 us
    {16, 40, "warp_shuffle", "warp_shuffle"},  // 47.6 / 51.5 us
    {16, 64, "warp_shuffle", "warp_shuffle"},  // 74.0 / 82.6 us
    {17, 1, "warp_shuffle", "two_kernel"},  // 7.9 / 7.3 us
    {17, 8, "warp_shuffle", "warp_shuffle"},  // 24.7 / 26.8 us
    {17, 24, "warp_shuffle", "two_kernel"},  // 64.0 / 64.5 us
    {17, 40, "warp_shuffle", "two_kernel"},  // 106.3 / 104.5 us
    {17, 64, "warp_shuffle", "two_kernel"},  // 165.3 / 160.9 us
};

}  // namespace ember::cuda
