"""Several devices: device sets, moves of Ember objects between devices, and the throughput
scheduler behind ``ctx.map`` (independent operations spread over a device set, one host thread
per device, evaluation keys replicated once per device)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from . import _ember
from .errors import ParameterError

__all__ = ["device_set", "map_over_devices", "move"]


def device_set(devices) -> list[str]:
    """The canonical names of a device set: "all" (every visible GPU, else the CPU), one device
    name, or a list of names ("cuda:0", "cpu:1", ...). Refuses an empty set and repeats."""
    from . import resolve_device

    if devices is None or (isinstance(devices, str) and devices == "all"):
        gpus = [f"cuda:{g.index}" for g in _ember.cuda_devices()]
        return gpus or ["cpu"]
    if isinstance(devices, str):
        return [resolve_device(devices)]
    if not isinstance(devices, Iterable):
        raise ParameterError(
            f"devices must be 'all', a device name or a list of names, got {devices!r}"
        )
    names = []
    for d in devices:
        if not isinstance(d, str):
            d = str(d)  # an ember.Device
        names.append(resolve_device(d))
    if not names:
        raise ParameterError("the device set is empty: name at least one device")
    if len(set(names)) != len(names):
        raise ParameterError(f"the device set names a device twice: {names}")
    return names


def move(obj, device: str):
    """`obj` on `device`: Ember objects (ciphertexts, plaintexts, keys) through their to(),
    lists and tuples item by item, anything else as it is."""
    if isinstance(obj, (list, tuple)):
        return type(obj)(move(x, device) for x in obj)
    if hasattr(obj, "_ctx") and hasattr(obj, "to"):
        return obj.to(device)
    return obj


def map_over_devices(
    ctx, fn: Callable, iterables: tuple, devices, pass_context: bool, gather: bool
) -> list:
    """ctx.map's work: item i of the zipped iterables goes to device floor(i k / n) of the k
    devices (contiguous runs, so each device's work is one sequence), its Ember arguments
    moved there; one thread per device runs fn on its run. Results in input order, moved back
    to ctx's device when `gather`."""
    if not callable(fn):
        raise ParameterError(f"map needs a function, got {fn!r}")
    if not iterables:
        raise ParameterError("map needs at least one sequence of arguments")
    columns = [list(it) for it in iterables]
    if len({len(c) for c in columns}) != 1:
        raise ParameterError(
            f"map's sequences have different lengths ({', '.join(str(len(c)) for c in columns)})"
        )
    items = list(zip(*columns))
    if not items:
        return []
    names = device_set(devices)
    k = min(len(names), len(items))
    # Contexts on every device first (keys copied once, here on the calling thread).
    contexts = [ctx.to(d) for d in names[:k]]
    n = len(items)
    bounds = [i * n // k for i in range(k + 1)]
    # Every argument moved before any work is queued: a copy waits for the work queued on its
    # source's stream, so moving after the first device's products were queued would hold the
    # other devices back until those products are done.
    placed = [
        [[move(a, contexts[j].device) for a in args] for args in items[bounds[j] : bounds[j + 1]]]
        for j in range(k)
    ]

    def run(j: int) -> list:
        local = contexts[j]
        return [fn(local, *args) if pass_context else fn(*args) for args in placed[j]]

    if k == 1:
        runs = [run(0)]
    else:
        # One long-lived thread per device (ctx.to's replicas share them): a GPU's runtime
        # state is set up once per thread, not at every call.
        # The calling thread takes the first device's run itself (no hand-off before it).
        workers = ctx._replicas.workers
        futures = [workers(contexts[j].device).submit(run, j) for j in range(1, k)]
        first = run(0)
        runs = [first] + [f.result() for f in futures]
    results = [r for chunk in runs for r in chunk]
    return [move(r, ctx.device) for r in results] if gather else results


class ReplicaSet:
    """The contexts of one set of parameters on several devices (ctx.to), shared by all of them:
    each device's context is made once, and a context's evaluation keys are copied to a
    device once (EvalKeys.to caches its copies)."""

    def __init__(self, ctx):
        self.lock = threading.Lock()
        self.contexts = {ctx.device: ctx}
        self._workers: dict[str, ThreadPoolExecutor] = {}

    def workers(self, device: str) -> ThreadPoolExecutor:
        """The one thread that runs ctx.map's work on `device` (made on first use)."""
        with self.lock:
            pool = self._workers.get(device)
            if pool is None:
                pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"ember-{device}")
                self._workers[device] = pool
            return pool
