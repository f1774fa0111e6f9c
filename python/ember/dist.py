"""Several devices: device sets, moves of Ember objects between devices, the throughput
scheduler behind ``ctx.map`` (independent operations spread over a device set, one host thread
per device, evaluation keys replicated once per device), and collectives of RNS polynomials over
a device set (``Communicator``: broadcast, all-gather, reduce-scatter, all-reduce; NCCL between
GPUs when it is compiled in, see ``nccl_available()``)."""

from __future__ import annotations

import copy
import numbers
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from . import _ember
from .errors import ParameterError

__all__ = [
    "Communicator",
    "Split",
    "SplitCiphertext",
    "device_set",
    "map_over_devices",
    "move",
    "nccl_available",
    "partition_rows",
]


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


def scaling_counts(total: int) -> list[int]:
    """The device counts a scaling benchmark measures over `total` devices: the powers of two
    below it and `total` itself (1, 2, 4, 6 for six devices; 1, 2, 4, 8 for eight)."""
    if total < 1:
        raise ParameterError("a scaling benchmark needs at least one device")
    counts, k = [], 1
    while k < total:
        counts.append(k)
        k *= 2
    return counts + [total]


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


# ---------------------------------------------------------------- collectives


def nccl_available() -> bool:
    """Whether this build has NCCL (EMBER_NCCL): a Communicator over GPUs then uses it, else it
    copies peer to peer. The answer is about the build, not about the GPUs present."""
    return bool(_ember.nccl_compiled())


def partition_rows(rows: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` balanced contiguous row ranges ``(begin, end)`` covering ``[0, rows)``; the first
    ``rows % parts`` have one row more. Every part holds a row (``1 <= parts <= rows``)."""
    return [tuple(r) for r in _ember.partition_rows(int(rows), int(parts))]


def _ranges(spec, rows: int, parts: int) -> list[tuple[int, int]]:
    """Row ranges from None (balanced), a list of row counts, or a list of (begin, end) pairs."""
    if spec is None:
        return partition_rows(rows, parts)
    spec = list(spec)
    if spec and all(isinstance(x, numbers.Integral) for x in spec):
        bounds = [0]
        for count in spec:
            bounds.append(bounds[-1] + int(count))
        return list(zip(bounds[:-1], bounds[1:]))
    try:
        return [(int(b), int(e)) for b, e in spec]
    except (TypeError, ValueError):
        raise ParameterError(
            f"row ranges are None, a list of row counts or a list of (begin, end) pairs, got {spec!r}"
        ) from None


class Communicator:
    """Collectives of ``ember.ring.RnsPoly`` over a device set in this process.

    ``devices`` is what ``device_set`` takes ("all", a list of names); rank d is the d-th device.
    Every collective takes one polynomial per rank, rank d's on device d, all of one ring and
    form. A polynomial split by rows ("parts") has part d over rows ``[r_d, r_{d+1})`` of the
    whole basis (limb-major, so each part is a contiguous block of rows). Sums are modulo each
    row's prime. ``exchange``: "auto" (NCCL between GPUs when compiled in, else copies), "nccl" or
    "copy" (copy_between_devices and modular sums on each device: the reference NCCL is tested
    against). CPU devices (cpu:0, cpu:1, ...) always copy.

    With ``sync=False`` a collective returns once queued; it is ordered after and before the
    other work on its polynomials' streams (RnsPoly operations), and ``synchronize()`` waits
    for it. Not
    thread-safe: one collective at a time per Communicator."""

    def __init__(self, devices="all", exchange: str = "auto"):
        self._raw = _ember.Communicator(device_set(devices), exchange)

    @property
    def devices(self) -> list[str]:
        return list(self._raw.devices)

    @property
    def exchange(self) -> str:
        """ "nccl" or "copy": how this communicator moves words."""
        return self._raw.exchange

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return f"Communicator({self.devices}, exchange={self.exchange!r})"

    def broadcast(self, polys: list, root: int = 0, *, sync: bool = True) -> list:
        """Every rank's polynomial becomes root's, in place; returns ``polys``."""
        self._raw.broadcast(list(polys), int(root), sync)
        return polys

    def all_gather(self, parts: list, *, sync: bool = True) -> list:
        """New whole polynomials, one per rank: the parts' rows in rank order."""
        return self._raw.all_gather(list(parts), sync)

    def all_gather_into(self, parts: list, wholes: list, *, sync: bool = True) -> list:
        """all_gather into existing polynomials (basis: the parts' primes in rank order)."""
        self._raw.all_gather_into(list(parts), list(wholes), sync)
        return wholes

    def reduce_scatter(self, wholes: list, ranges=None, *, sync: bool = True) -> list:
        """Part d = rows ``ranges[d]`` of the sum mod q of every rank's polynomial. ``ranges``:
        None (balanced, ``partition_rows``), row counts per rank, or (begin, end) pairs."""
        ranges = _ranges(ranges, wholes[0].limbs if wholes else 0, len(self)) if ranges else []
        return self._raw.reduce_scatter(list(wholes), ranges, sync)

    def reduce_scatter_into(self, wholes: list, parts: list, *, sync: bool = True) -> list:
        """reduce_scatter into existing parts (their limbs give the row ranges)."""
        self._raw.reduce_scatter_into(list(wholes), list(parts), sync)
        return parts

    def all_reduce(self, polys: list, *, sync: bool = True) -> list:
        """Every rank's polynomial becomes the sum mod q of all of them, in place; returns them."""
        self._raw.all_reduce(list(polys), sync)
        return polys

    def scatter_rows(self, whole, ranges=None) -> list:
        """Rows ``ranges[d]`` of one polynomial copied to rank d (balanced when None)."""
        ranges = _ranges(ranges, whole.limbs, len(self))
        if len(ranges) != len(self):
            raise ParameterError(f"{len(ranges)} row ranges for {len(self)} devices")
        return [_ember.take_rows(whole, b, e, d) for (b, e), d in zip(ranges, self.devices)]

    def synchronize(self) -> None:
        """Waits until every collective queued so far is done."""
        self._raw.synchronize()


class SplitCiphertext:
    """A ciphertext whose polynomials are split by rows over the devices of a ``Split``: device
    d holds rows ``rows[d]`` (primes q_b .. q_e-1) of each. Made by ``Split.scatter`` and the
    split operations; ``Split.gather`` makes it whole again."""

    def __init__(self, split: Split, raw, like):
        self._split, self._raw, self._like = split, raw, like

    @property
    def level(self) -> int:
        return self._raw.level

    @property
    def scale(self) -> float:
        return self._raw.scale

    @property
    def rows(self) -> list[tuple[int, int]]:
        return list(self._raw.rows)

    @property
    def devices(self) -> list[str]:
        return self._split.devices

    def __repr__(self) -> str:
        return f"SplitCiphertext(level={self.level}, rows={self.rows}, devices={self.devices})"


class Split:
    """One multiplication or rotation spread over several devices (HE-Booster's single-operation
    split): every polynomial's Q rows are divided among the devices, each device computes its
    rows of the key switch (and the special primes P itself), and one all-gather of the input's
    coefficients is the only exchange. Results are word for word those of one device.

    ``ctx``: a CKKS or BGV context (BFV rotations work, its product is not split) whose
    evaluation keys are set; they are copied to each device once. ``devices``: as ``device_set``
    takes them ("all", ["cuda:0", "cuda:1"], ["cpu:0", "cpu:1"]). A level must have at least one
    row per device. Not thread-safe: one operation at a time per Split.

    >>> sp = ctx.split(devices=["cuda:0", "cuda:1"])
    >>> z = sp.gather(sp.multiply(sp.scatter(x), sp.scatter(y)))   # == relinearized x * y
    """

    def __init__(self, ctx, devices="all", exchange: str = "auto"):
        self._ctx = ctx
        self._devices = device_set(devices)
        self._raw = _ember.SplitEvaluator(ctx._raw, self._devices, exchange)

    @property
    def devices(self) -> list[str]:
        return list(self._devices)

    @property
    def exchange(self) -> str:
        """ "nccl" or "copy": how the all-gather moves words."""
        return self._raw.exchange

    def __repr__(self) -> str:
        return f"Split({self.devices}, exchange={self.exchange!r})"

    def _keys_on_devices(self):
        ek = self._ctx._keys()
        return [ek.to(d) for d in self._devices]

    def scatter(self, ct) -> SplitCiphertext:
        """``ct`` (a ciphertext of this context, on any device) split over the devices."""
        raw = ct._raw if ct.form == "eval" else ct._ctx._raw.to_form(ct._raw, "eval")
        return SplitCiphertext(self, self._raw.split(raw), ct)

    def gather(self, sct: SplitCiphertext, device: str | None = None):
        """The whole ciphertext on ``device`` (this context's by default), eval form."""
        self._check(sct)
        ctx = self._ctx._context_on(device) if device else self._ctx
        out = copy.copy(sct._like)
        out._ctx, out._raw = ctx, self._raw.gather(sct._raw, ctx.device)
        return out

    def _check(self, sct) -> None:
        if not isinstance(sct, SplitCiphertext) or sct._split is not self:
            raise ParameterError(
                "this split ciphertext was not made by this Split: scatter it here"
            )

    def multiply(self, a: SplitCiphertext, b: SplitCiphertext) -> SplitCiphertext:
        """a * b relinearized, not rescaled (CKKS: scale a.scale * b.scale; rescale the gathered
        result with ctx.rescale). BGV's factor is the product of the operands'."""
        self._check(a)
        self._check(b)
        relin = [k.relin for k in self._keys_on_devices()]
        return SplitCiphertext(self, self._raw.multiply(a._raw, b._raw, relin), a._like)

    def rotate(self, a: SplitCiphertext, steps: int) -> SplitCiphertext:
        """The slots rotated by ``steps`` with that step's own Galois key (MissingKeyError when the
        evaluation keys lack it: split rotations take no decomposition into other steps)."""
        from .rlwe import galois_element

        self._check(a)
        g = galois_element(int(steps), self._ctx.params.n)
        self._ctx._galois_key(g)  # MissingKeyError when absent
        keys = [k.galois[g] for k in self._keys_on_devices()]
        return SplitCiphertext(self, self._raw.apply_galois(a._raw, keys), a._like)

    def synchronize(self, sct: SplitCiphertext) -> None:
        """Waits until the work queued for ``sct`` on every device is done."""
        self._raw.synchronize(sct._raw)
