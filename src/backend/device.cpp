// Device names, and the registry that maps a device to its backend.
#include <atomic>
#include <cstdint>
#include <string>

#include "ember/backend/backend.h"
#include "ember/core/errors.h"
#include "ember/core/process.h"

namespace ember::backend {

Backend& cpu_backend();
#if defined(EMBER_WITH_CUDA)
Backend& cuda_backend(int index);
std::vector<GpuInfo> cuda_device_list();
#endif

void check_linear_combination(const std::vector<const u64*>& a0, const std::vector<const u64*>& a1,
                              const std::vector<std::vector<u64>>& scalars,
                              const std::vector<u64>& constant, const BasisView& b) {
  if (a0.empty() || a0.size() > Backend::kMaxLinearTerms || a1.size() != a0.size() ||
      scalars.size() != a0.size())
    throw ParameterError("linear_combination: 1 to 16 terms, each with its scalars");
  if (b.limbs > Backend::kMaxLinearLimbs || constant.size() != b.limbs)
    throw ParameterError("linear_combination: at most 64 limbs, one constant per limb");
  for (const auto& s : scalars)
    if (s.size() != b.limbs) throw ParameterError("linear_combination: one scalar per limb");
}

std::string Device::str() const {
  return kind == DeviceKind::cpu ? std::string("cpu") : "cuda:" + std::to_string(index);
}

bool cuda_compiled() {
#if defined(EMBER_WITH_CUDA)
  return true;
#else
  return false;
#endif
}

std::vector<GpuInfo> cuda_devices() {
#if defined(EMBER_WITH_CUDA)
  return cuda_device_list();
#else
  return {};
#endif
}

#if defined(EMBER_WITH_CUDA)
namespace {
/// A CUDA context does not survive fork(): a child of a process that used the GPU gets errors or
/// hangs from the driver. The fork generation of the first GPU use tells the child apart.
void check_gpu_not_inherited() {
  constexpr std::uint64_t kUnused = ~std::uint64_t{0};
  static std::atomic<std::uint64_t> first_use{kUnused};
  const std::uint64_t now = fork_generation();
  // Every device operation passes here: a plain load settles it, the exchange runs once.
  std::uint64_t seen = first_use.load(std::memory_order_relaxed);
  if (seen == now) return;
  if (seen == kUnused && (first_use.compare_exchange_strong(seen, now) || seen == now)) return;
  throw DeviceError(
      "this process was forked from one that had already used the GPU, and a CUDA context does "
      "not survive fork(): start worker processes with multiprocessing's 'spawn' or "
      "'forkserver' method, or compute on device='cpu' in the child");
}
}  // namespace
#endif

Backend& backend_for(const Device& device) {
  if (device.kind == DeviceKind::cpu) return cpu_backend();
#if defined(EMBER_WITH_CUDA)
  check_gpu_not_inherited();
  return cuda_backend(device.index);
#else
  throw DeviceError(
      "this build of Ember has no CUDA backend; rebuild with nvcc available "
      "(EMBER_CUDA=ON) or use device='cpu'");
#endif
}

Device parse_device(const std::string& spec) {
  if (spec == "cpu") return {DeviceKind::cpu, 0};
  if (spec == "auto") {
    return cuda_devices().empty() ? Device{DeviceKind::cpu, 0} : Device{DeviceKind::cuda, 0};
  }
  if (spec == "cuda" || spec == "gpu") return {DeviceKind::cuda, 0};
  if (spec.rfind("cuda:", 0) == 0) {
    const std::string idx = spec.substr(5);
    if (!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos && idx.size() < 4)
      return {DeviceKind::cuda, std::stoi(idx)};
  }
  throw ParameterError("unknown device '" + spec + "': use 'cpu', 'cuda', 'cuda:N' or 'auto'");
}

}  // namespace ember::backend
