// The modular row sum of the collectives: a host loop for CPU devices, the kernel for GPUs.
#include "sum_mod.h"

#include <string>

#include "ember/core/errors.h"
#include "ember/core/modarith.h"

namespace ember::dist {

void sum_mod_rows_async(backend::Backend& be, u64* out, const std::vector<const u64*>& in,
                        std::size_t rows, std::size_t n, const backend::BasisView& b,
                        std::size_t row0, backend::Stream s) {
  if (in.empty() || in.size() > kMaxSumInputs)
    throw ParameterError("sum_mod_rows: 1 to 8 inputs, got " + std::to_string(in.size()));
  if (row0 + rows > b.limbs) throw ParameterError("sum_mod_rows: rows past the basis");
  if (be.device().kind == backend::DeviceKind::cuda) {
#if defined(EMBER_WITH_CUDA)
    launch_sum_mod_rows(be.device().index, out, in, rows, n, b, row0, s);
    return;
#else
    throw DeviceError("sum_mod_rows: this build has no CUDA backend");
#endif
  }
  // CPU devices: host memory, the work done before returning (one thread: a fallback path).
  for (std::size_t r = 0; r < rows; ++r) {
    const Modulus& m = b.ring->host_moduli[b.host_ids[row0 + r]];
    for (std::size_t i = r * n; i < (r + 1) * n; ++i) {
      u64 sum = 0;
      for (const u64* p : in) sum += p[i];
      out[i] = barrett_reduce_64(sum, m);
    }
  }
}

}  // namespace ember::dist
