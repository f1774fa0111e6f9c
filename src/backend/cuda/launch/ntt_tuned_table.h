// The built-in CUDA NTT autotune tables, one per GPU they were measured on. A GPU uses the table
// with its own name, else the one measured on the GPU nearest to it in multiprocessor count and
// memory bandwidth (tuned_gpu() in ntt.cu). To add a GPU: `ember tune --out gpu.json` on it,
// `python bench/make_ntt_table.py gpu.json` (writes tuned/ntt_<name>.h), then list it here.
#pragma once

#include "launch/ntt_tuned_types.h"
#include "launch/tuned/ntt_nvidia_h200.h"

namespace ember::cuda {

inline constexpr const TunedGpu* kTunedGpus[] = {&kNvidiaH200};

}  // namespace ember::cuda
