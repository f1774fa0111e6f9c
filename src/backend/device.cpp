// Device names, and the registry that maps a device to its backend.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ember/backend/backend.h"
#include "ember/backend/stream_join.h"
#include "ember/core/errors.h"
#include "ember/core/process.h"

namespace ember::backend {

Backend& cpu_backend(int index);
#if defined(EMBER_WITH_CUDA)
Backend& cuda_backend(int index);
std::vector<GpuInfo> cuda_device_list();
#endif

void check_linear_combination(std::size_t terms0, std::size_t terms1,
                              const std::vector<std::vector<u64>>& scalars,
                              const std::vector<u64>& constant, std::size_t limbs) {
  if (terms0 == 0 || terms0 > Backend::kMaxLinearTerms || terms1 != terms0 ||
      scalars.size() != terms0)
    throw ParameterError("linear_combination: 1 to 16 terms, each with its scalars");
  if (limbs > Backend::kMaxLinearLimbs || constant.size() != limbs)
    throw ParameterError("linear_combination: at most 64 limbs, one constant per limb");
  for (const auto& s : scalars)
    if (s.size() != limbs) throw ParameterError("linear_combination: one scalar per limb");
}

void check_linear_map(std::size_t outputs0, std::size_t outputs1, std::size_t inputs0,
                      std::size_t inputs1, const std::vector<u64>& weights,
                      const std::vector<u64>& constants, std::size_t limbs) {
  if (outputs0 == 0 || inputs0 == 0 || outputs1 != outputs0 || inputs1 != inputs0)
    throw ParameterError("linear_map: at least one input and one output, two halves each");
  if (weights.size() != outputs0 * inputs0 * limbs)
    throw ParameterError("linear_map: one weight per output, input and limb");
  if (constants.size() != outputs0 * limbs)
    throw ParameterError("linear_map: one constant per output and limb");
}

std::size_t Runtime::memory_available() {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)
                               : 0;
}

void* Runtime::allocate_host(std::size_t bytes) {
  void* p = std::aligned_alloc(64, (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64);
  if (!p)
    throw DeviceMemoryError("out of host memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

void Runtime::deallocate_host(void* p, std::size_t) noexcept { std::free(p); }

std::string Device::str() const {
  if (kind == DeviceKind::cpu)
    return index == 0 ? std::string("cpu") : "cpu:" + std::to_string(index);
  return "cuda:" + std::to_string(index);
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
  if (device.kind == DeviceKind::cpu) return cpu_backend(device.index);
#if defined(EMBER_WITH_CUDA)
  check_gpu_not_inherited();
  return cuda_backend(device.index);
#else
  throw DeviceError(
      "this build of Ember has no CUDA backend; rebuild with nvcc available "
      "(EMBER_CUDA=ON) or use device='cpu'");
#endif
}

void copy_between_devices(Backend& dst_be, void* dst, Stream dst_stream, Backend& src_be,
                          const void* src, Stream src_stream, std::size_t bytes) {
  if (!bytes) return;
  const Device to = dst_be.device(), from = src_be.device();
  if (to == from) {
    wait_for(dst_be, dst_stream, src_stream);
    dst_be.copy_async(dst, src, bytes, dst_stream);
  } else if (to.kind == DeviceKind::cuda && from.kind == DeviceKind::cuda) {
    // The copy waits on the destination's stream for the source's writes, and the source's
    // stream waits for the copy before anything later (a stream-ordered free of src) runs.
    Event ready = src_be.create_event();
    src_be.record_event(ready, src_stream);
    dst_be.wait_event(dst_stream, ready);
    dst_be.copy_from_peer_async(dst, src, from, bytes, dst_stream);
    Event done = dst_be.create_event();
    dst_be.record_event(done, dst_stream);
    src_be.wait_event(src_stream, done);
    src_be.destroy_event(ready);
    dst_be.destroy_event(done);
  } else if (from.kind == DeviceKind::cuda) {
    src_be.copy_to_host_async(dst, src, bytes, src_stream);  // CPU memory is host memory
    src_be.synchronize(src_stream);
  } else if (to.kind == DeviceKind::cuda) {
    dst_be.copy_from_host_async(dst, src, bytes, dst_stream);
    dst_be.synchronize(dst_stream);  // the host memory may be released once this returns
  } else {
    dst_be.copy_from_peer_async(dst, src, from, bytes, dst_stream);  // two CPU devices
  }
}

Device parse_device(const std::string& spec) {
  if (spec == "cpu") return {DeviceKind::cpu, 0};
  if (spec.rfind("cpu:", 0) == 0) {
    const std::string idx = spec.substr(4);
    if (!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos &&
        idx.size() < 4 && std::stoi(idx) < kMaxCpuDevices)
      return {DeviceKind::cpu, std::stoi(idx)};
    throw ParameterError("unknown device '" + spec +
                         "': CPU devices are cpu:0 to cpu:" + std::to_string(kMaxCpuDevices - 1));
  }
  if (spec == "auto") {
    return cuda_devices().empty() ? Device{DeviceKind::cpu, 0} : Device{DeviceKind::cuda, 0};
  }
  if (spec == "cuda" || spec == "gpu") return {DeviceKind::cuda, 0};
  if (spec.rfind("cuda:", 0) == 0) {
    const std::string idx = spec.substr(5);
    if (!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos && idx.size() < 4)
      return {DeviceKind::cuda, std::stoi(idx)};
  }
  throw ParameterError("unknown device '" + spec +
                       "': use 'cpu', 'cpu:N', 'cuda', 'cuda:N' or 'auto'");
}

}  // namespace ember::backend
