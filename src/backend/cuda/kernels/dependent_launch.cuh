// The device half of programmatic dependent launch (Hopper): how a kernel waits for the previous
// kernels of its stream.
#pragma once

namespace ember::cuda::kernels {

/// Every kernel launched by cuda::launch() calls this before it touches global memory that
/// earlier work of the stream writes or reads; immutable tables (twiddles, moduli) may be read
/// before it. It blocks until the previous kernels of the stream have completed and their writes
/// are visible, then lets the stream's next kernel begin launching: its blocks are placed as this
/// kernel's blocks drain and run their own prologue meanwhile. Triggering only after the wait
/// keeps at most one kernel waiting behind the running one; triggering before it let whole
/// chains of waiting kernels hold SM slots (measured: up to 1.6x slower small NTTs). Without the
/// launch attribute both instructions are no-ops.
__device__ __forceinline__ void wait_for_previous_kernels() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace ember::cuda::kernels
