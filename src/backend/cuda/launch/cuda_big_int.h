// The CUDA backend's big-integer family (big_int_ops.h), made for one GPU.
#pragma once

#include <memory>

#include "ember/backend/big_int_ops.h"
#include "runtime/device_context.h"

namespace ember::backend {

/// The big-integer operations on the GPU of `ctx` (which must outlive them).
std::unique_ptr<BigIntOps> make_cuda_big_int(cuda::DeviceContext& ctx);

}  // namespace ember::backend
