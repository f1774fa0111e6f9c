"""Encrypted Boolean circuits and lookup tables with CGGI (TFHE): a ripple-carry adder of 8-bit
numbers, each bit position one batched gate call over all the pairs at once, then a programmable
bootstrap (x^2 mod 16) on encrypted 4-bit integers; both checked against numpy.

    python examples/05_cggi_gates_and_lookups.py [--device cpu|cuda|auto] [--pairs 32]

On a GPU it runs the 128-bit presets (bool_128, int4_128); on the CPU the small insecure test
presets, so that it finishes in seconds (pass --secure for the real ones: about 0.15 s per gate
and core).
"""

import argparse
import time

import numpy as np
from ember import cggi, resolve_device


def adder(ctx, ck, sk, a: np.ndarray, b: np.ndarray, bits: int = 8) -> np.ndarray:
    """a + b mod 2^bits for every pair: per bit position, sum = a ^ b ^ carry and carry' =
    (a ^ b) ? carry : a (a MUX), all pairs in each call."""
    ea = [ctx.encrypt((a >> i) & 1 == 1, ck) for i in range(bits)]
    eb = [ctx.encrypt((b >> i) & 1 == 1, ck) for i in range(bits)]
    carry = ctx.constant(np.zeros(len(a), dtype=bool))
    out = []
    for i in range(bits):
        t = ctx.xor(ea[i], eb[i], sk)
        out.append(ctx.xor(t, carry, sk))
        if i + 1 < bits:
            carry = ctx.mux(t, carry, ea[i], sk)
    return sum(ctx.decrypt(s, ck).astype(np.int64) << i for i, s in enumerate(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="auto")
    ap.add_argument("--pairs", type=int, default=32)
    ap.add_argument("--secure", action="store_true", help="128-bit presets on the CPU too")
    args = ap.parse_args()
    device = resolve_device(args.device)
    secure = args.secure or device.startswith("cuda")
    rng = np.random.default_rng(0)

    ctx = cggi.Context("bool_128" if secure else "test_insecure", device=device)
    ck = ctx.keygen()
    sk = ctx.server_key(ck)
    a, b = rng.integers(0, 256, args.pairs), rng.integers(0, 256, args.pairs)
    t0 = time.perf_counter()
    got = adder(ctx, ck, sk, a, b)
    dt = time.perf_counter() - t0
    gates = args.pairs * (8 * 2 + 7 * 2)  # two XORs per bit, a MUX (two bootstraps) per carry
    print(
        f"{ctx.params.name} on {ctx.device}: {args.pairs} 8-bit additions, {gates} bootstraps in "
        f"{dt:.2f} s ({gates / dt:.0f}/s); exact: {np.array_equal(got, (a + b) % 256)}"
    )
    if not np.array_equal(got, (a + b) % 256):
        raise SystemExit("adder mismatch")

    ictx = cggi.Context("int4_128" if secure else "test_int_insecure", device=device)
    ick = ictx.keygen()
    isk = ictx.server_key(ick)
    x = rng.integers(0, 16, args.pairs)
    q = ictx.encrypt_int(x, ick, bits=4)
    sq = ictx.decrypt(ictx.apply_lut(q, lambda v: (v * v) % 16, isk), ick)
    print(
        f"{ictx.params.name}: x^2 mod 16 by lookup on {args.pairs} encrypted 4-bit integers, "
        f"exact: {np.array_equal(sq, (x * x) % 16)}"
    )
    if not np.array_equal(sq, (x * x) % 16):
        raise SystemExit("lookup mismatch")


if __name__ == "__main__":
    main()
