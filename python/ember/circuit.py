"""Boolean circuits of CGGI gates: the compiler's output, a bit-sliced plaintext evaluator, and
the encrypted scheduler (waves batched by gate type).

A circuit is a list of gates over *literals*, AIGER style: node 0 is the constant false, nodes
1..I are the input bits (each input's bits LSB first, inputs in declaration order), node I+1+g is
gate g's output; literal 2 node + neg names a node or its negation. NOT is therefore free (a
flipped literal), and constants are the literals 0 (false) and 1 (true). Two-input gates carry
their truth table (bit a + 2 b of the code is the output for inputs a, b: AND = 8, XOR = 6, ...);
the ten tables that depend on both inputs are exactly the CGGI gate set (and, nand, or, nor,
xor, xnor, andny, andyn, orny, oryn), so gates are stored with positive inputs and the negations
folded into the table. MUX (code 16) is s ? a : b and costs two bootstraps.
"""

from __future__ import annotations

import hashlib
import json
import struct
import time
from dataclasses import dataclass, field

import numpy as np

from .errors import ParameterError, SerializationError

MUX = 16
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
GATE_NAMES[MUX] = "mux"
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


@dataclass
class Circuit:
    """A levelized netlist of CGGI gates with named integer inputs and outputs."""

    inputs: list  # [Port]
    outputs: list  # [Port]
    ops: np.ndarray  # uint8 [G]: truth table (0..15) or MUX
    args: np.ndarray  # int64 [G, 3]: literals (a, b, s); s only for MUX (and a, b its data)
    out_lits: np.ndarray  # int64 [sum of output bits]
    name: str = "circuit"
    _levels: np.ndarray | None = field(default=None, repr=False, compare=False)

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
        used[self.ops != MUX, 2] = 0
        if np.any(used < 0) or np.any(used >= own[:, None]):
            raise SerializationError("circuit gates are not in topological order")
        if np.any(self.out_lits < 0) or np.any(self.out_lits >= 2 * self.num_nodes):
            raise SerializationError("circuit output literal out of range")

    def levels(self) -> np.ndarray:
        """Level of every gate (ARCTYREX Algorithm 1): 1 + the largest level of its inputs, with
        inputs, constants and NOTs (flipped literals) at the level of what they read."""
        if self._levels is None:
            base = 1 + self.num_inputs_bits
            node_level = np.zeros(self.num_nodes, dtype=np.int64)
            nodes = self.args >> 1
            ismux = self.ops == MUX
            lv = np.empty(len(self.ops), dtype=np.int64)
            for g in range(len(self.ops)):
                a, b, s = nodes[g]
                m = max(node_level[a], node_level[b])
                if ismux[g]:
                    m = max(m, node_level[s])
                lv[g] = node_level[base + g] = m + 1
            self._levels = lv
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
        """Gates by type, bootstraps (MUX = 2), depth (waves) and the widest wave."""
        by_type = {}
        for code, n in zip(*np.unique(self.ops, return_counts=True)):
            by_type[GATE_NAMES[int(code)]] = int(n)
        waves = self.waves()
        boots = np.where(self.ops == MUX, 2, 1)
        return {
            "gates": len(self.ops),
            "bootstraps": int(boots.sum()),
            "gates_by_type": dict(sorted(by_type.items())),
            "depth": len(waves),
            "widest_wave": max((len(w) for w in waves), default=0),
            "widest_wave_bootstraps": max((int(boots[w].sum()) for w in waves), default=0),
            "input_bits": self.num_inputs_bits,
            "output_bits": len(self.out_lits),
        }

    def used_inputs(self) -> set:
        """Names of inputs whose bits the outputs depend on (the others may be left out)."""
        lits = np.concatenate(
            [
                self.args[self.ops != MUX, :2].ravel(),
                self.args[self.ops == MUX].ravel(),
                self.out_lits,
            ]
        )
        nodes = set(np.unique(lits >> 1).tolist())
        used, start = set(), 1
        for p in self.inputs:
            if any(n in nodes for n in range(start, start + p.nbits)):
                used.add(p.name)
            start += p.nbits
        return used

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
        bits, n = self._input_bits(inputs, batched)
        nwords = (n + 63) // 64
        padded = np.zeros((bits.shape[0], nwords * 64), dtype=bool)
        padded[:, :n] = bits
        packed = np.packbits(padded, axis=1, bitorder="little").view("<u8")
        vals = np.empty((self.num_nodes, nwords), dtype=np.uint64)
        vals[0] = 0
        vals[1 : 1 + bits.shape[0]] = packed
        base = 1 + self.num_inputs_bits
        ones = np.uint64(_MASK64)
        ops, args = self.ops, self.args
        neg = (args & 1).astype(np.uint64) * ones  # all-ones where the literal is negated
        nodes = args >> 1
        tables = ((ops[:, None].astype(np.uint64) >> np.arange(4, dtype=np.uint64)) & 1) * ones
        for wave in self.waves():
            two = wave[ops[wave] != MUX]
            if len(two):
                a = vals[nodes[two, 0]] ^ neg[two, 0, None]
                b = vals[nodes[two, 1]] ^ neg[two, 1, None]
                t = tables[two]
                na, nb = ~a, ~b
                vals[base + two] = (
                    (t[:, 0, None] & na & nb)
                    | (t[:, 1, None] & a & nb)
                    | (t[:, 2, None] & na & b)
                    | (t[:, 3, None] & a & b)
                )
            mux = wave[ops[wave] == MUX]
            if len(mux):
                a = vals[nodes[mux, 0]] ^ neg[mux, 0, None]
                b = vals[nodes[mux, 1]] ^ neg[mux, 1, None]
                s = vals[nodes[mux, 2]] ^ neg[mux, 2, None]
                vals[base + mux] = (s & a) | (~s & b)
        ol = self.out_lits
        out = vals[ol >> 1] ^ ((ol & 1).astype(np.uint64) * ones)[:, None]
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
        self, ctx, sk, ins: dict, devices=None, progress: bool = True, fuse: bool = True
    ) -> dict:
        """Evaluates the circuit on encrypted inputs wave by wave: in each wave, one vectorized
        gate call per gate type over all its gates; ciphertexts are freed after their last
        reader. Returns {output name: Bits}. `devices`: None, "all" or the context's device:
        this scheduler runs on the context's device only (spreading waves over several devices
        comes with the C++ scheduler). A progress bar (waves) shows in a terminal. fuse: one
        AND call for all AND-type gates of a wave and one XOR call for the XOR-type ones (NOTs
        on their inputs and outputs are free), else one call per gate type."""
        from . import cggi

        if devices not in (None, "all", ctx.device, [ctx.device]):
            raise ParameterError(
                "circuit.run runs on the context's device only (several devices come with the "
                'C++ scheduler): pass devices=None or "all"'
            )
        for p in self.inputs:
            b = ins.get(p.name)
            if b is None:
                continue
            if not isinstance(b, cggi.Bits) or len(b) != p.nbits:
                raise ParameterError(
                    f"input {p.name!r} must be Bits of {p.nbits} ciphertexts "
                    "(circ.encrypt_inputs makes them)"
                )
        base = 1 + self.num_inputs_bits
        # node -> (batch key, position); batches are refcounted by their live nodes.
        where: dict = {}
        batches: dict = {}
        live: dict = {}
        start = 1
        zero = None
        for p in self.inputs:
            b = ins.get(p.name)
            if b is None:
                if zero is None:
                    zero = ctx.constant(np.zeros(1, dtype=bool))
                b = zero
                for k in range(p.nbits):
                    where[start + k] = (("in", p.name), 0, 0)
            else:
                for k in range(p.nbits):
                    where[start + k] = (("in", p.name), k, 0)
            batches[("in", p.name)] = b
            start += p.nbits
        # last reader (wave index) of every node; outputs are read after the last wave.
        waves = self.waves()
        nodes = self.args >> 1
        last = np.full(self.num_nodes, -1, dtype=np.int64)
        for wi, wave in enumerate(waves):
            last[nodes[wave, 0]] = wi
            last[nodes[wave, 1]] = wi
            m = wave[self.ops[wave] == MUX]
            last[nodes[m, 2]] = wi
        last[self.out_lits >> 1] = len(waves)
        for node, (key, _, _) in where.items():
            if last[node] >= 0:
                live[key] = live.get(key, 0) + 1
        consts = {}

        def operand(lit):
            node, neg = int(lit) >> 1, int(lit) & 1
            if node == 0:
                if neg not in consts:
                    consts[neg] = ctx.constant(np.array([bool(neg)]))
                return consts[neg]
            key, pos, out_neg = where[node]
            c = batches[key][pos]
            return ctx.not_(c) if neg ^ out_neg else c

        def gather(lits):
            return ctx.concat([operand(x) for x in lits])

        def release(node):
            key = where[node][0]
            live[key] -= 1
            if live[key] == 0:
                del batches[key]

        from ._progress import Progress

        bar = Progress(len(waves), "circuit waves", enabled=progress)
        t0 = time.perf_counter()
        self.calls = 0
        # Fused: every AND-type gate of a wave is AND(+-a, +-b) with its output maybe negated,
        # every XOR-type one XOR(a, b) maybe negated (negations are free), so a wave takes at
        # most three calls (AND, XOR, MUX) instead of one per gate type.
        plan = {}
        for code, name in GATE_NAMES.items():
            if code == MUX:
                plan[code] = ("mux", 0, 0, 0)
            elif not fuse:
                plan[code] = (name, 0, 0, 0)
            elif code in (6, 9):
                plan[code] = ("xor", 0, 0, int(code == 9))
            else:
                plan[code] = next(
                    ("and", na, nb, no)
                    for na in (0, 1)
                    for nb in (0, 1)
                    for no in (0, 1)
                    if (_swap_table(8, bool(na), bool(nb)) ^ (15 * no)) == code
                )
        gate_fns = {
            name: getattr(ctx, name + "_" if name in ("and", "or") else name)
            for name in set(GATE_NAMES.values()) - {"mux"}
        }
        ops_plan = {code: plan[code] for code in GATE_NAMES}
        for wi, wave in enumerate(waves):
            groups: dict = {}
            for g in wave.tolist():
                groups.setdefault(ops_plan[int(self.ops[g])][0], []).append(g)
            for call, gates in groups.items():
                sel = np.array(gates, dtype=np.int64)
                flags = np.array([ops_plan[int(self.ops[g])][1:] for g in gates], dtype=np.int64)
                a = gather(self.args[sel, 0] ^ flags[:, 0])
                b = gather(self.args[sel, 1] ^ flags[:, 1])
                if call == "mux":
                    res = ctx.mux(gather(self.args[sel, 2]), a, b, sk)
                else:
                    res = gate_fns[call](a, b, sk)
                self.calls += 1
                key = ("g", wi, call)
                batches[key] = res
                n_live = 0
                for k, g in enumerate(gates):
                    node = base + g
                    where[node] = (key, k, int(flags[k, 2]))
                    if last[node] > wi:
                        n_live += 1
                live[key] = n_live
                if n_live == 0:
                    del batches[key]
            for node in (
                set(nodes[wave, 0].tolist())
                | set(nodes[wave, 1].tolist())
                | set(nodes[wave[self.ops[wave] == MUX], 2].tolist())
            ):
                if node != 0 and last[node] == wi:
                    release(node)
            bar.step(1)
        self.last_run_seconds = time.perf_counter() - t0
        outs, start = {}, 0
        for p in self.outputs:
            lits = self.out_lits[start : start + p.nbits]
            start += p.nbits
            outs[p.name] = gather(lits) if len(lits) else None
        return outs

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

    def build(self, outputs: list, out_lits: list, name: str) -> Circuit:
        ops = np.array(self.ops, dtype=np.uint8)
        args = np.array(self.args, dtype=np.int64).reshape(-1, 3)
        # MUX with one negated data input: the executor negates the operand (free).
        return Circuit(self.inputs, outputs, ops, args, np.array(out_lits, dtype=np.int64), name)
