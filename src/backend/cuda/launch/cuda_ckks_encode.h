// The CUDA backend's CKKS encoding family (ckks_encode_ops.h), made for one GPU.
#pragma once

#include <memory>

#include "ember/backend/ckks_encode_ops.h"
#include "runtime/device_context.h"

namespace ember::backend {

/// The CKKS encoding operations on the GPU of `ctx` (which must outlive them).
std::unique_ptr<CkksEncodeOps> make_cuda_ckks_encode(cuda::DeviceContext& ctx);

}  // namespace ember::backend
