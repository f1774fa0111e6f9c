// Typed exceptions of Ember: every public function throws one of these, never aborts.
#pragma once

#include <stdexcept>
#include <string>

namespace ember {

/// Base of every error Ember throws. Python maps each subclass to ember.<Name>.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Insecure or inconsistent parameters, wrong sizes or shapes.
class ParameterError : public Error {
 public:
  using Error::Error;
};

/// Operands that do not belong together (other basis, form, context, level or scale).
class MismatchError : public Error {
 public:
  using Error::Error;
};

/// An operation needs an evaluation key that was not generated.
class MissingKeyError : public Error {
 public:
  using Error::Error;
};

/// Malformed, truncated or foreign serialized bytes.
class SerializationError : public Error {
 public:
  using Error::Error;
};

/// A decryption whose result would be wrong (noise budget exhausted, values past the modulus).
class DecryptionError : public Error {
 public:
  using Error::Error;
};

/// A GPU runtime failure (launch error, no device, driver problem).
class DeviceError : public Error {
 public:
  using Error::Error;
};

/// The GPU ran out of memory; the message says how much was asked for.
class DeviceMemoryError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

}  // namespace ember
