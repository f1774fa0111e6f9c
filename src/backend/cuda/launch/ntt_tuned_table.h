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
    {12, 1, "warp_shuffle", "warp_shuffle"},   // 4.4 / 3.9 us
    {12, 8, "warp_shuffle", "warp_shuffle"},   // 5.1 / 4.8 us
    {12, 24, "warp_shuffle", "hybrid"},        // 5.8 / 6.4 us
    {12, 40, "warp_shuffle", "hybrid"},        // 6.3 / 6.7 us
    {12, 64, "warp_shuffle", "two_kernel"},    // 7.0 / 7.1 us
    {13, 1, "warp_shuffle", "warp_shuffle"},   // 4.6 / 4.3 us
    {13, 8, "warp_shuffle", "warp_shuffle"},   // 5.6 / 6.0 us
    {13, 24, "warp_shuffle", "hybrid"},        // 6.8 / 9.2 us
    {13, 40, "warp_shuffle", "warp_shuffle"},  // 8.0 / 11.9 us
    {13, 64, "warp_shuffle", "warp_shuffle"},  // 9.0 / 13.5 us
    {14, 1, "two_kernel", "warp_shuffle"},     // 4.5 / 4.6 us
    {14, 8, "warp_shuffle", "two_kernel"},     // 6.5 / 6.0 us
    {14, 24, "warp_shuffle", "two_kernel"},    // 8.5 / 11.6 us
    {14, 40, "warp_shuffle", "two_kernel"},    // 12.9 / 13.4 us
    {14, 64, "two_kernel", "warp_shuffle"},    // 15.2 / 17.2 us
    {15, 1, "two_kernel", "two_kernel"},       // 4.9 / 5.1 us
    {15, 8, "warp_shuffle", "two_kernel"},     // 8.3 / 7.5 us
    {15, 24, "warp_shuffle", "warp_shuffle"},  // 13.4 / 17.1 us
    {15, 40, "warp_shuffle", "warp_shuffle"},  // 19.5 / 20.7 us
    {15, 64, "warp_shuffle", "warp_shuffle"},  // 27.8 / 29.1 us
    {16, 1, "two_kernel", "two_kernel"},       // 5.6 / 5.6 us
    {16, 8, "warp_shuffle", "two_kernel"},     // 11.1 / 11.5 us
    {16, 24, "warp_shuffle", "warp_shuffle"},  // 22.2 / 22.3 us
    {16, 40, "warp_shuffle", "warp_shuffle"},  // 35.2 / 35.7 us
    {16, 64, "warp_shuffle", "warp_shuffle"},  // 57.0 / 58.9 us
    {17, 1, "warp_shuffle", "two_kernel"},     // 7.1 / 6.5 us
    {17, 8, "warp_shuffle", "warp_shuffle"},   // 19.7 / 21.4 us
    {17, 24, "warp_shuffle", "two_kernel"},    // 48.4 / 48.9 us
    {17, 40, "warp_shuffle", "two_kernel"},    // 84.8 / 82.7 us
    {17, 64, "warp_shuffle", "two_kernel"},    // 134.1 / 126.8 us
};

// NVIDIA H200, 2026-11-22, 60-bit primes
inline constexpr TunedNtt kTunedNttInt[] = {
    {12, 1, "warp_shuffle", "warp_shuffle"},   // 4.5 / 4.3 us
    {12, 8, "warp_shuffle", "warp_shuffle"},   // 5.1 / 5.3 us
    {12, 24, "warp_shuffle", "warp_shuffle"},  // 5.6 / 6.3 us
    {12, 40, "warp_shuffle", "hybrid"},        // 6.4 / 7.4 us
    {12, 64, "warp_shuffle", "hybrid"},        // 7.5 / 8.0 us
    {13, 1, "warp_shuffle", "warp_shuffle"},   // 4.7 / 4.8 us
    {13, 8, "warp_shuffle", "warp_shuffle"},   // 5.6 / 6.6 us
    {13, 24, "warp_shuffle", "hybrid"},        // 6.9 / 9.9 us
    {13, 40, "warp_shuffle", "warp_shuffle"},  // 8.8 / 13.1 us
    {13, 64, "warp_shuffle", "warp_shuffle"},  // 10.5 / 17.0 us
    {14, 1, "two_kernel", "warp_shuffle"},     // 5.0 / 5.2 us
    {14, 8, "warp_shuffle", "two_kernel"},     // 6.6 / 6.6 us
    {14, 24, "warp_shuffle", "two_kernel"},    // 10.3 / 13.9 us
    {14, 40, "warp_shuffle", "two_kernel"},    // 16.8 / 16.1 us
    {14, 64, "warp_shuffle", "warp_shuffle"},  // 19.4 / 22.0 us
    {15, 1, "two_kernel", "two_kernel"},       // 5.5 / 5.6 us
    {15, 8, "warp_shuffle", "two_kernel"},     // 8.7 / 8.3 us
    {15, 24, "warp_shuffle", "warp_shuffle"},  // 17.7 / 21.2 us
    {15, 40, "warp_shuffle", "warp_shuffle"},  // 24.7 / 26.3 us
    {15, 64, "warp_shuffle", "warp_shuffle"},  // 36.0 / 39.1 us
    {16, 1, "two_kernel", "two_kernel"},       // 6.4 / 6.3 us
    {16, 8, "warp_shuffle", "two_kernel"},     // 13.2 / 13.5 us
    {16, 24, "warp_shuffle", "warp_shuffle"},  // 29.2 / 29.7 us
    {16, 40, "warp_shuffle", "warp_shuffle"},  // 47.4 / 51.0 us
    {16, 64, "warp_shuffle", "warp_shuffle"},  // 74.1 / 82.7 us
    {17, 1, "warp_shuffle", "two_kernel"},     // 7.9 / 7.3 us
    {17, 8, "warp_shuffle", "warp_shuffle"},   // 24.8 / 27.0 us
    {17, 24, "warp_shuffle", "two_kernel"},    // 64.6 / 66.8 us
    {17, 40, "warp_shuffle", "two_kernel"},    // 107.0 / 108.3 us
    {17, 64, "warp_shuffle", "two_kernel"},    // 166.8 / 165.7 us
};

}  // namespace ember::cuda
