"""Exact encrypted integer arithmetic with BFV and BGV: a dot product of two encrypted vectors
(batched into the slots, summed with rotations) and a polynomial, checked against numpy.

    python examples/03_bfv_bgv_exact.py [--device cpu|cuda|auto]
"""

import argparse

import numpy as np
from ember import bfv, bgv


def run(module, preset: str, device: str) -> None:
    ctx = module.Context(preset, device=device)
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    steps = [1 << i for i in range(ctx.params.log_n - 1)]
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=steps, row_swap=True))
    t = ctx.plain_modulus
    rng = np.random.default_rng(0)
    a = rng.integers(-50, 50, ctx.slots)
    b = rng.integers(-50, 50, ctx.slots)
    x, y = ctx.encrypt(a, pk), ctx.encrypt(b, pk)

    dot = ctx.decrypt(ctx.sum_slots(x * y), sk)[0]
    want = int(np.dot(a, b)) % t
    want = want - t if want > t // 2 else want
    poly = ctx.decrypt(x * x * 3 - x * 2 + 7, sk)
    ref = (3 * a * a - 2 * a + 7) % t
    ref = np.where(ref > t // 2, ref - t, ref)
    ok = dot == want and np.array_equal(poly, ref)
    print(
        f"{module.__name__.split('.')[-1]} {preset} on {ctx.device}: dot = {dot} (numpy {want}), "
        f"3x^2 - 2x + 7 exact: {np.array_equal(poly, ref)}, noise budget left "
        f"{ctx.noise_budget(x * x * 3 - x * 2 + 7, sk)} bits"
    )
    if not ok:
        raise SystemExit("mismatch")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="auto")
    args = ap.parse_args()
    run(bfv, "N13_t65537", args.device)
    run(bgv, "N13_t65537", args.device)


if __name__ == "__main__":
    main()
