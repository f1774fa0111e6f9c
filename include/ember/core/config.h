// Compile-time configuration shared by host and device code: the host/device qualifier macros.
#pragma once

#if defined(__CUDACC__)
#define EMBER_HD __host__ __device__ __forceinline__
#define EMBER_DEVICE_CODE 1
#define EMBER_UNROLL _Pragma("unroll")
/// Unrolls a loop with a run-time trip count four times: more loads in flight per thread.
#define EMBER_UNROLL4 _Pragma("unroll 4")
#else
#define EMBER_HD inline
#define EMBER_UNROLL
#define EMBER_UNROLL4
#endif
