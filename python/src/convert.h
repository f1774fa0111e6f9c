// Helpers shared by the binding files: numpy array <-> host vectors, device names.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "ember/backend/runtime.h"
#include "ember/core/errors.h"

namespace ember::py {

namespace nb = nanobind;

using U64Matrix = nb::ndarray<const std::uint64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using I64Vector = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using F64Vector = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using C128Vector =
    nb::ndarray<const std::complex<double>, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

/// The array's elements at an address aligned for T: `a.data()`, or a copy in `copy` when the array
/// is misaligned. numpy views of bytes (np.frombuffer at an odd offset, as the deserializer makes
/// them) are C-contiguous yet misaligned, and reading a u64 through a misaligned pointer is
/// undefined behaviour (UBSan: "load of misaligned address"); nanobind does not check alignment.
template <class T, class Array>
const T* aligned(const Array& a, std::vector<T>& copy) {
  const T* p = a.data();
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0) return p;
  copy.resize(a.size());
  std::memcpy(copy.data(), p, a.size() * sizeof(T));
  return copy.data();
}

/// The array's elements as a vector (aligned reads, see `aligned`).
template <class T, class Array>
std::vector<T> to_vector(const Array& a) {
  std::vector<T> copy;
  const T* p = aligned(a, copy);
  return std::vector<T>(p, p + a.size());
}

/// A new numpy array (1-D) that owns `data`.
template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> owned(std::vector<T>&& data) {
  auto* v = new std::vector<T>(std::move(data));
  nb::capsule owner(v, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  std::size_t shape[1] = {v->size()};
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(v->data(), 1, shape, owner);
}

/// The shape of a decoder's output of `count` values in `device`'s memory (`shape`, or 1-D when
/// empty). Throws ParameterError unless the device is a GPU and the shape holds `count` values.
inline std::vector<std::size_t> device_output_shape(const backend::Device& device,
                                                    std::vector<std::size_t> shape,
                                                    std::size_t count) {
  if (device.kind != backend::DeviceKind::cuda)
    throw ParameterError("decode: device output needs a CUDA context");
  if (shape.empty()) shape = {count};
  std::size_t total = 1;
  for (std::size_t d : shape) total *= d;
  if (total != count) throw ParameterError("decode: the shape does not hold count values");
  return shape;
}

/// A new numpy array (rows x cols, uint64) that owns `data`.
inline nb::ndarray<nb::numpy, std::uint64_t, nb::ndim<2>> to_numpy(
    std::vector<std::uint64_t>&& data, std::size_t rows, std::size_t cols) {
  auto* owned = new std::vector<std::uint64_t>(std::move(data));
  nb::capsule owner(owned,
                    [](void* p) noexcept { delete static_cast<std::vector<std::uint64_t>*>(p); });
  std::size_t shape[2] = {rows, cols};
  return nb::ndarray<nb::numpy, std::uint64_t, nb::ndim<2>>(owned->data(), 2, shape, owner);
}

}  // namespace ember::py
