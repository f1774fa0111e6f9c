"""linear_combinations (the backend's linear_map: a matrix of small integer weights applied to
ciphertexts in one pass) on the GPU equals the CPU backend word for word: BGV in evaluation
form and BFV in coefficient form, output counts that do not fill the kernel's tile of 8, input
counts across its stages of 32, weights and constants of any size.

Skipped without a GPU by this directory's conftest; EMBER_EQUIV_DEVICE=cpu runs it CPU against CPU.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ember import bfv, bgv, ring

KEY = bytes(32)


def side(module, device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = module.Params(
            log_n=11, plain_modulus=65537, q_bits=(50, 50, 50), special_bits=(55,), insecure=True
        )
    ctx = module.Context(p, device=device)
    ctx._sampler = ring.Sampler(KEY)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk))
    return ctx, sk


@pytest.mark.parametrize("module", [bgv, bfv], ids=["bgv", "bfv"])
@pytest.mark.parametrize("outputs,inputs", [(1, 1), (13, 70), (100, 33)])
def test_linear_map_bit_identical(gpu, module, outputs, inputs):
    rng = np.random.default_rng(outputs * 1000 + inputs)
    values = rng.integers(-500, 500, (inputs, 2048))
    w = rng.integers(-127, 128, (outputs, inputs))
    w[0, 0] = 2**40 + 3
    consts = [int(k) for k in rng.integers(-(2**40), 2**40, outputs)]
    results = {}
    for device in ("cpu", gpu):
        ctx, sk = side(module, device)
        cts = [ctx.encrypt(v, sk) for v in values]
        if module is bgv:
            cts = [c * c for c in cts]  # a lower level and a plaintext factor
        out = ctx.linear_combinations(cts, w, consts)
        results[device] = [[o._raw.poly(i).to_numpy() for i in range(2)] for o in out]
        results[device + "_decrypted"] = [ctx.decrypt(o, sk) for o in out]
    for j in range(outputs):
        for i in range(2):
            np.testing.assert_array_equal(
                results[gpu][j][i], results["cpu"][j][i], err_msg=f"output {j} poly {i}"
            )
        np.testing.assert_array_equal(results[gpu + "_decrypted"][j], results["cpu_decrypted"][j])
