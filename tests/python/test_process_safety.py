"""Randomness and threads across fork(): children of one parent never share an encryption stream,
and nothing hangs in a forked child (issue 25, item 1)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import ring
from isolated import run_python

# Each scenario runs in its own interpreter under a timeout: a deadlock fails the test instead of
# hanging the suite.
_FORK_TWO_CHILDREN = """
import os, sys
import numpy as np
from ember import {scheme}

ctx = {scheme}.Context({preset!r}, device="cpu")
sk = ctx.keygen()
pk = ctx.public_key(sk)
ctx.encrypt(np.arange(8), pk)  # the parent runs parallel CPU work (OpenMP) before forking

blobs = []
for i in range(2):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        ct = ctx.encrypt(np.full(8, i + 1), {key})
        with os.fdopen(w, "wb") as f:
            f.write(ct.to_bytes())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        blobs.append(f.read())
    _, status = os.waitpid(pid, 0)
    assert status == 0, status

a, b = (ctx.ciphertext_from_bytes(x) for x in blobs)
same_c1 = np.array_equal(a._raw.poly(1).to_numpy(), b._raw.poly(1).to_numpy())
va, vb = ctx.decrypt(a, sk)[:8], ctx.decrypt(b, sk)[:8]
print("SAME_C1" if same_c1 else "DIFFERENT_C1")
assert np.allclose(va, 1, atol=1e-3) and np.allclose(vb, 2, atol=1e-3), (va, vb)
print("DECRYPTED")
"""


def _run(code: str) -> str:
    return run_python(code, hang="the forked scenario hung (deadlock after fork)")


@pytest.mark.parametrize(
    "scheme,preset",
    [("bfv", "N12_t65537"), ("bgv", "N13_t65537"), ("ckks", "N13_L3")],
)
@pytest.mark.parametrize("key", ["pk", "sk"])
def test_forked_children_draw_different_randomness(scheme, preset, key):
    out = _run(_FORK_TWO_CHILDREN.format(scheme=scheme, preset=preset, key=key))
    assert "DIFFERENT_C1" in out and "DECRYPTED" in out


def test_multiprocessing_fork_pool_does_not_hang():
    out = _run(
        """
        import multiprocessing as mp
        import numpy as np
        from ember import ckks

        ctx = ckks.Context("N13_L3", device="cpu")
        sk = ctx.keygen()
        pk = ctx.public_key(sk)
        ctx.set_eval_keys(ctx.eval_keys(sk))
        x = ctx.encrypt(np.linspace(-1, 1, 16), pk)

        def square(i):
            y = ctx.encrypt(np.full(16, float(i)), pk)
            return (y * y).to_bytes()

        if __name__ == "__main__":
            with mp.get_context("fork").Pool(2) as pool:
                blobs = pool.map(square, [1, 2, 3, 4])
            got = [ctx.decrypt(ctx.ciphertext_from_bytes(b), sk)[:16] for b in blobs]
            for i, v in enumerate(got, start=1):
                assert np.allclose(v, i * i, atol=1e-3), (i, v[:4])
            c1 = [ctx.ciphertext_from_bytes(b)._raw.poly(1).to_numpy() for b in blobs]
            assert not any(np.array_equal(c1[i], c1[j]) for i in range(4) for j in range(i))
            print("OK")
        """
    )
    assert "OK" in out


def test_fork_generation_counts_forks():
    out = _run(
        """
        import os
        from ember import _ember

        parent = _ember.fork_generation()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(w, str(_ember.fork_generation()).encode())
            os._exit(0)
        os.close(w)
        child = int(os.read(r, 64))
        os.waitpid(pid, 0)
        assert (parent, child) == (0, 1), (parent, child)
        assert _ember.fork_generation() == 0
        print("OK")
        """
    )
    assert "OK" in out


def test_fixed_key_sampler_stays_deterministic_after_fork():
    # Fixed keys exist for tests and known answers: a fork must not change their stream.
    out = _run(
        """
        import os
        import numpy as np
        from ember import ring

        ctx, basis = ring.make_ring(64, ring.generate_ntt_primes(40, 64, 2))
        sampler = ring.Sampler(bytes(range(32)), 7)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(w, sampler.uniform(basis).to_numpy().tobytes())
            os._exit(0)
        os.close(w)
        child = b""
        while chunk := os.read(r, 1 << 16):
            child += chunk
        os.waitpid(pid, 0)
        assert child == sampler.uniform(basis).to_numpy().tobytes()
        print("OK")
        """
    )
    assert "OK" in out


def test_set_num_threads_gives_identical_words():
    _, basis = ring.make_ring(1 << 12, ring.generate_ntt_primes(50, 1 << 12, 6))
    before = ember.num_threads()
    try:
        results = []
        for threads in (1, 2, 0):
            ember.set_num_threads(threads)
            assert ember.num_threads() == (threads or before)
            p = ring.Sampler(bytes(32), 3).uniform(basis, form="coeff")
            results.append(p.ntt().to_numpy())
        assert all(np.array_equal(results[0], r) for r in results[1:])
    finally:
        ember.set_num_threads(0)


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True, None])
def test_set_num_threads_refuses_bad_counts(bad):
    with pytest.raises(ember.ParameterError, match="thread count"):
        ember.set_num_threads(bad)
