"""Encrypted inference of a small polynomial model with CKKS.

Encrypts a vector of features, evaluates y = sigmoid(w . x + b) slot-wise with a Chebyshev
approximation of the sigmoid, decrypts and compares with numpy.

Run: python examples/02_ckks_polynomial_model.py [--device cpu|cuda|auto]
"""

import argparse

import numpy as np
from ember import ckks
from ember.polyeval import chebyshev_coefficients


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()

    # A small ring keeps the example fast on a laptop CPU; it is below 128-bit security, so it
    # must be asked for explicitly. Use ckks.Params.preset("N14_L8") or larger for real data.
    params = ckks.Params(log_n=12, scale_bits=40, levels=8, first_mod_bits=60, insecure=True)
    ctx = ckks.Context(params, device=args.device)
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ctx.set_eval_keys(ctx.eval_keys(sk))

    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, ctx.slots)
    w, b = 2.5, -0.3
    coeffs = chebyshev_coefficients(lambda t: 1 / (1 + np.exp(-t)), 15, (-4, 4))

    ct = ctx.encrypt(x, pk)
    z = ct * w + b  # affine layer
    y = ctx.poly_eval(z, coeffs, basis="chebyshev", interval=(-4, 4))  # sigmoid
    out = ctx.decrypt(y, sk)

    expected = 1 / (1 + np.exp(-(w * x + b)))
    err = np.max(np.abs(out - expected))
    print(
        f"N={params.n}, {ctx.slots} slots on {ctx.device}: max |error| = {err:.2e} "
        f"(levels left: {y.level})"
    )
    assert err < 1e-2, "encrypted result differs from numpy"


if __name__ == "__main__":
    main()
