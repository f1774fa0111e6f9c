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
    {12, 1, "cluster", "cluster"},             // 3.5 / 3.7 us
    {12, 8, "cluster", "cluster"},             // 3.8 / 3.8 us
    {12, 24, "cluster", "cluster"},            // 4.6 / 4.4 us
    {12, 40, "cluster", "cluster"},            // 5.0 / 5.1 us
    {12, 64, "warp_shuffle", "two_kernel"},    // 7.0 / 7.1 us
    {13, 1, "cluster", "cluster"},             // 3.8 / 4.3 us
    {13, 8, "cluster", "cluster"},             // 3.9 / 4.4 us
    {13, 24, "cluster", "cluster"},            // 4.8 / 5.7 us
    {13, 40, "cluster", "cluster"},            // 6.0 / 6.9 us
    {13, 64, "warp_shuffle", "cluster"},       // 8.9 / 11.8 us
    {14, 1, "cluster", "cluster"},             // 4.2 / 4.6 us
    {14, 8, "cluster", "cluster"},             // 5.2 / 5.9 us
    {14, 24, "cluster", "cluster"},            // 7.6 / 8.9 us
    {14, 40, "cluster", "two_kernel"},         // 11.5 / 13.4 us
    {14, 64, "cluster", "cluster"},            // 14.9 / 17.0 us
    {15, 1, "two_kernel", "two_kernel"},       // 4.9 / 5.2 us
    {15, 8, "warp_shuffle", "two_kernel"},     // 8.2 / 7.5 us
    {15, 24, "warp_shuffle", "cluster"},       // 13.6 / 15.7 us
    {15, 40, "warp_shuffle", "warp_shuffle"},  // 19.3 / 20.7 us
    {15, 64, "warp_shuffle", "warp_shuffle"},  // 27.9 / 29.2 us
    {16, 1, "two_kernel", "two_kernel"},       // 5.7 / 5.6 us
    {16, 8, "warp_shuffle", "two_kernel"},     // 11.1 / 11.5 us
    {16, 24, "warp_shuffle", "warp_shuffle"},  // 22.3 / 22.4 us
    {16, 40, "warp_shuffle", "warp_shuffle"},  // 35.3 / 35.9 us
    {16, 64, "warp_shuffle", "warp_shuffle"},  // 57.1 / 59.0 us
    {17, 1, "warp_shuffle", "two_kernel"},     // 7.1 / 6.5 us
    {17, 8, "warp_shuffle", "two_kernel"},     // 19.8 / 21.6 us
    {17, 24, "warp_shuffle", "warp_shuffle"},  // 48.4 / 49.1 us
    {17, 40, "warp_shuffle", "two_kernel"},    // 84.7 / 82.5 us
    {17, 64, "warp_shuffle", "two_kernel"},    // 134.1 / 126.8 us
};

// NVIDIA H200, 2026-11-22, 60-bit primes
inline constexpr TunedNtt kTunedNttInt[] = {
    {12, 1, "cluster", "warp_shuffle"},        // 3.7 / 4.3 us
    {12, 8, "cluster", "cluster"},             // 3.8 / 4.3 us
    {12, 24, "cluster", "cluster"},            // 4.8 / 4.8 us
    {12, 40, "cluster", "cluster"},            // 5.4 / 5.9 us
    {12, 64, "warp_shuffle", "hybrid"},        // 7.5 / 8.0 us
    {13, 1, "cluster", "warp_shuffle"},        // 4.0 / 4.8 us
    {13, 8, "cluster", "cluster"},             // 4.1 / 5.1 us
    {13, 24, "cluster", "cluster"},            // 6.1 / 6.6 us
    {13, 40, "cluster", "cluster"},            // 7.3 / 8.5 us
    {13, 64, "warp_shuffle", "cluster"},       // 10.6 / 15.4 us
    {14, 1, "cluster", "warp_shuffle"},        // 4.5 / 5.3 us
    {14, 8, "warp_shuffle", "two_kernel"},     // 6.6 / 6.8 us
    {14, 24, "cluster", "two_kernel"},         // 9.7 / 10.8 us
    {14, 40, "cluster", "two_kernel"},         // 14.9 / 16.0 us
    {14, 64, "warp_shuffle", "warp_shuffle"},  // 19.6 / 22.0 us
    {15, 1, "two_kernel", "two_kernel"},       // 5.6 / 5.6 us
    {15, 8, "warp_shuffle", "two_kernel"},     // 8.8 / 8.2 us
    {15, 24, "warp_shuffle", "warp_shuffle"},  // 17.7 / 20.6 us
    {15, 40, "warp_shuffle", "warp_shuffle"},  // 24.7 / 25.8 us
    {15, 64, "warp_shuffle", "warp_shuffle"},  // 36.4 / 38.6 us
    {16, 1, "two_kernel", "two_kernel"},       // 6.6 / 6.4 us
    {16, 8, "warp_shuffle", "two_kernel"},     // 13.3 / 13.5 us
    {16, 24, "warp_shuffle", "warp_shuffle"},  // 29.3 / 29.7 us
    {16, 40, "warp_shuffle", "warp_shuffle"},  // 47.5 / 51.0 us
    {16, 64, "warp_shuffle", "warp_shuffle"},  // 74.2 / 82.7 us
    {17, 1, "warp_shuffle", "two_kernel"},     // 7.9 / 7.3 us
    {17, 8, "warp_shuffle", "warp_shuffle"},   // 24.7 / 27.0 us
    {17, 24, "warp_shuffle", "two_kernel"},    // 64.2 / 66.4 us
    {17, 40, "warp_shuffle", "two_kernel"},    // 106.3 / 106.6 us
    {17, 64, "warp_shuffle", "two_kernel"},    // 165.7 / 163.2 us
};

}  // namespace ember::cuda
