// Compile-time configuration shared by host and device code: the host/device qualifier macros.
#pragma once

#if defined(__CUDACC__)
#define EMBER_HD __host__ __device__ __forceinline__
#define EMBER_DEVICE_CODE 1
#define EMBER_UNROLL _Pragma("unroll")
#else
#define EMBER_HD inline
#define EMBER_UNROLL
#endif
