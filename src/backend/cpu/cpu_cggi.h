// The CPU backend's CGGI family (cpu_cggi.cpp): made by the CPU backend for each CPU device.
#pragma once

#include <memory>

#include "cpu_threads.h"
#include "ember/backend/cggi_ops.h"

namespace ember::backend {

/// The CPU implementation of CggiOps, running its batches on `threads`' OpenMP team.
std::unique_ptr<CggiOps> make_cpu_cggi(CpuThreads& threads);

}  // namespace ember::backend
