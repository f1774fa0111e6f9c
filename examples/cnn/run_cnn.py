"""HE-Booster's encrypted MNIST CNN in one command: encrypts test images, runs the network on the
ciphertexts (BGV, CRT over plaintext moduli), decrypts, and checks the scores against the
quantized plaintext model.

    python examples/cnn/run_cnn.py [--device cpu|cuda] [--devices cuda:0,cuda:1]
        [--mode single|packed] [--images 1] [--preset N14|test] [--data DIR] [--bench 1,2,4]

--bench runs ember.apps.cnn.bench_cnn instead (one-image latency and packed throughput per
device count) and prints its JSON.
"""

from __future__ import annotations

import argparse
import json

from ember.apps import cnn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--devices", default=None, help="comma-separated device names")
    ap.add_argument("--mode", choices=["single", "packed"], default="single")
    ap.add_argument("--images", type=int, default=1)
    ap.add_argument("--preset", choices=list(cnn.PRESETS), default="N14")
    ap.add_argument("--data", default=None, help="MNIST folder (default: $EMBER_MNIST)")
    ap.add_argument("--bench", default=None, help="device counts, e.g. 1,2,4")
    ap.add_argument("--packed-images", type=int, default=None)
    ap.add_argument("--json", default=None, help="also write the result here")
    args = ap.parse_args()
    if args.bench:
        result = cnn.bench_cnn(
            device=args.device,
            devices=args.bench,
            data_dir=args.data,
            packed_images=args.packed_images,
            preset=args.preset,
            progress=True,
        )
    else:
        devices = args.devices.split(",") if args.devices else None
        result = cnn.run_cnn(
            args.data,
            device=args.device,
            devices=devices,
            mode=args.mode,
            images=args.images,
            preset=args.preset,
            progress=True,
        )
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    if not all(v for k, v in _flags(result)):
        raise SystemExit("the encrypted scores differ from the plaintext model's")


def _flags(result: dict):
    rows = result.get("rows", [result])
    for r in rows:
        for k in ("scores_equal", "single_equal", "packed_equal"):
            if k in r:
                yield k, r[k]


if __name__ == "__main__":
    main()
