"""Per-device backend options: the NTT schedule and autotune table, the arithmetic paths and the
kernel fusions each backend uses. Every option changes which kernels run, never the results
(the GPU stays bit-identical to the CPU under every setting). Each device's backend holds its
own options, starting from the defaults and the EMBER_* environment variables of
docs/user-guide.md ("Backend options"); set them between operations:

    ember.set_backend_options("cuda:0", fused_tensor="off")
    with ember.using_backend_options("cuda:0", ntt_variant="warp_shuffle"):
        ...  # restored on exit

The CPU backend keeps the same options (its one NTT schedule is "harvey"; the others have no
effect there), so code that sets them runs on every device.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any

from . import _ember, resolve_device
from .errors import ParameterError
from .ntt_tune import TABLE_FORMAT

__all__ = ["backend_options", "load_ntt_table", "set_backend_options", "using_backend_options"]

_BOOLS = ("ntt_fp64", "ntt_unreduced", "key_product_words", "bconv_tensor")
_FUSIONS = ("fused_tensor", "fused_key_product")
_FUSION_VALUES = ("auto", "off", "always")
#: Every option name, as backend_options() returns them.
OPTION_NAMES = ("ntt_variant", *_BOOLS, *_FUSIONS, "cggi_rotation_group", "ntt_table")
_ROTATION_GROUPS = ("auto", 1, 2, 4)


def backend_options(device: str | None = None) -> dict:
    """The options of the device's backend: ntt_variant ("auto" or a schedule of
    _ember.ntt_variants(device)), ntt_fp64, ntt_unreduced, key_product_words, bconv_tensor
    (bools), fused_tensor and fused_key_product ("auto", "off" or "always"),
    cggi_rotation_group ("auto", 1, 2 or 4: ciphertexts per block of CGGI's Fourier blind
    rotation on a GPU), ntt_table (the file
    of a measured table in use, or None for the built-in one)."""
    raw = _ember.backend_options(resolve_device(device))
    return {k: raw[k] for k in OPTION_NAMES}


def set_backend_options(device: str | None, **changes: Any) -> None:
    """Changes the named options of the device's backend (the others stay). ntt_table takes the
    path of a table file written by `ember tune` (or its parsed dict), or None for the built-in
    table. Raises ParameterError, changing nothing, for an unknown name, a wrong type, or a
    schedule the backend lacks."""
    _ember.set_backend_options(resolve_device(device), _checked(changes))


@contextlib.contextmanager
def using_backend_options(device: str | None, **changes: Any) -> Iterator[dict]:
    """Sets `changes` on the device's backend for the `with` block and restores the previous
    options (measured table included) on exit, also after an exception. Yields the options in
    effect inside the block."""
    dev = resolve_device(device)
    before = _ember.backend_options(dev)
    _ember.set_backend_options(dev, _checked(changes))
    try:
        yield backend_options(dev)
    finally:
        _ember.set_backend_options(dev, before)


def load_ntt_table(source: str | os.PathLike | dict) -> tuple[str, list[tuple]]:
    """(name, rows) of a table file written by `ember tune` (or its parsed dict): rows are
    (log_n, limbs, integer_path, forward, inverse). Raises ParameterError for anything else."""
    name = os.fspath(source) if not isinstance(source, dict) else None
    if isinstance(source, dict):
        data = source
    else:
        try:
            with open(source) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise ParameterError(f"cannot read the NTT table {name!r}: {e}") from None
    if not isinstance(data, dict) or data.get("format") != TABLE_FORMAT:
        raise ParameterError(
            f"{name or 'the dict'} is not an NTT table written by `ember tune` "
            f"(format {TABLE_FORMAT!r})"
        )
    rows = []
    for path, integer in (("fp64", False), ("integer", True)):
        for r in data.get(path, {}).get("rows", []):
            try:
                rows.append(
                    (
                        int(r["log_n"]),
                        int(r["limbs"]),
                        integer,
                        str(r["forward"]),
                        str(r["inverse"]),
                    )
                )
            except (KeyError, TypeError, ValueError):
                raise ParameterError(f"malformed NTT table row {r!r}") from None
    if not rows:
        raise ParameterError(f"the NTT table {name or 'dict'} has no rows")
    return name or f"measured on {data.get('gpu', 'an unnamed GPU')}", rows


def _checked(changes: dict) -> dict:
    """The changes in the binding's form, after checking names and types."""
    unknown = sorted(set(changes) - set(OPTION_NAMES))
    if unknown:
        raise ParameterError(
            f"unknown backend option(s) {', '.join(unknown)}: use {', '.join(OPTION_NAMES)}"
        )
    out: dict = {}
    for k, v in changes.items():
        if k in _BOOLS:
            if not isinstance(v, bool):
                raise ParameterError(f"backend option {k} takes True or False, got {v!r}")
            out[k] = v
        elif k in _FUSIONS:
            if v not in _FUSION_VALUES:
                raise ParameterError(
                    f"backend option {k} takes {', '.join(map(repr, _FUSION_VALUES))}, got {v!r}"
                )
            out[k] = v
        elif k == "cggi_rotation_group":
            if v not in _ROTATION_GROUPS or isinstance(v, bool):
                raise ParameterError(
                    f"backend option cggi_rotation_group takes 'auto', 1, 2 or 4, got {v!r}"
                )
            out[k] = v
        elif k == "ntt_variant":
            if not isinstance(v, str):
                raise ParameterError(f"backend option ntt_variant takes a name, got {v!r}")
            out[k] = v
        elif v is None:  # ntt_table
            out["ntt_table"], out["ntt_table_rows"] = None, []
        else:
            out["ntt_table"], out["ntt_table_rows"] = load_ntt_table(v)
    return out
