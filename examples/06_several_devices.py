"""Several devices: independent products spread over a device set (ctx.map), and ONE product and
rotation split by rows over the same set (ctx.split), both checked word for word against one
device and decrypted against numpy.

    python examples/06_several_devices.py [--device cpu|cuda|auto]

With GPUs ("cuda", "auto" on a GPU machine) the set is every visible GPU; on the CPU it is two CPU
devices (cpu:0, cpu:1: separate backends on the same cores, which is how CI tests device sets).
"""

import argparse
import time

import numpy as np
from ember import _ember, ckks, resolve_device


def same_words(a, b) -> bool:
    return all(
        np.array_equal(a._raw.poly(i).to_numpy(), b._raw.poly(i).to_numpy())
        for i in range(a._raw.size)
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    device = resolve_device(args.device)
    gpus = [f"cuda:{g.index}" for g in _ember.cuda_devices()] if device.startswith("cuda") else []
    devices = gpus or ["cpu:0", "cpu:1"]

    # A small ring (insecure, asked for explicitly) keeps the CPU run fast; use a preset such as
    # "N16_L35" on GPUs.
    params = ckks.Params(
        log_n=12, scale_bits=40, levels=6, first_mod_bits=60, special_mods=2, insecure=True
    )
    ctx = ckks.Context(params, device=devices[0], auto_rescale=False)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1]))
    rng = np.random.default_rng(6)
    xs = [rng.uniform(-1, 1, ctx.slots) for _ in range(8)]
    ys = [rng.uniform(-1, 1, ctx.slots) for _ in range(8)]
    cx = [ctx.encrypt(x, sk) for x in xs]
    cy = [ctx.encrypt(y, sk) for y in ys]

    # Throughput: 8 independent products over the set (keys copied to each device once).
    t0 = time.perf_counter()
    products = ctx.map(lambda a, b: a * b, cx, cy, devices=devices)
    t_map = time.perf_counter() - t0
    for p, x, y in zip(products, xs, ys):
        assert np.allclose(ctx.decrypt(ctx.rescale(p), sk), x * y, atol=1e-4)

    # One operation split by rows over the set: the same words as on one device.
    sp = ctx.split(devices)
    sx, sy = sp.scatter(cx[0]), sp.scatter(cy[0])
    prod = sp.gather(sp.multiply(sx, sy))
    rot = sp.gather(sp.rotate(sx, 1))
    assert same_words(prod, cx[0] * cy[0]) and same_words(rot, cx[0].rotate(1))
    assert np.allclose(ctx.decrypt(ctx.rescale(prod), sk), xs[0] * ys[0], atol=1e-4)
    assert np.allclose(ctx.decrypt(rot, sk), np.roll(ctx.decrypt(cx[0], sk), -1), atol=1e-6)

    print(f"devices {devices}: 8 products with ctx.map in {t_map * 1e3:.1f} ms; one product and")
    print(
        f"one rotation split over {len(devices)} devices, rows {sx.rows}: same words as one device"
    )


if __name__ == "__main__":
    main()
