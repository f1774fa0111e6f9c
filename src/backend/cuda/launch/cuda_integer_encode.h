// The CUDA backend's BFV/BGV encoding family (integer_encode_ops.h), made for one GPU.
#pragma once

#include <memory>

#include "ember/backend/integer_encode_ops.h"
#include "runtime/device_context.h"

namespace ember::backend {

/// The integer encoding operations on the GPU of `ctx` (which must outlive them).
std::unique_ptr<IntegerEncodeOps> make_cuda_integer_encode(cuda::DeviceContext& ctx);

}  // namespace ember::backend
