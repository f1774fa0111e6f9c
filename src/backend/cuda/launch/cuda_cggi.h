// The CUDA backend's CGGI family (cggi_ops.h), made for one GPU.
#pragma once

#include <memory>

#include "ember/backend/backend.h"
#include "ember/backend/cggi_ops.h"
#include "runtime/device_context.h"

namespace ember::backend {

/// The CGGI operations on the GPU of `ctx` (which must outlive them).
std::unique_ptr<CggiOps> make_cuda_cggi(cuda::DeviceContext& ctx, const Backend& owner);

}  // namespace ember::backend
