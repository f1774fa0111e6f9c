// The CPU backend's BFV/BGV encoding family (cpu_integer_encode.cpp).
#pragma once

#include <memory>

#include "ember/backend/integer_encode_ops.h"

namespace ember::backend {

/// The CPU implementation of IntegerEncodeOps (host loops over integer_plain.h's functions).
std::unique_ptr<IntegerEncodeOps> make_cpu_integer_encode();

}  // namespace ember::backend
