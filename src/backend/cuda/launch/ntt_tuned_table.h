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
    {12, 1, "cluster", "cluster"},             // 3.4 / 3.6 us
    {12, 8, "cluster", "cluster"},             // 3.7 / 3.8 us
    {12, 24, "cluster", "cluster"},            // 4.6 / 4.4 us
    {12, 40, "cluster", "cluster"},            // 5.0 / 5.1 us
    {12, 64, "warp_shuffle", "warp_shuffle"},  // 6.4 / 5.9 us
    {13, 1, "cluster", "warp_shuffle"},        // 3.6 / 4.0 us
    {13, 8, "cluster", "cluster"},             // 3.7 / 4.4 us
    {13, 24, "cluster", "cluster"},            // 4.8 / 5.6 us
    {13, 40, "cluster", "cluster"},            // 6.0 / 7.0 us
    {13, 64, "warp_shuffle", "warp_shuffle"},  // 8.9 / 8.7 us
    {14, 1, "cluster", "warp_shuffle"},        // 4.2 / 4.2 us
    {14, 8, "cluster", "warp_shuffle"},        // 5.2 / 5.6 us
    {14, 24, "cluster", "warp_shuffle"},       // 7.6 / 7.9 us
    {14, 40, "cluster", "warp_shuffle"},       // 11.3 / 12.9 us
    {14, 64, "warp_shuffle", "warp_shuffle"},  // 14.3 / 15.2 us
    {15, 1, "two_kernel", "warp_shuffle"},     // 4.9 / 5.1 us
    {15, 8, "warp_shuffle", "warp_shuffle"},   // 7.7 / 7.4 us
    {15, 24, "warp_shuffle", "warp_shuffle"},  // 13.7 / 14.9 us
    {15, 40, "warp_shuffle", "warp_shuffle"},  // 18.0 / 19.0 us
    {15, 64, "warp_shuffle", "warp_shuffle"},  // 25.1 / 26.9 us
    {16, 1, "two_kernel", "two_kernel"},       // 5.3 / 5.6 us
    {16, 8, "warp_shuffle", "warp_shuffle"},   // 11.0 / 10.5 us
    {16, 24, "warp_shuffle", "warp_shuffle"},  // 20.4 / 20.9 us
    {16, 40, "warp_shuffle", "warp_shuffle"},  // 32.4 / 34.2 us
    {16, 64, "warp_shuffle", "warp_shuffle"},  // 55.3 / 59.8 us
    {17, 1, "warp_shuffle", "warp_shuffle"},   // 6.8 / 6.5 us
    {17, 8, "warp_shuffle", "warp_shuffle"},   // 18.8 / 19.2 us
    {17, 24, "warp_shuffle", "warp_shuffle"},  // 45.9 / 49.1 us
    {17, 40, "warp_shuffle", "two_kernel"},    // 86.9 / 84.9 us
    {17, 64, "warp_shuffle", "two_kernel"},    // 139.0 / 129.8 us
};

// NVIDIA H200, 2026-11-22, 60-bit primes
inline constexpr TunedNtt kTunedNttInt[] = {
    {12, 1, "cluster", "warp_shuffle"},        // 3.6 / 4.1 us
    {12, 8, "cluster", "cluster"},             // 3.8 / 4.2 us
    {12, 24, "cluster", "cluster"},            // 4.9 / 4.8 us
    {12, 40, "cluster", "warp_shuffle"},       // 5.4 / 6.0 us
    {12, 64, "warp_shuffle", "warp_shuffle"},  // 7.1 / 6.7 us
    {13, 1, "cluster", "warp_shuffle"},        // 4.0 / 4.5 us
    {13, 8, "cluster", "cluster"},             // 4.2 / 5.1 us
    {13, 24, "cluster", "warp_shuffle"},       // 5.8 / 6.8 us
    {13, 40, "cluster", "warp_shuffle"},       // 7.6 / 8.7 us
    {13, 64, "warp_shuffle", "warp_shuffle"},  // 10.4 / 10.2 us
    {14, 1, "warp_shuffle", "warp_shuffle"},   // 4.9 / 4.8 us
    {14, 8, "warp_shuffle", "warp_shuffle"},   // 6.3 / 6.4 us
    {14, 24, "warp_shuffle", "warp_shuffle"},  // 10.1 / 9.8 us
    {14, 40, "two_kernel", "warp_shuffle"},    // 14.4 / 17.3 us
    {14, 64, "warp_shuffle", "warp_shuffle"},  // 18.7 / 19.4 us
    {15, 1, "warp_shuffle", "warp_shuffle"},   // 5.5 / 5.6 us
    {15, 8, "warp_shuffle", "warp_shuffle"},   // 8.6 / 8.0 us
    {15, 24, "warp_shuffle", "warp_shuffle"},  // 18.5 / 19.3 us
    {15, 40, "warp_shuffle", "warp_shuffle"},  // 23.8 / 24.4 us
    {15, 64, "warp_shuffle", "warp_shuffle"},  // 35.4 / 36.9 us
    {16, 1, "two_kernel", "two_kernel"},       // 6.2 / 6.4 us
    {16, 8, "warp_shuffle", "warp_shuffle"},   // 13.1 / 12.3 us
    {16, 24, "warp_shuffle", "warp_shuffle"},  // 28.1 / 28.3 us
    {16, 40, "warp_shuffle", "warp_shuffle"},  // 46.7 / 49.5 us
    {16, 64, "warp_shuffle", "warp_shuffle"},  // 75.1 / 80.5 us
    {17, 1, "warp_shuffle", "two_kernel"},     // 7.8 / 7.4 us
    {17, 8, "warp_shuffle", "warp_shuffle"},   // 23.8 / 24.1 us
    {17, 24, "warp_shuffle", "warp_shuffle"},  // 63.6 / 66.8 us
    {17, 40, "warp_shuffle", "two_kernel"},    // 108.7 / 113.6 us
    {17, 64, "warp_shuffle", "two_kernel"},    // 172.2 / 171.3 us
};

}  // namespace ember::cuda
