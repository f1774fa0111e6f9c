"""Ember's figures beside its peers' from the same run, as tables (Markdown) and as pairs for the
plots: NTT against Phantom and the one-pass memory floor, CKKS against Phantom and DESILO, BFV
and BGV against Phantom, bootstrapping against DESILO, bootstrapping on 32- and 64-bit words
against Cheddar, CKKS on 32-bit words against Phantom, CGGI's gates, and scaling over
devices."""

from __future__ import annotations

from dataclasses import dataclass, field

# Ember CKKS set -> Phantom's benchmark set with the same primes.
CKKS_PHANTOM_SET = {
    "N14": "14_8m1s",
    "N15": "15_18m2s",
    "N16_36+4": "16_36m4s",
    "N16_42+1": "16_42m1s",
}
# Ember CKKS op -> (Phantom op, DESILO op); None where the peer has no equivalent.
CKKS_OPS = [
    ("encode", "encode", "encode"),
    ("encrypt", "encrypt", "encrypt"),
    ("add", "add", "add"),
    ("multiply_relin", "multiply_relin", None),
    ("relinearize", "relinearize", "relinearize"),
    ("rescale", "rescale", "rescale"),
    ("rotate", "rotate", "rotate"),
    ("hoisted_rotate8", "rotate8", "rotate8_batch"),
]
# Ember BFV/BGV preset -> the peer harness's set with the same prime sizes.
INTEGER_PHANTOM_SET = {
    ("bfv", "N12_t65537"): "bfv_N12_Q109",
    ("bfv", "N13_t65537"): "bfv_N13_Q152",
    ("bfv", "N14_t65537"): "bfv_N14_Q237",
    ("bfv", "N15_Q496_t65537"): "bfv_N15_Q496",
    ("bfv", "N15_t65537"): "bfv_N15_Q880",
    ("bgv", "N13_t65537"): "bgv_N13_Q218",
    ("bgv", "N14_t65537"): "bgv_N14_Q438",
    ("bgv", "N15_t65537"): "bgv_N15_Q880",
}
INTEGER_OPS = [
    "keygen_sk",
    "keygen_pk",
    "keygen_relin",
    "encrypt",
    "encrypt_symmetric",
    "decrypt",
    "add",
    "multiply",
    "relinearize",
    "multiply_relin",
    "mod_switch",
    "multiply_relin_modswitch",
    "rotate",
    "rotate_columns",
]


@dataclass
class Pair:
    """One operation: Ember's time and a peer's (None: not measured), in `unit`."""

    group: str
    op: str
    ours: float
    peer: str | None = None
    theirs: float | None = None
    unit: str = "ms"

    @property
    def ratio(self) -> float | None:
        """The peer's time over Ember's: above 1, Ember is faster."""
        return None if self.theirs is None else self.theirs / self.ours


@dataclass
class Table:
    title: str
    header: list
    rows: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    pairs: list = field(default_factory=list)

    def markdown(self) -> str:
        out = [self.title, "", "| " + " | ".join(self.header) + " |"]
        out.append("|" + "---|" * len(self.header))
        out += ["| " + " | ".join(str(c) for c in r) + " |" for r in self.rows]
        if self.notes:
            out += [""] + self.notes
        return "\n".join(out) + "\n"


def _f(v, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _x(a, b) -> str:
    return "-" if a is None or b is None else f"{a / b:.2f}x"


def _phantom_ops(records: list) -> dict:
    """(set, op) -> ms: Phantom's batch-of-10 device time (Ember's method) per operation."""
    return {
        (r["set"], r["op"]): r["batch10_median_us"] / 1e3
        for r in records
        if "op" in r and "set" in r and "batch10_median_us" in r
    }


def ckks_table(ember: dict, phantom: list, desilo: list) -> Table:
    p_ops = _phantom_ops(phantom)
    d_ops = {
        (r.get("config"), r["op"]): r["batch10_median_ms"]
        for r in desilo
        if "op" in r and "batch10_median_ms" in r and "@" not in r["op"]
    }
    t = Table(
        f"CKKS on {ember['device_name']} ({ember['date']}), ms per operation, top level",
        [
            "set",
            "op",
            "Ember",
            "Phantom",
            "Phantom/Ember",
            "DESILO (16:4, level 35)",
            "DESILO/Ember",
        ],
    )
    for r in ember["results"]:
        pset = CKKS_PHANTOM_SET.get(r["name"])
        ops = [(o, p, d, r[f"{o}_ms"]) for o, p, d in CKKS_OPS]
        # The fused product (one division by P q_l) when the run measured it.
        fused = r.get("multiply_relin_rescale_ms", r["multiply_relin_ms"] + r["rescale_ms"])
        ops.append(
            (
                "multiply_relin + rescale",
                ("multiply_relin", "rescale"),
                "multiply_relin_rescale",
                fused,
            )
        )
        for op, pop, dop, e in ops:
            if isinstance(pop, tuple):
                parts = [p_ops.get((pset, x)) for x in pop]
                p = None if None in parts else sum(parts)
            else:
                p = p_ops.get((pset, pop))
            d = d_ops.get(("16:4", dop)) if r["name"] == "N16_36+4" and dop else None
            t.rows.append([r["name"], op, _f(e), _f(p), _x(p, e), _f(d), _x(d, e)])
            t.pairs.append(Pair(r["name"], op, e, "Phantom", p))
            if d is not None:
                t.pairs.append(Pair(r["name"], op, e, "DESILO", d))
        if "key_read_floor_ms" in r:
            t.rows.append(
                [
                    r["name"],
                    "key-read floor of one key switch",
                    _f(r["key_read_floor_ms"]),
                    "",
                    "",
                    "",
                    "",
                ]
            )
    return t


def integer_table(ember: dict, phantom: list) -> Table:
    scheme = ember["benchmark"]
    p_ops = _phantom_ops(phantom)
    checks = [r for r in phantom if "check" in r and r.get("scheme") == scheme]
    bad = [f"{r['set']}:{r['check']}" for r in checks if not r.get("ok")]
    t = Table(
        f"{scheme.upper()} on {ember['device_name']} ({ember['date']}), ms per operation",
        ["set", "log2 QP", "op", "Ember", "Phantom", "Phantom/Ember"],
    )
    if checks:
        t.notes.append(
            f"Phantom correctness checks: {len(checks) - len(bad)}/{len(checks)} ok {bad}"
        )
    for r in ember["results"]:
        pset = INTEGER_PHANTOM_SET.get((scheme, r["name"]))
        for op in INTEGER_OPS:
            if f"{op}_ms" not in r:
                continue
            e = r[f"{op}_ms"]
            p = p_ops.get((pset, op))
            t.rows.append([r["name"], f"{r['log_qp']:.0f}", op, _f(e, 4), _f(p, 4), _x(p, e)])
            t.pairs.append(Pair(f"{scheme} {r['name']}", op, e, "Phantom", p))
    return t


def phantom_ntt(records: list) -> dict:
    """(log N, limbs) -> {op: us}: Phantom's batch-of-10 figure, Ember's method."""
    out: dict = {}
    for r in records:
        if r.get("skipped") or not str(r.get("op", "")).startswith("ntt_") or "limbs" not in r:
            continue
        out.setdefault((r["log_n"], r["limbs"]), {})[r["op"]] = r.get(
            "batch10_median_us", r["median_us"]
        )
    return out


def ntt_table(ember: dict, phantom: list) -> Table:
    p = phantom_ntt(phantom)
    t = Table(
        f"NTT on {ember['device_name']} ({ember['date']}), {ember['prime_bits']}-bit primes, "
        f"copy bandwidth {ember['copy_gbps']:.0f} GB/s (read + write)",
        [
            "log N",
            "limbs",
            "schedule",
            "fwd us",
            "inv us",
            "fwd cold us",
            "floor us",
            "fwd/floor",
            "Phantom fwd us",
            "Phantom inv us",
            "Phantom/Ember fwd",
            "Phantom/Ember inv",
        ],
    )
    for r in ember["results"]:
        if not r["variant"].startswith("auto"):
            continue
        q = p.get((r["log_n"], r["limbs"]), {})
        pf, pi = q.get("ntt_forward"), q.get("ntt_inverse")
        size = f"2^{r['log_n']} x {r['limbs']}"
        t.rows.append(
            [
                r["log_n"],
                r["limbs"],
                r["variant"][5:],
                _f(r["forward_us"], 1),
                _f(r["inverse_us"], 1),
                _f(r["forward_cold_us"], 1),
                _f(r["floor_us"], 1),
                _f(r["forward_over_floor"], 2),
                _f(pf, 1),
                _f(pi, 1),
                _x(pf, r["forward_us"]),
                _x(pi, r["inverse_us"]),
            ]
        )
        t.pairs.append(Pair(size, "forward", r["forward_us"], "Phantom", pf, "us"))
        t.pairs.append(Pair(size, "inverse", r["inverse_us"], "Phantom", pi, "us"))
    return t


def ntt_schedules_table(ember: dict) -> Table:
    variants = sorted(
        {r["variant"] for r in ember["results"] if not r["variant"].startswith("auto")}
    )
    t = Table(
        "All NTT schedules (fwd us / inv us, hot)", ["log N", "limbs"] + variants + ["fastest"]
    )
    table: dict = {}
    for r in ember["results"]:
        table.setdefault((r["log_n"], r["limbs"]), {})[r["variant"]] = r
    for (log_n, limbs), rs in table.items():
        cells = []
        for v in variants:
            r = rs.get(v)
            ok = "" if r is None or r["roundtrip_ok"] else " FAIL"
            cells.append(f"{r['forward_us']:.1f} / {r['inverse_us']:.1f}{ok}" if r else "-")
        best = ember.get("fastest_variant", {}).get(f"{log_n}x{limbs}", "-")
        t.rows.append([log_n, limbs] + cells + [best])
    return t


def boot_table(ember: dict, desilo: list) -> Table:
    peers = [r for r in desilo if str(r.get("op", "")).startswith("bootstrap") and "median_ms" in r]
    t = Table(
        f"Bootstrapping on {ember['device_name']} ({ember['date']}), preset {ember['preset']} "
        f"(N = 2^{ember['log_n']}, {ember['slots']} slots, log2 QP = {ember['log_qp']}, dnum {ember['dnum']})",
        [
            "library",
            "values",
            "bootstrap ms",
            "precision mean / min bits",
            "levels left",
            "key memory GB",
            "Ember speedup",
        ],
    )
    ours = {"complex": ember}
    for kind, key in (("real", "real"), ("real pair", "real_pair")):
        if ember.get(key):
            ours[kind] = ember[key]
    keys = f"{ember['key_memory_mb'] / 1024:.1f} (+ {ember['diagonal_memory_mb'] / 1024:.1f} diagonals)"
    for kind, rec in ours.items():
        t.rows.append(
            [
                "Ember",
                kind,
                _f(rec["bootstrap_ms"], 1),
                f"{rec['precision_mean_bits']:.1f} / {rec['precision_min_bits']:.1f}",
                ember["levels_left"],
                keys,
                "1.00x",
            ]
        )
    for p in peers:
        kind = p.get("values", "real")
        mine = ours.get(kind, ember)["bootstrap_ms"]
        key = p.get("key_nbytes")
        t.rows.append(
            [
                f"DESILO {p['op']}",
                kind,
                _f(p["median_ms"], 1),
                f"{p['precision_mean_bits']:.1f} / {p['precision_min_bits']:.1f}",
                p.get("output_level", "-"),
                f"{key / 2**30:.1f}" if key else "-",
                _x(p["median_ms"], mine),
            ]
        )
        t.pairs.append(Pair("bootstrap", kind, mine, "DESILO", p["median_ms"]))
    sp = ember.get("sparse")
    if sp:
        t.rows.append(
            [
                f"Ember, sparse {sp['slots']} slots",
                "complex",
                _f(sp["bootstrap_ms"], 1),
                f"{sp['precision_mean_bits']:.1f} / {sp['precision_min_bits']:.1f}",
                ember["levels_left"],
                "-",
                "-",
            ]
        )
    for kind, rec in ours.items():
        if "phases_ms" in rec:
            phases = ", ".join(f"{k} {v:.1f}" for k, v in rec["phases_ms"].items())
            t.notes.append(f"Ember phases, {kind} values (ms, synchronized): {phases}.")
    if "amortized_mult_us_per_slot" in ember:
        t.notes.append(
            f"Amortized multiplication time per slot (Jung et al., complex circuit): "
            f"{ember['amortized_mult_us_per_slot']:.3f} us. Key generation: {ember['keygen_s']:.2f} s "
            f"for {ember['eval_keys']} keys."
        )
    return t


def _cheddar_boot(records: list) -> dict | None:
    """Cheddar's full-slot complex bootstrap (its default variant) with its summary and
    per-level operations (ms): {"boot", "summary", "ops": op -> {level: ms}}, or None."""
    boots = [
        r
        for r in records
        if r.get("record") == "bootstrap" and not r.get("min_ks") and "bootstrap_ms" in r
    ]
    if not boots:
        return None
    summary = next((r for r in records if r.get("record") == "summary"), {})
    ops = {
        r["op"]: {int(k): v for k, v in r["ms_median_by_level"].items()}
        for r in records
        if r.get("record") == "op"
    }
    return {"boot": boots[-1], "summary": summary, "ops": ops}


def boot_words_table(boots: list, cheddar: list) -> Table:
    """Ember's bootstraps of one run (each preset once: 32- and 64-bit words) beside Cheddar's
    from the same run: latency, levels left, precision, Jung et al.'s amortized cost, and HMult
    (with its rescale) and HRot by one slot after bootstrapping."""
    latest = {}
    for doc in boots:
        latest[doc["preset"]] = doc
    docs = sorted(latest.values(), key=lambda d: d.get("word_bits", 64))  # 32-bit words first
    first = docs[0]
    t = Table(
        f"Bootstrapping on {first['device_name']} ({first['date']}), 32768 complex slots, "
        "32- and 64-bit words",
        [
            "library",
            "words",
            "bootstrap ms",
            "levels left",
            "precision mean / min bits",
            "amortized us / slot",
            "HMult / HRot ms, output level",
            "HMult / HRot ms, last level",
        ],
    )

    def at(by_level: dict, level) -> float | None:
        return {int(k): v for k, v in by_level.items()}.get(level)

    for d in docs:
        mult, rot = d["multiply_ms_by_level"], d.get("rotate_ms_by_level", {})
        last = min(int(k) for k in mult)
        top = d["output_level"]
        t.rows.append(
            [
                f"Ember {d['preset']}",
                d.get("word_bits", 64),
                _f(d["bootstrap_ms"], 2),
                d["levels_left"],
                f"{d['precision_mean_bits']:.1f} / {d['precision_min_bits']:.1f}",
                _f(d["amortized_mult_us_per_slot"], 4),
                f"{_f(at(mult, top))} / {_f(at(rot, top))}",
                f"{_f(at(mult, last))} / {_f(at(rot, last))}",
            ]
        )
    ch = _cheddar_boot(cheddar)
    if ch is None:
        return t
    b, ops = ch["boot"], ch["ops"]
    out_level, in_level = b["output_level"], b["input_level"]
    mult, rot = ops.get("hmult_rescale", {}), ops.get("hrot", {})
    amortized = ch["summary"].get("amortized_mult_us_per_slot")
    t.rows.append(
        [
            f"Cheddar {b.get('param_file', '')}",
            32,
            _f(b["bootstrap_ms"], 2),
            b["levels_left"],
            f"{b['precision_mean_bits']:.1f} / {b['precision_min_bits']:.1f}",
            _f(amortized, 4),
            f"{_f(mult.get(out_level))} / {_f(rot.get(out_level))}",
            f"{_f(mult.get(in_level + 1))} / {_f(rot.get(in_level + 1))}",
        ]
    )
    for d in docs:
        name = f"Ember {d['preset']}"
        t.pairs.append(Pair("bootstrap", name, d["bootstrap_ms"], "Cheddar", b["bootstrap_ms"]))
        if amortized is not None:
            t.pairs.append(
                Pair(
                    "amortized",
                    name,
                    d["amortized_mult_us_per_slot"],
                    "Cheddar",
                    amortized,
                    unit="us",
                )
            )
    t.notes.append(
        "Cheddar / Ember (above 1: Ember is faster): "
        + "; ".join(f"{p.group} {p.op} {p.ratio:.2f}x" for p in t.pairs)
        + ". HMult includes the rescale (Ember's x * x, Cheddar's HMult with rescale); the last "
        "level is the lowest usable one before the next bootstrap."
    )
    return t


def hmult_words_table(ckks32: dict, phantom: list) -> Table:
    """HMult (tensor and relinearization, no rescale) at the top level of N = 2^16 chains: Ember
    on 32- and 64-bit words (`ember bench ckks32`) beside Phantom's sets of the same run, each a
    synchronized call's wall clock."""
    t = Table(
        f"HMult at N = 2^16, top level, {ckks32['date']} (one synchronized call, wall clock)",
        ["library", "set", "log2 QP", "dnum", "HMult ms", "Phantom set / this"],
    )
    sets = {}
    for r in phantom:
        if r.get("params") and r.get("log_n") == 16:
            sets[r["set"]] = r
    ph = {
        r["set"]: r["wall_median_us"] / 1e3
        for r in phantom
        if r.get("op") == "multiply_relin" and r.get("set") in sets and "wall_median_us" in r
    }
    for r in ckks32["results"]:
        ratios = ", ".join(f"{s} {ms / r['hmult_ms']:.2f}x" for s, ms in sorted(ph.items()))
        t.rows.append(
            [
                f"Ember, {r['words']}-bit words",
                r["name"],
                r["log_qp"],
                r["dnum"],
                _f(r["hmult_ms"], 4),
                ratios or "-",
            ]
        )
    for s, ms in sorted(ph.items()):
        p = sets[s]
        t.rows.append(["Phantom", s, p["total_bits"], p["dnum"], _f(ms, 4), "-"])
        ours = ckks32["results"][0]
        t.pairs.append(Pair("hmult", s, ours["hmult_ms"], "Phantom", ms))
    return t


def cggi_table(ember: dict, peers: dict) -> Table:
    t = Table(
        f"CGGI on {ember.get('device_name', ember.get('device'))}, gates per second by batch",
        ["preset", "batch", "gates per second", "one gate ms"],
    )
    for preset, rec in ember.get("gates", {}).items():
        for batch, rate in rec.get("gates_per_s", {}).items():
            t.rows.append(
                [
                    preset,
                    batch,
                    f"{rate:,.0f}",
                    _f(rec.get("gate_latency_ms"), 2) if batch == "1" else "",
                ]
            )
    for preset, rec in ember.get("pbs", {}).items():
        t.notes.append(
            f"{preset}: {rec['bits']}-bit lookup {rec['pbs_latency_ms']:.2f} ms"
            + (f", {rec['pbs_per_s']:,.0f} per second batched" if "pbs_per_s" in rec else "")
        )
    for name, recs in peers.items():
        for r in recs:
            if "gates_per_s" in r:
                t.notes.append(
                    f"{name}: {r['gates_per_s']:,.0f} gates per second ({r.get('params', '')})"
                )
    return t


def scaling_series(doc: dict) -> dict:
    """label -> [(devices, speedup)] from a bench over device counts (multi, split, circuit,
    apps); empty for other kinds."""
    kind = doc.get("benchmark")
    out: dict = {}
    if kind == "multi":
        for r in doc["results"]:
            out.setdefault(f"{r['set']} (independent ops)", []).append(
                (r["devices"], r["strong_speedup"])
            )
    elif kind == "split":
        for r in doc["results"]:
            name = r.get("set") or f"N=2^{r['log_n']}"
            out[f"{name} one multiply split"] = [
                (s["devices"], s["multiply_relin_speedup"]) for s in r["splits"]
            ]
    elif kind == "circuit":
        for r in doc["results"]:
            out.setdefault(f"circuit, {r['mode']}", []).append((r["devices"], r["speedup"]))
    elif kind == "apps":
        for r in doc["results"]:
            secs = {int(k): v for k, v in (r.get("seconds") or {}).items() if v}
            if 1 in secs and len(secs) > 1 and r.get("bootstraps", 0) >= 50_000:
                out[r["app"]] = [(k, secs[1] / v) for k, v in sorted(secs.items())]
    return out


def apps_table(doc: dict) -> Table:
    counts = [str(c) for c in doc.get("device_counts", [1])]
    t = Table(
        f"Applications on {doc.get('device_name')} ({doc['date']}), preset {doc['preset']}, seconds",
        ["program", "bootstraps", "depth"]
        + [f"{c} device(s)" for c in counts]
        + ["correct", "published"],
    )
    for r in doc["results"]:
        if "error" in r:
            t.rows.append([r["app"], "-", "-"] + ["-"] * len(counts) + [r["error"], ""])
            continue
        secs = r.get("seconds", {})
        ok = all(v is True for v in r.get("ok", {}).values())
        paper = "; ".join(f"{k}: {v}" for k, v in (r.get("paper") or {}).items())
        t.rows.append(
            [r["app"], f"{r['bootstraps']:,}" if "bootstraps" in r else "-", r.get("depth", "-")]
            + [_f(secs.get(c), 3) for c in counts]
            + ["yes" if ok else "NO", paper]
        )
    return t


__all__ = [
    "Pair",
    "Table",
    "apps_table",
    "boot_table",
    "cggi_table",
    "ckks_table",
    "integer_table",
    "ntt_schedules_table",
    "ntt_table",
    "scaling_series",
]
