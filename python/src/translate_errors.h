// The translation of Ember's C++ exceptions into ember.errors' Python classes, for each module.
#pragma once

#include <nanobind/nanobind.h>

#include <exception>

#include "ember/core/errors.h"

namespace ember::bind {

inline void raise_as(const char* name, const char* what) {
  nanobind::object cls = nanobind::module_::import_("ember.errors").attr(name);
  PyErr_SetString(cls.ptr(), what);
}

inline void register_error_translator() {
  nanobind::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ember::ParameterError& e) {
      raise_as("ParameterError", e.what());
    } catch (const ember::MismatchError& e) {
      raise_as("MismatchError", e.what());
    } catch (const ember::MissingKeyError& e) {
      raise_as("MissingKeyError", e.what());
    } catch (const ember::SerializationError& e) {
      raise_as("SerializationError", e.what());
    } catch (const ember::DecryptionError& e) {
      raise_as("DecryptionError", e.what());
    } catch (const ember::DeviceMemoryError& e) {
      raise_as("DeviceMemoryError", e.what());
    } catch (const ember::DeviceError& e) {
      raise_as("DeviceError", e.what());
    } catch (const ember::Error& e) {
      raise_as("Error", e.what());
    }
  });
}

}  // namespace ember::bind
