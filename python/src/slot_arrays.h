// Slot values as DLPack arrays for the CKKS encoders (ckks, heaan): their element type, whether
// they are in the context's device memory, and device arrays handed out without a copy.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "convert.h"
#include "ember/backend/buffer.h"
#include "ember/backend/ckks_fft.h"
#include "ember/backend/runtime.h"
#include "ember/core/errors.h"

namespace ember::py {

namespace nb = nanobind;

/// Slot values of any float or complex type on any device (DLPack), flat and contiguous.
using AnyValues = nb::ndarray<nb::ndim<1>, nb::c_contig>;
using SlotType = backend::ckks::SlotType;

inline SlotType slot_type_of(const AnyValues& a) {
  const auto d = a.dtype();
  const bool fl = d.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float);
  const bool cx = d.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Complex);
  if (d.lanes == 1 && fl && d.bits == 32) return SlotType::f32;
  if (d.lanes == 1 && fl && d.bits == 64) return SlotType::f64;
  if (d.lanes == 1 && cx && d.bits == 64) return SlotType::c64;
  if (d.lanes == 1 && cx && d.bits == 128) return SlotType::c128;
  throw ParameterError(
      "encode: values must be float32, float64, complex64 or complex128 (convert them first)");
}

inline std::string dlpack_device_name(int dlpack_type, int id) {
  return (dlpack_type == nb::device::cuda::value
              ? "cuda:"
              : "device type " + std::to_string(dlpack_type) + ":") +
         std::to_string(id);
}

/// Whether a context on `device` reads `a` in its own device memory (true) or in host memory
/// (false). Throws ParameterError for memory of another device.
inline bool in_device_memory(backend::Device device, const AnyValues& a) {
  if (a.device_type() == nb::device::cpu::value) return false;
  if (a.device_type() == nb::device::cuda::value && device.kind == backend::DeviceKind::cuda &&
      a.device_id() == device.index)
    return true;
  throw ParameterError("encode: the values are on " +
                       dlpack_device_name(a.device_type(), a.device_id()) +
                       " but the context is on " + device.str() +
                       ": move them there first (tensor.to(...)) or use ctx.to(...)");
}

/// An array of values of `type` (f64 or c128) in `device`'s memory, owning its buffer, for any
/// DLPack consumer (torch.from_dlpack, cupy.from_dlpack) to take without a copy.
inline nb::ndarray<> device_array(backend::Device device, backend::Buffer* buffer,
                                  const std::vector<std::size_t>& shape, SlotType type) {
  nb::capsule owner(buffer, [](void* p) noexcept { delete static_cast<backend::Buffer*>(p); });
  const auto dtype =
      type == SlotType::c128 ? nb::dtype<std::complex<double>>() : nb::dtype<double>();
  return nb::ndarray<>(buffer->as<void>(), shape.size(), shape.data(), owner, nullptr, dtype,
                       nb::device::cuda::value, device.index);
}

/// ctx.slots_to_coeffs of N/2 complex slot values on the host (ckks's and heaan's contexts): the
/// encoding's coefficients before the scale, as numpy.
template <class Ctx>
auto host_slots_to_coeffs(const Ctx& x, const C128Vector& z) {
  if (z.shape(0) != x.n() / 2)
    throw ParameterError("slots_to_coeffs: expected " + std::to_string(x.n() / 2) +
                         " values, got " + std::to_string(z.shape(0)));
  std::vector<std::complex<double>> copy;
  const auto* p = aligned(z, copy);
  return owned(x.slots_to_coeffs(reinterpret_cast<const typename Ctx::Cx*>(p)));
}

/// ctx.coeffs_to_slots of N coefficients on the host: the N/2 complex slots, as numpy.
template <class Ctx>
auto host_coeffs_to_slots(const Ctx& x, const F64Vector& c) {
  if (c.shape(0) != x.n())
    throw ParameterError("coeffs_to_slots: expected " + std::to_string(x.n()) +
                         " coefficients, got " + std::to_string(c.shape(0)));
  std::vector<double> copy;
  const auto z = x.coeffs_to_slots(aligned(c, copy));
  std::vector<std::complex<double>> out(z.size());
  std::memcpy(out.data(), z.data(), z.size() * sizeof(typename Ctx::Cx));
  return owned(std::move(out));
}

}  // namespace ember::py
