"""Deep computation with CKKS bootstrapping: iterate the logistic map x -> 3.2 x (1 - x) on
encrypted values for more multiplications than the parameters have levels, refreshing the
ciphertext with ctx.bootstrap whenever it runs out, and compare with numpy.

    python examples/04_ckks_bootstrapping.py [--device cpu|cuda|auto]

On a GPU it uses N16_boot (N = 2^16, 128-bit secure); on the CPU the small insecure
N12_boot_insecure ring, which runs the same circuit in seconds.
"""

import argparse
import time

import ember
import numpy as np
from ember import ckks


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="auto")
    ap.add_argument("--steps", type=int, default=6)
    args = ap.parse_args()
    device = ember.resolve_device(args.device)
    preset = "N12_boot_insecure" if device == "cpu" else "N16_boot"
    ctx = ckks.Context(preset, device=device)
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    t0 = time.perf_counter()
    ctx.set_eval_keys(ctx.eval_keys(sk, bootstrap=True))
    usable = ctx.max_level - ctx.min_bootstrap_level
    print(
        f"{preset} on {device}: {ctx.slots} slots, {usable} levels between bootstraps, keys in "
        f"{time.perf_counter() - t0:.1f} s"
    )

    x0 = np.random.default_rng(0).uniform(0.2, 0.8, ctx.slots)
    ct, want = ctx.encrypt(x0, pk), x0.copy()
    boots = 0
    for _ in range(args.steps):
        # One logistic step costs two levels; bootstrapping needs min_bootstrap_level left.
        if ct.level < ctx.min_bootstrap_level + 2:
            t0 = time.perf_counter()
            ct = ctx.bootstrap(ct)
            boots += 1
            print(
                f"  bootstrap {boots}: {1e3 * (time.perf_counter() - t0):.0f} ms, back to "
                f"level {ct.level}"
            )
        ct = (ct * (1 - ct)) * 3.2
        want = 3.2 * want * (1 - want)
    err = np.abs(ctx.decrypt(ct, sk) - want)
    print(
        f"{args.steps} logistic steps, {boots} bootstraps: max error {err.max():.2e} "
        f"(values in [0, 1]; each step multiplies earlier errors by up to 3.2)"
    )
    return 0 if boots > 0 and err.max() < 1e-3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
