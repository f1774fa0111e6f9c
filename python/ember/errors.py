"""Ember's exceptions: each is an ``ember.Error`` and also the builtin it resembles."""


class Error(Exception):
    """Base of every error Ember raises."""


class ParameterError(Error, ValueError):
    """Insecure or inconsistent parameters, wrong sizes or shapes."""


class MismatchError(Error, ValueError):
    """Operands of different contexts, bases, forms, levels or scales."""


class MissingKeyError(Error, KeyError):
    """An operation needs an evaluation key that was not generated."""


class SerializationError(Error, ValueError):
    """Malformed, truncated or foreign serialized bytes."""


class DecryptionError(Error, ArithmeticError):
    """The ciphertext's noise budget is exhausted: its decryption would be wrong."""


class DeviceError(Error, RuntimeError):
    """A GPU runtime failure, or a device that does not exist in this build."""


class DeviceMemoryError(DeviceError, MemoryError):
    """The GPU ran out of memory."""


class SecurityWarning(UserWarning):
    """Parameters below the security they would need (insecure=True): for tests and experiments,
    never for data that matters."""


class CompileError(Error, ValueError):
    """C outside the compiler's subset (the message names the file, line, column and
    construct)."""
