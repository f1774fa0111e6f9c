// Python bindings of the BFV/BGV device plaintexts: IntegerEncoder and PlainCoeffs (integer values
// of any DLPack producer on the host or the encoder's GPU in, DLPack device memory out).
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bind_rlwe.h"
#include "convert.h"
#include "ember/core/errors.h"
#include "ember/rlwe/integer_encoder.h"

namespace nb = nanobind;
using namespace ember;
using ember::rlwe::IntegerEncoder;
using ember::rlwe::IntType;
using ember::rlwe::PlainCoeffs;

namespace {
/// Integer values of any width on any device (DLPack), flat and contiguous.
using AnyValues = nb::ndarray<nb::ndim<1>, nb::c_contig>;
using Memory = IntegerEncoder::Memory;
using U64Vector = nb::ndarray<const u64, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

IntType int_type_of(const AnyValues& a) {
  const auto d = a.dtype();
  const bool is_int = d.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int);
  const bool is_uint = d.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt);
  if (d.lanes == 1 && (is_int || is_uint)) {
    switch (d.bits) {
      case 8:
        return is_int ? IntType::i8 : IntType::u8;
      case 16:
        return is_int ? IntType::i16 : IntType::u16;
      case 32:
        return is_int ? IntType::i32 : IntType::u32;
      case 64:
        return is_int ? IntType::i64 : IntType::u64;
      default:
        break;
    }
  }
  throw ParameterError(
      "encode: values in device memory must be of an integer dtype (int8..int64, uint8..uint64); "
      "convert them first");
}

/// Where the encoder reads `a`: host memory, or its own GPU's memory. Throws ParameterError for
/// memory of another device.
Memory memory_of(const IntegerEncoder& e, const AnyValues& a) {
  if (a.device_type() == nb::device::cpu::value) return Memory::host;
  const backend::Device d = e.device();
  if (a.device_type() == nb::device::cuda::value && d.kind == backend::DeviceKind::cuda &&
      a.device_id() == d.index)
    return Memory::device;
  throw ParameterError("encode: the values are on device type " + std::to_string(a.device_type()) +
                       ":" + std::to_string(a.device_id()) + " but the context is on " + d.str() +
                       ": move them there first (tensor.to(...)) or use ctx.to(...)");
}
}  // namespace

void bind_integer_encoder(nb::module_& m) {
  nb::class_<PlainCoeffs>(m, "PlainCoeffs")
      .def_prop_ro("n", &PlainCoeffs::n)
      .def_prop_ro("device", [](const PlainCoeffs& p) { return p.device().str(); })
      .def("to_numpy", [](const PlainCoeffs& p) {
        std::vector<u64> v;
        {
          nb::gil_scoped_release unlocked;
          v = p.to_host();
        }
        return bind::to_numpy(std::move(v));
      });

  nb::class_<IntegerEncoder>(m, "IntegerEncoder")
      .def(
          "__init__",
          [](IntegerEncoder* e, std::size_t n, u64 t, const std::vector<u32>& slot_index,
             const std::string& device) {
            new (e) IntegerEncoder(n, t, slot_index, backend::parse_device(device));
          },
          nb::arg("n"), nb::arg("t"), nb::arg("slot_index"), nb::arg("device"))
      .def_prop_ro("batching", &IntegerEncoder::batching)
      .def(
          "encode",
          // values: integers on the host or this encoder's GPU, count <= N.
          [](const IntegerEncoder& e, AnyValues v, bool batched) {
            const IntType type = int_type_of(v);
            const Memory where = memory_of(e, v);
            const void* data = v.data();
            const std::size_t count = v.shape(0);
            nb::gil_scoped_release unlocked;
            return e.encode(data, type, count, where, batched);
          },
          nb::arg("values"), nb::arg("batched"))
      .def("from_numpy",
           [](const IntegerEncoder& e, U64Vector v) {
             if (v.shape(0) != e.n())
               throw ParameterError("expected " + std::to_string(e.n()) +
                                    " plaintext coefficients, got " + std::to_string(v.shape(0)));
             std::vector<u64> copy;
             return e.from_host(py::aligned(v, copy));
           })
      .def("multiply", &IntegerEncoder::multiply, nb::call_guard<nb::gil_scoped_release>())
      .def(
          "lift",
          [](const IntegerEncoder& e, const PlainCoeffs& m, const ring::RnsBasis& q,
             const std::string& form) { return e.lift(m, q, ring::form_from_name(form)); },
          nb::call_guard<nb::gil_scoped_release>())
      .def(
          "decode",
          // The first `count` values: a numpy int64 array, or (on_device) an int64 array of
          // `shape` (default: 1-D) in this GPU's memory that DLPack consumers take without a copy.
          [](const IntegerEncoder& e, const PlainCoeffs& m, bool batched, std::size_t count,
             bool on_device, std::vector<std::size_t> shape) -> nb::object {
            if (on_device) {
              shape = py::device_output_shape(e.device(), std::move(shape), count);
              auto buffer = std::make_unique<backend::Buffer>(
                  backend::backend_for(e.device()),
                  std::max<std::size_t>(count, 1) * sizeof(std::int64_t), m.stream());
              {
                nb::gil_scoped_release unlocked;
                e.decode(m, batched, buffer->as<std::int64_t>(), count, Memory::device);
              }
              const int index = e.device().index;
              void* data = buffer->as<void>();
              nb::capsule owner(buffer.release(),
                                [](void* p) noexcept { delete static_cast<backend::Buffer*>(p); });
              return nb::cast(nb::ndarray<>(data, shape.size(), shape.data(), owner, nullptr,
                                            nb::dtype<std::int64_t>(), nb::device::cuda::value,
                                            index));
            }
            std::vector<std::int64_t> out(count);
            {
              nb::gil_scoped_release unlocked;
              e.decode(m, batched, out.data(), count, Memory::host);
            }
            return nb::cast(bind::to_numpy(std::move(out)));
          },
          nb::arg("m"), nb::arg("batched"), nb::arg("count"), nb::arg("on_device") = false,
          nb::arg("shape") = std::vector<std::size_t>{});
}
