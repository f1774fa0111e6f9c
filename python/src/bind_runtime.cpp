// Python bindings of the runtime: streams the caller owns.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "ember/backend/backend.h"

namespace nb = nanobind;
using ember::backend::Backend;
using ember::backend::Device;
using ember::backend::Stream;

namespace {

/// A stream of one device, given back to the device when the object goes.
class OwnedStream {
 public:
  explicit OwnedStream(const std::string& device)
      : device_(ember::backend::parse_device(device)),
        be_(&ember::backend::backend_for(device_)),
        stream_(be_->create_stream()) {}
  ~OwnedStream() { be_->destroy_stream(stream_); }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  Stream get() const { return stream_; }
  std::string device() const { return device_.str(); }
  void synchronize() const { be_->synchronize(stream_); }

 private:
  Device device_;
  Backend* be_;
  Stream stream_;
};

}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<Stream>(m, "StreamHandle").def_prop_ro("is_default", [](const Stream& s) {
    return s.handle == nullptr;
  });
  nb::class_<OwnedStream>(m, "Stream")
      .def(nb::init<const std::string&>(), nb::arg("device"))
      .def_prop_ro("device", &OwnedStream::device)
      .def_prop_ro("handle", &OwnedStream::get)
      .def("synchronize", &OwnedStream::synchronize, nb::call_guard<nb::gil_scoped_release>());
}
