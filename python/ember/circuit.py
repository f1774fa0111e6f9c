"""Boolean circuits of CGGI gates: the compiler's output, its file format, and the Python face
of the C++ circuit layer (levels, statistics, the bit-sliced plaintext evaluator and the
encrypted scheduler over one or several devices; docs/circuits.md).

A circuit is a list of gates over *literals*, AIGER style: node 0 is the constant false, nodes
1..I are the input bits (each input's bits LSB first, inputs in declaration order), node I+1+g is
gate g's output; literal 2 node + neg names a node or its negation. NOT is therefore free (a
flipped literal), and constants are the literals 0 (false) and 1 (true). Two-input gates carry
their truth table (bit a + 2 b of the code is the output for inputs a, b: AND = 8, XOR = 6, ...);
the ten tables that depend on both inputs are exactly the CGGI gate set (and, nand, or, nor,
xor, xnor, andny, andyn, orny, oryn), so gates are stored with positive inputs and the negations
folded into the table. MUX (code 16) is s ? a : b and costs two bootstraps. The three-input
gates MAJ (17, the majority: a full adder's carry) and XOR3 (18, a ^ b ^ c: its sum) cost one
bootstrap each (one programmable bootstrap of a + b + c, docs/circuits.md) and read their three
literals as stored, negations included.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass, field, replace

import numpy as np

from .errors import ParameterError, SerializationError

MUX = 16
MAJ = 17
XOR3 = 18
THREE_INPUT = (MUX, MAJ, XOR3)
# Truth tables (out = (code >> (a + 2 b)) & 1) of the CGGI two-input gates.
GATE_CODES = {
    "and": 8,
    "nand": 7,
    "or": 14,
    "nor": 1,
    "xor": 6,
    "xnor": 9,
    "andny": 4,  # (not a) and b
    "andyn": 2,  # a and (not b)
    "orny": 13,  # (not a) or b
    "oryn": 11,  # a or (not b)
}
GATE_NAMES = {v: k for k, v in GATE_CODES.items()}
GATE_NAMES.update({MUX: "mux", MAJ: "maj", XOR3: "xor3"})
BOOTSTRAPS = {code: (2 if code == MUX else 1) for code in GATE_NAMES}

_MAGIC = b"EMBERCIR"
_VERSION = 1
_MASK64 = (1 << 64) - 1


def _swap_table(code: int, neg_a: bool, neg_b: bool) -> int:
    """The table of the same gate with its inputs negated as given."""
    out = 0
    for a in (0, 1):
        for b in (0, 1):
            if (code >> ((a ^ neg_a) + 2 * (b ^ neg_b))) & 1:
                out |= 1 << (a + 2 * b)
    return out


@dataclass(frozen=True)
class Port:
    """A named input or output: `shape` elements (() for a scalar) of `width` bits each."""

    name: str
    width: int
    signed: bool
    shape: tuple = ()

    @property
    def count(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def nbits(self) -> int:
        return self.count * self.width

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "width": self.width,
            "signed": self.signed,
            "shape": list(self.shape),
        }

    @classmethod
    def from_json(cls, d) -> Port:
        try:
            p = cls(
                str(d["name"]),
                int(d["width"]),
                bool(d["signed"]),
                tuple(int(s) for s in d["shape"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise SerializationError(f"malformed circuit port {d!r}") from e
        if not 1 <= p.width <= 64 or any(s < 1 for s in p.shape) or len(p.shape) > 4:
            raise SerializationError(f"circuit port {p.name!r} has an invalid width or shape")
        return p


@dataclass(frozen=True)
class RunOptions:
    """The encrypted scheduler's choices (Circuit.run; docs/circuits.md):

    - ``mode``: "wave" (every step waits for the previous one on the devices) or "dataflow"
      (each group waits only for the work that wrote its operands; gates with slack are held
      back into wider groups while fewer than ``dataflow_min_batch`` per device are ready).
      Dataflow is the default: it measured faster on H100s (docs/circuits.md).
    - ``fuse``: at most three bootstrap batches per step and device (AND-type, XOR-type, MUX;
      with MAJ / XOR3 in the circuit, the AND- / XOR-type gates join them with a false input);
      False: one per gate type.
    - ``max_live_ciphertexts``: ciphertexts a device's pool holds at once (None: from its free
      memory); past it the coldest are spilled to page-locked host memory and brought back.
    - ``streams_per_device``: streams a device's groups are spread over (12: on 4 GPUs
      the length-500 dot product took 3.9 s with 6 or 12, 5.2 s with 3).
    - ``locality``: the even split (in gate order) is refined by swapping gates toward the
      devices holding their operands (fewer cross-device copies).
    - ``min_gates_per_device``: a kind's gates of a step go to no more devices than give each
      this many (those holding most operands): small steps split over GPUs wait for copies and
      gain nothing. None: 32 on GPUs, 1 on CPU devices.
    - ``skip_bootstrap``: benchmarks only: every bootstrap replaced by a copy (meaningless
      outputs) to time everything else the scheduler does.
    """

    mode: str = "dataflow"
    fuse: bool = True
    max_live_ciphertexts: int | None = None
    streams_per_device: int = 12
    locality: bool = True
    dataflow_min_batch: int | None = None
    min_gates_per_device: int | None = None
    skip_bootstrap: bool = False


def _run_devices(ctx, devices) -> list:
    """The device names of a run: ctx's device for None; every GPU (else ctx's device) for
    "all"; else dist.device_set's reading of a name or a list of names."""
    from . import _ember
    from .dist import device_set

    if devices is None:
        return [ctx.device]
    if isinstance(devices, str) and devices == "all":
        return [f"cuda:{g.index}" for g in _ember.cuda_devices()] or [ctx.device]
    return device_set(devices)


@dataclass
class Circuit:
    """A levelized netlist of CGGI gates with named integer inputs and outputs."""

    inputs: list  # [Port]
    outputs: list  # [Port]
    ops: np.ndarray  # uint8 [G]: truth table (0..15), MUX, MAJ or XOR3
    args: np.ndarray  # int64 [G, 3]: literals (a, b, c); c only for the three-input codes
    # (MUX: c is the select, a and b its data)
    out_lits: np.ndarray  # int64 [sum of output bits]
    name: str = "circuit"
    _levels: np.ndarray | None = field(default=None, repr=False, compare=False)
    _ir_cache: object = field(default=None, repr=False, compare=False)

    # ---- structure -------------------------------------------------------------------------
    @property
    def num_inputs_bits(self) -> int:
        return sum(p.nbits for p in self.inputs)

    @property
    def num_nodes(self) -> int:
        return 1 + self.num_inputs_bits + len(self.ops)

    def _check(self) -> None:
        g = len(self.ops)
        if self.args.shape != (g, 3) or self.out_lits.ndim != 1:
            raise SerializationError("circuit arrays have inconsistent sizes")
        if len(self.out_lits) != sum(p.nbits for p in self.outputs):
            raise SerializationError("circuit outputs do not match their ports")
        if not np.all(np.isin(self.ops, list(GATE_NAMES))):
            raise SerializationError("circuit has an unknown gate code")
        base = 1 + self.num_inputs_bits
        own = 2 * (base + np.arange(g, dtype=np.int64))
        used = self.args.copy()
        used[~np.isin(self.ops, THREE_INPUT), 2] = 0
        if np.any(used < 0) or np.any(used >= own[:, None]):
            raise SerializationError("circuit gates are not in topological order")
        if np.any(self.out_lits < 0) or np.any(self.out_lits >= 2 * self.num_nodes):
            raise SerializationError("circuit output literal out of range")

    def _ir(self):
        """The C++ circuit (ember::circuit::Circuit) of these arrays, made once."""
        if self._ir_cache is None:
            from . import _ember

            self._ir_cache = _ember.CircuitIR(
                [(p.name, p.width, p.signed, p.count) for p in self.inputs],
                [(p.name, p.width, p.signed, p.count) for p in self.outputs],
                np.ascontiguousarray(self.ops, dtype=np.uint8),
                np.ascontiguousarray(self.args, dtype=np.int64).reshape(-1, 3),
                np.ascontiguousarray(self.out_lits, dtype=np.int64),
            )
        return self._ir_cache

    def levels(self) -> np.ndarray:
        """Level of every gate (ARCTYREX Algorithm 1): 1 + the largest level of its inputs, with
        inputs, constants and NOTs (flipped literals) at the level of what they read."""
        if self._levels is None:
            self._levels = np.asarray(self._ir().levels(), dtype=np.int64)
        return self._levels

    def waves(self) -> list:
        """Gate indices grouped by level: each wave depends only on earlier ones."""
        lv = self.levels()
        if len(lv) == 0:
            return []
        order = np.argsort(lv, kind="stable")
        bounds = np.searchsorted(lv[order], np.arange(1, lv.max() + 2))
        return [order[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)]

    def stats(self) -> dict:
        """Gates by type, bootstraps (MUX = 2, any other gate 1), depth (waves) and the widest
        wave."""
        st = dict(self._ir().stats())
        st["gates_by_type"] = dict(sorted(st["gates_by_type"].items()))
        return st

    def used_inputs(self) -> set:
        """Names of inputs whose bits the outputs depend on (the others may be left out)."""
        lits = np.concatenate(
            [
                self.args[~np.isin(self.ops, THREE_INPUT), :2].ravel(),
                self.args[np.isin(self.ops, THREE_INPUT)].ravel(),
                self.out_lits,
            ]
        )
        read = np.zeros(self.num_nodes, dtype=bool)
        read[lits >> 1] = True
        used, start = set(), 1
        for p in self.inputs:
            if read[start : start + p.nbits].any():
                used.add(p.name)
            start += p.nbits
        return used

    def replicate(self, copies: int, shared=()) -> Circuit:
        """`copies` independent instances of this circuit as one circuit, to run many input sets
        in one encrypted run: every wave is `copies` times wider (a GPU's throughput needs
        thousands of gates a step) and the depth stays. Each input and output gains a leading
        dimension of `copies` (element i is instance i), except the inputs named in `shared`,
        which every instance reads (a key, say): they keep their shape and are encrypted once."""
        copies = int(copies)
        if copies < 1:
            raise ParameterError(f"copies must be at least 1, got {copies}")
        names = {p.name for p in self.inputs}
        unknown = set(shared) - names
        if unknown:
            raise ParameterError(f"shared inputs {sorted(unknown)} are not inputs of this circuit")
        g, total_in = len(self.ops), self.num_inputs_bits
        new_inputs, new_base, start = [], [], 0
        for p in self.inputs:
            keep = p.name in shared
            new_inputs.append(p if keep else Port(p.name, p.width, p.signed, (copies,) + p.shape))
            new_base.append(start)
            start += p.nbits if keep else copies * p.nbits
        new_in_bits = start
        gate0 = 1 + new_in_bits
        maps = []
        for j in range(copies):
            node = np.empty(self.num_nodes, dtype=np.int64)
            node[0] = 0
            old = 1
            for p, base in zip(self.inputs, new_base):
                off = 0 if p.name in shared else j * p.nbits
                node[old : old + p.nbits] = 1 + base + off + np.arange(p.nbits)
                old += p.nbits
            node[1 + total_in :] = gate0 + j * g + np.arange(g)
            maps.append(node)

        def relabel(lits, node):
            return 2 * node[lits >> 1] + (lits & 1)

        args = np.concatenate([relabel(self.args, m) for m in maps]) if g else self.args.copy()
        ops = np.tile(self.ops, copies)
        outs, at = [], 0
        for q in self.outputs:
            lits = self.out_lits[at : at + q.nbits]
            outs += [relabel(lits, m) for m in maps]
            at += q.nbits
        out_ports = [Port(q.name, q.width, q.signed, (copies,) + q.shape) for q in self.outputs]
        out_lits = np.concatenate(outs) if outs else self.out_lits.copy()
        circ = Circuit(new_inputs, out_ports, ops, args, out_lits, f"{self.name}x{copies}")
        circ._check()
        return circ

    # ---- inputs and outputs ----------------------------------------------------------------
    def _input_words(self, inputs: dict, batched: bool):
        """Each input as uint64 words [N, count] (two's complement, range-checked), N sets."""
        known = {p.name for p in self.inputs}
        unknown = set(inputs) - known
        if unknown:
            raise ParameterError(
                f"unknown circuit inputs {sorted(unknown)}; inputs are "
                f"{[p.name for p in self.inputs]}"
            )
        used = self.used_inputs()
        vals, n = {}, None
        for p in self.inputs:
            if p.name not in inputs:
                if p.name in used:
                    raise ParameterError(f"circuit input {p.name!r} is missing")
                vals[p.name] = None
                continue
            arr = np.asarray(inputs[p.name])
            if arr.dtype == bool:
                arr = arr.astype(np.int64)
            if arr.dtype.kind not in "iu" and not (arr.dtype == object):
                raise ParameterError(f"input {p.name!r} must be integers, got {arr.dtype}")
            extra = arr.ndim - len(p.shape)
            if arr.shape[max(extra, 0) :] != p.shape or extra not in (0, 1):
                raise ParameterError(
                    f"input {p.name!r} has shape {arr.shape}, expected "
                    f"{p.shape}" + (" (or N sets of it)" if batched else "")
                )
            if extra == 1 and not batched:
                raise ParameterError(f"input {p.name!r}: one set of inputs expected")
            lo, hi = (
                (-(1 << (p.width - 1)), (1 << (p.width - 1)) - 1)
                if p.signed
                else (0, (1 << p.width) - 1)
            )
            if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
                raise ParameterError(
                    f"input {p.name!r} out of range for a "
                    f"{'signed' if p.signed else 'unsigned'} {p.width}-bit "
                    f"integer [{lo}, {hi}]"
                )
            if arr.dtype == object:
                w = np.array([int(x) & _MASK64 for x in arr.ravel()], dtype=np.uint64)
            else:
                w = (
                    arr.astype(np.int64).view(np.uint64)
                    if arr.dtype.kind == "i"
                    else (arr.astype(np.uint64))
                )
            w = w.reshape(arr.shape[:extra] + (p.count,))
            if extra == 1:
                if n not in (None, w.shape[0]):
                    raise ParameterError("batched inputs have different numbers of sets")
                n = w.shape[0]
            vals[p.name] = w
        n = 1 if n is None else n
        out = {}
        for p in self.inputs:
            w = vals[p.name]
            if w is None:
                w = np.zeros((n, p.count), dtype=np.uint64)
            elif w.ndim == 1:
                w = np.broadcast_to(w, (n, p.count))
            out[p.name] = w
        return out, n

    def _input_bits(self, inputs: dict, batched: bool):
        """Input bits as a bool array [input bits, N] in node order, and N."""
        words, n = self._input_words(inputs, batched)
        rows = []
        for p in self.inputs:
            w = words[p.name]  # [N, count]
            shifts = np.arange(p.width, dtype=np.uint64)
            bits = (w[:, :, None] >> shifts) & np.uint64(1)  # [N, count, width]
            rows.append(bits.reshape(n, p.nbits).T.astype(bool))
        if not rows:
            return np.zeros((0, n), dtype=bool), n
        return np.concatenate(rows, axis=0), n

    def _input_planes(self, inputs: dict, batched: bool):
        """Input bits bit-sliced: uint64 [input bits, ceil(N / 64)] in node order (bit i of word
        w: set 64 w + i), and N. Built one bit position of a port at a time, never as one bool
        per bit and set."""
        words, n = self._input_words(inputs, batched)
        nbytes = (n + 63) // 64 * 8
        planes = np.zeros((self.num_inputs_bits, nbytes), dtype=np.uint8)
        ones = np.packbits(np.ones(n, dtype=bool), bitorder="little")
        row = 0
        for p in self.inputs:
            w = words[p.name]  # [N, count], a broadcast view when one set serves all
            shared = w.strides[0] == 0
            for j in range(p.width):
                bits = ((w[:1] if shared else w) >> np.uint64(j)) & np.uint64(1)
                rows = slice(row + j, row + p.nbits, p.width)  # bit j of every element
                if shared:
                    planes[rows, : len(ones)] = np.where(bits[0, :, None] != 0, ones, 0)
                else:
                    packed = np.packbits(bits.astype(bool), axis=0, bitorder="little")
                    planes[rows, : packed.shape[0]] = packed.T
            row += p.nbits
        return planes.view("<u8"), n

    def _pack_outputs(self, bits: np.ndarray, batched: bool) -> dict:
        """Output bits [output bits, N] -> {name: ints}, with each port's signedness."""
        n = bits.shape[1]
        res, start = {}, 0
        for p in self.outputs:
            b = bits[start : start + p.nbits].T.reshape(n, p.count, p.width)
            start += p.nbits
            w = (b.astype(np.uint64) << np.arange(p.width, dtype=np.uint64)).sum(
                axis=2, dtype=np.uint64
            )
            if p.signed:
                if p.width < 64:
                    sign = np.uint64(1) << np.uint64(p.width - 1)
                    w = (w ^ sign) - sign
                v = w.view(np.int64)
            else:
                v = w if p.width == 64 else w.astype(np.int64)
            v = v.reshape((n,) + p.shape)
            if batched:
                res[p.name] = v
            else:
                res[p.name] = int(v[0]) if p.shape == () else v[0]
        return res

    # ---- plaintext evaluation ---------------------------------------------------------------
    def evaluate(self, batched: bool | None = None, **inputs) -> dict:
        """The outputs on plaintext inputs, as decrypt_outputs returns them. Inputs are ints or
        arrays of the port's shape; give N sets at once (a leading axis of N on any input,
        the others broadcast) for a bit-sliced pass over all of them (64 sets per word)."""
        if batched is None:
            batched = any(
                np.ndim(v) > len(p.shape)
                for p in self.inputs
                for k, v in inputs.items()
                if k == p.name
            )
        planes, n = self._input_planes(inputs, batched)
        out = self._ir().evaluate(planes)
        out_bits = np.unpackbits(out.view(np.uint8), axis=1, bitorder="little")[:, :n]
        return self._pack_outputs(out_bits.astype(bool), batched)

    # ---- encrypted execution ---------------------------------------------------------------
    def encrypt_inputs(self, ctx, ck, **inputs) -> dict:
        """{name: Bits} with each input's bits (LSB first, elements in C order)."""
        bits, _ = self._input_bits(inputs, batched=False)
        out, start = {}, 0
        for p in self.inputs:
            out[p.name] = ctx.encrypt(bits[start : start + p.nbits, 0], ck)
            start += p.nbits
        return out

    def run(
        self,
        ctx,
        sk,
        ins: dict,
        devices=None,
        progress: bool = True,
        fuse: bool | None = None,
        mode: str | None = None,
        options: RunOptions | None = None,
    ) -> dict:
        """Evaluates the circuit on encrypted inputs with the C++ scheduler (docs/circuits.md):
        step by step, the ready gates are grouped by type (with `fuse`, every AND-type gate is
        one AND of possibly negated inputs with a possibly negated output and every XOR-type one
        an XOR: at most three groups per step) and each group runs as one gather and one batched
        bootstrap per device. Returns {output name: Bits} on ctx's device.

        devices: None (ctx's device), "all" (every visible GPU; ctx's device on a machine
        without one), a device name or a list of names ("cpu:0", "cpu:1" for tests): each
        step's groups are split evenly over them, the server key copied to each once.
        mode: "wave" (each step waits for the previous one) or "dataflow" (each group waits
        only for its operands); fuse and mode override `options` (a RunOptions). A progress
        bar (waves, gates/s) shows in a terminal. The run's statistics (launches, cross-device
        copies, spills, host times) are left in circ.last_run_stats."""
        from . import _ember, cggi
        from ._progress import Progress

        opts = options if options is not None else RunOptions()
        if not isinstance(opts, RunOptions):
            raise ParameterError(f"options must be a circuit.RunOptions, got {opts!r}")
        if fuse is not None:
            opts = replace(opts, fuse=bool(fuse))
        if mode is not None:
            opts = replace(opts, mode=mode)
        if opts.mode not in ("wave", "dataflow"):
            raise ParameterError(f"mode must be 'wave' or 'dataflow', got {opts.mode!r}")
        if opts.min_gates_per_device is not None and (
            not isinstance(opts.min_gates_per_device, int) or opts.min_gates_per_device < 1
        ):
            raise ParameterError(
                f"min_gates_per_device must be None or a positive int, got "
                f"{opts.min_gates_per_device!r}"
            )
        if not isinstance(ctx, cggi.Context):
            raise ParameterError(f"run needs a cggi.Context, got {type(ctx).__name__}")
        ctx._own(sk, cggi.ServerKey, "circuit run (server key)")
        if not isinstance(ins, dict):
            raise ParameterError("inputs must be a dict {name: Bits} (circ.encrypt_inputs)")
        unknown = set(ins) - {p.name for p in self.inputs}
        if unknown:
            raise ParameterError(
                f"unknown circuit inputs {sorted(unknown)}; inputs are "
                f"{[p.name for p in self.inputs]}"
            )
        raws = []
        for p in self.inputs:
            b = ins.get(p.name)
            if b is None:
                raws.append(None)
                continue
            if not isinstance(b, cggi.Bits) or len(b) != p.nbits:
                raise ParameterError(
                    f"input {p.name!r} must be Bits of {p.nbits} ciphertexts "
                    "(circ.encrypt_inputs makes them)"
                )
            raws.append(ctx._own(b, cggi.Bits, f"circuit input {p.name!r}"))
        names = _run_devices(ctx, devices)
        kits = [(ctx.to(d)._raw, sk.to(d)._raw) for d in names]

        bar = Progress(int(self._ir().depth), "circuit waves", enabled=progress)

        def step(done, total, gates_done, _gates, seconds):
            rate = f"{gates_done / seconds:,.0f} gates/s" if seconds > 0 else ""
            bar.step(done - bar.done, note=rate)

        outs, stats = _ember.circuit_run(
            self._ir(),
            ctx._raw,
            raws,
            kits,
            opts.mode,
            opts.fuse,
            opts.max_live_ciphertexts or 0,
            opts.streams_per_device,
            opts.locality,
            opts.dataflow_min_batch or 0,
            opts.min_gates_per_device or 0,
            opts.skip_bootstrap,
            step if bar.enabled else None,
        )
        stats["device_names"] = names
        self.last_run_stats = stats
        self.calls = stats["launches"]
        self.last_run_seconds = stats["seconds"]
        return {p.name: cggi.Bits(ctx, raw, (p.nbits,)) for p, raw in zip(self.outputs, outs)}

    def decrypt_outputs(self, ctx, ck, outs: dict) -> dict:
        """{name: int or array}: each output with its C type's width and signedness."""
        bits = np.concatenate([ctx.decrypt(outs[p.name], ck).reshape(-1) for p in self.outputs])
        return self._pack_outputs(bits.reshape(-1, 1), batched=False)

    # ---- serialization -----------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        head = json.dumps(
            {
                "name": self.name,
                "inputs": [p.to_json() for p in self.inputs],
                "outputs": [p.to_json() for p in self.outputs],
            }
        ).encode()
        body = (
            struct.pack("<QQQ", len(head), len(self.ops), len(self.out_lits))
            + head
            + self.ops.astype(np.uint8).tobytes()
            + self.args.astype("<i8").tobytes()
            + self.out_lits.astype("<i8").tobytes()
        )
        digest = hashlib.blake2b(body, digest_size=16).digest()
        return _MAGIC + struct.pack("<I", _VERSION) + digest + body

    @classmethod
    def from_bytes(cls, blob: bytes) -> Circuit:
        blob = bytes(blob)
        if len(blob) < 12 + 16 + 24 or blob[:8] != _MAGIC:
            raise SerializationError("not an Ember circuit (bad magic or too short)")
        (version,) = struct.unpack_from("<I", blob, 8)
        if version != _VERSION:
            raise SerializationError(
                f"circuit format version {version}; this Ember reads version {_VERSION}"
            )
        digest, body = blob[12:28], blob[28:]
        if hashlib.blake2b(body, digest_size=16).digest() != digest:
            raise SerializationError("circuit checksum mismatch: the file is corrupted")
        nh, ng, no = struct.unpack_from("<QQQ", body, 0)
        if 24 + nh + ng + 24 * ng + 8 * no != len(body):
            raise SerializationError("circuit lengths do not match the file size")
        try:
            head = json.loads(body[24 : 24 + nh].decode())
            inputs = [Port.from_json(d) for d in head["inputs"]]
            outputs = [Port.from_json(d) for d in head["outputs"]]
            name = str(head.get("name", "circuit"))
        except (ValueError, KeyError, TypeError) as e:
            raise SerializationError(f"malformed circuit header: {e}") from e
        off = 24 + nh
        ops = np.frombuffer(body, dtype=np.uint8, count=ng, offset=off).copy()
        off += ng
        args = np.frombuffer(body, dtype="<i8", count=3 * ng, offset=off).reshape(ng, 3)
        off += 24 * ng
        out_lits = np.frombuffer(body, dtype="<i8", count=no, offset=off)
        circ = cls(inputs, outputs, ops, args.astype(np.int64), out_lits.astype(np.int64), name)
        circ._check()
        return circ

    def __reduce__(self):  # pickle and copy.deepcopy through the circuit's own format
        return type(self).from_bytes, (self.to_bytes(),)

    def save(self, path) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    @classmethod
    def load(cls, path) -> Circuit:
        with open(path, "rb") as f:
            return cls.from_bytes(f.read())


class CircuitBuilder:
    """Builds a Circuit gate by gate with NOTs and constants folded into literals."""

    def __init__(self, inputs: list):
        self.inputs = list(inputs)
        self.base = 1 + sum(p.nbits for p in inputs)
        self.ops: list = []
        self.args: list = []

    def input_lits(self, index: int) -> list:
        start = 1 + sum(p.nbits for p in self.inputs[:index])
        return [2 * (start + k) for k in range(self.inputs[index].nbits)]

    def gate2(self, code: int, a: int, b: int) -> int:
        """Literal of gate `code` (a truth table) on literals a, b, folding negations and
        constants."""
        code = _swap_table(code, bool(a & 1), bool(b & 1))
        a, b = a & ~1, b & ~1
        if a == 0 or b == 0:  # a constant false input: the gate is a function of the other
            if a == 0 and b == 0:
                return code & 1
            if a == 0:
                t0, t1 = code & 1, (code >> 2) & 1  # b = 0, b = 1
                x = b
            else:
                t0, t1 = code & 1, (code >> 1) & 1
                x = a
            return t0 if t0 == t1 else (x if t1 else x | 1)
        if a == b:
            t0, t1 = code & 1, (code >> 3) & 1
            return t0 if t0 == t1 else (a if t1 else a | 1)
        if code in (0, 15):
            return code & 1
        if code in (3, 12):  # depends on b only... (bit a+2b): 12 = b, 3 = not b
            return b if code == 12 else b | 1
        if code in (5, 10):  # 10 = a, 5 = not a
            return a if code == 10 else a | 1
        self.ops.append(code)
        self.args.append((a, b, 0))
        return 2 * (self.base + len(self.ops) - 1)

    def mux(self, s: int, a: int, b: int) -> int:
        """Literal of s ? a : b."""
        if s & 1:
            s, a, b = s ^ 1, b, a
        if s == 0:
            return b
        if a == b:
            return a
        if a >> 1 == s >> 1:  # read where s = 1
            a = 1 ^ (a & 1)
        if b >> 1 == s >> 1:  # read where s = 0
            b = b & 1
        if a == b:
            return a
        if a == (b ^ 1):  # s ? a : not a
            return self.gate2(GATE_CODES["xnor"], s, a)
        if a >> 1 == 0 or b >> 1 == 0:  # a constant data input: one AND/OR-type gate
            sa = self.gate2(GATE_CODES["and"], s, a)
            sb = self.gate2(GATE_CODES["andny"], s, b)
            return self.gate2(GATE_CODES["or"], sa, sb)
        neg = 0
        if (a & 1) and (b & 1):
            a, b, neg = a ^ 1, b ^ 1, 1
        self.ops.append(MUX)
        self.args.append((a, b, s))
        return (2 * (self.base + len(self.ops) - 1)) | neg

    def maj(self, a: int, b: int, c: int) -> int:
        """Literal of the majority of literals a, b, c (one bootstrap), folding constants,
        repeated inputs and negations (MAJ is self-dual: at most one input stays negated)."""
        x = self._fold3(a, b, c, parity=False)
        if x is not None:
            return x
        neg = 0
        if (a & 1) + (b & 1) + (c & 1) >= 2:
            a, b, c, neg = a ^ 1, b ^ 1, c ^ 1, 1
        return self._emit3(MAJ, a, b, c) | neg

    def xor3(self, a: int, b: int, c: int) -> int:
        """Literal of a ^ b ^ c (one bootstrap), folding constants, repeated inputs and
        negations (stored on positive inputs, a negation moves to the output)."""
        x = self._fold3(a, b, c, parity=True)
        if x is not None:
            return x
        neg = (a ^ b ^ c) & 1
        return self._emit3(XOR3, a & ~1, b & ~1, c & ~1) | neg

    def _fold3(self, a: int, b: int, c: int, parity: bool):
        """The literal of MAJ / XOR3 when an input is constant or two read the same node (a
        two-input gate or a wire), else None."""
        lits = [a, b, c]
        for i in range(3):
            if lits[i] >> 1 == 0:  # a constant: AND / OR (MAJ) or XOR / XNOR (XOR3)
                x, y = (lits[j] for j in range(3) if j != i)
                if parity:
                    return self.gate2(GATE_CODES["xor"], x, y) ^ (lits[i] & 1)
                return self.gate2(GATE_CODES["or" if lits[i] & 1 else "and"], x, y)
        for i, j in ((0, 1), (0, 2), (1, 2)):
            if lits[i] >> 1 == lits[j] >> 1:
                other = lits[3 - i - j]
                same = lits[i] == lits[j]
                if parity:  # x ^ x ^ y = y, x ^ !x ^ y = !y
                    return other if same else other ^ 1
                return lits[i] if same else other  # MAJ(x, x, y) = x, MAJ(x, !x, y) = y
        return None

    def _emit3(self, code: int, a: int, b: int, c: int) -> int:
        self.ops.append(code)
        self.args.append((a, b, c))
        return 2 * (self.base + len(self.ops) - 1)

    def instantiate(self, circ: Circuit, in_lits: list) -> list:
        """Copies circ's gates with its input bits read from in_lits (one literal per input
        bit, in circ's input order); returns the literals of its output bits. Constants and
        repeated inputs fold as gate by gate (gate2, mux, maj, xor3)."""
        if len(in_lits) != circ.num_inputs_bits:
            raise ValueError(f"{circ.name} takes {circ.num_inputs_bits} input bits")
        node = [0, *in_lits]  # literal of each of circ's nodes (the constant node reads 0)
        for code, (a, b, c) in zip(circ.ops.tolist(), circ.args.tolist()):
            la = node[a >> 1] ^ (a & 1)
            lb = node[b >> 1] ^ (b & 1)
            if code == MUX:
                node.append(self.mux(node[c >> 1] ^ (c & 1), la, lb))
            elif code == MAJ:
                node.append(self.maj(la, lb, node[c >> 1] ^ (c & 1)))
            elif code == XOR3:
                node.append(self.xor3(la, lb, node[c >> 1] ^ (c & 1)))
            else:
                node.append(self.gate2(code, la, lb))
        return [node[x >> 1] ^ (x & 1) for x in circ.out_lits.tolist()]

    def build(self, outputs: list, out_lits: list, name: str) -> Circuit:
        ops = np.array(self.ops, dtype=np.uint8)
        args = np.array(self.args, dtype=np.int64).reshape(-1, 3)
        # MUX with one negated data input: the executor negates the operand (free).
        return Circuit(self.inputs, outputs, ops, args, np.array(out_lits, dtype=np.int64), name)
