// The CPU backend's CKKS encoding family (cpu_ckks_encode.cpp).
#pragma once

#include <memory>

#include "ember/backend/ckks_encode_ops.h"

namespace ember::backend {

/// The CPU implementation of CkksEncodeOps (host loops over ckks_fft.h's functions).
std::unique_ptr<CkksEncodeOps> make_cpu_ckks_encode();

}  // namespace ember::backend
