"""The mixin that makes Ember objects picklable and deep-copyable through ember.persist's bytes."""

from __future__ import annotations


class Persistent:
    """pickle and copy.deepcopy go through ember.persist (the objects' versioned bytes, with
    their context pickled as parameters + device); copy.copy stays a shallow copy (ct.to and
    on_stream rely on it)."""

    __slots__ = ()

    def __reduce__(self):
        from .persist import reduce_object

        return reduce_object(self)

    def __deepcopy__(self, memo):
        from .persist import deep_copy

        return deep_copy(self)

    def __copy__(self):
        cls = type(self)
        out = cls.__new__(cls)
        out.__dict__.update(self.__dict__)
        return out
