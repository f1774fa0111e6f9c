// The CPU backend's big-integer family (cpu_big_int.cpp): made by the CPU backend for each device.
#pragma once

#include <memory>

#include "cpu_threads.h"
#include "ember/backend/big_int_ops.h"

namespace ember::backend {

/// The CPU implementation of BigIntOps: big_int_rows.h per coefficient, OpenMP over coefficients.
std::unique_ptr<BigIntOps> make_cpu_big_int(CpuThreads& threads);

}  // namespace ember::backend
