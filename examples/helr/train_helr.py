"""HELR: logistic-regression training on encrypted MNIST 3-versus-8 mini-batches, the model
bootstrapped every iteration, checked against the same training in numpy.

    python examples/helr/train_helr.py [--data ../shared/data/mnist] [--device cuda]
        [--devices 1|2|4|cuda:0,cuda:1|all] [--iterations 32] [--json out.json]

On a GPU: N16_boot (128-bit secure), 14 x 14 pixels, mini-batches of 1,024, 32 iterations, as
HELR and FAB measure it. On the CPU the defaults shrink to what two cores finish in minutes: the
insecure N = 2^12 set with 6 levels between bootstraps, 7 x 7 pixels, batches of 256, 3
iterations (give --preset N16_boot --features 196 --batch 1024 for the full size).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import ember
from ember.apps.helr import small_insecure_params, train_helr

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "mnist"))
    ap.add_argument("--device", default="auto")
    ap.add_argument("--devices", default=None, help="a count, names, or 'all'")
    ap.add_argument("--iterations", type=int, default=None)
    ap.add_argument("--preset", default=None, help="a bootstrapping preset (N16_boot)")
    ap.add_argument("--features", type=int, default=None, help="pooled pixels: 196, 49, 16")
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="write the report here")
    args = ap.parse_args()
    device = ember.resolve_device(args.device)
    gpu = device.startswith("cuda")
    preset = args.preset or ("N16_boot" if gpu else small_insecure_params())
    report = train_helr(
        args.data,
        device=device,
        devices=args.devices,
        preset=preset,
        iterations=args.iterations or (32 if gpu else 3),
        batch=args.batch or (1024 if gpu else 256),
        features=args.features or (196 if gpu else 49),
        seed=args.seed,
        progress=True,
    )
    print(
        f"{report['preset']} on {', '.join(report['devices'])}: {report['features']} features, "
        f"batches of {report['batch']}, {report['iterations']} iterations\n"
        f"keys {report['keygen_seconds']:.1f} s, data encryption {report['encrypt_seconds']:.1f} s, "
        f"{report['mean_seconds_per_iteration'] * 1e3:.1f} ms per iteration\n"
        f"max |w - w_ref| over the iterations: {max(report['max_weight_difference']):.2e} "
        f"(bound {report['weight_tolerance']:g})\n"
        f"test accuracy: encrypted {report['encrypted_accuracy']:.4f}, "
        f"plaintext {report['plaintext_accuracy']:.4f}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0 if report["weights_ok"] and report["accuracy_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
