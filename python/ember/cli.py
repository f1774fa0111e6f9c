"""The ``ember`` command line: info, demo, bench, tune."""

from __future__ import annotations

import argparse
import json
import sys

import ember


def cmd_info(_args) -> int:
    print(f"ember {ember.__version__}")
    print(f"backends: {', '.join(ember.backends())}")
    print(f"nccl: {'compiled in' if ember._ember.nccl_compiled() else 'no'}")
    gpus = [d for d in ember.devices() if d.kind == "cuda"]
    if not gpus:
        print("gpus: none visible")
    for d in gpus:
        print(
            f"gpu {d.index}: {d.name}, {d.memory / 2**30:.1f} GiB, "
            f"compute capability {d.compute_capability}"
        )
    return 0


def cmd_demo(args) -> int:
    from . import demo

    return demo.main(device=args.device)


def cmd_bench(args) -> int:
    from .bench import run_bench

    devices = args.devices.split(",") if args.devices and args.devices != "all" else args.devices
    results = run_bench(
        args.what,
        device=args.device,
        quick=args.quick,
        prime_bits=args.prime_bits,
        devices=devices,
    )
    text = json.dumps(results, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


def cmd_tune(args) -> int:
    from .ntt_tune import tune

    table = tune(args.device, quick=args.quick, progress=lambda m: print(m, file=sys.stderr))
    text = json.dumps(table, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
        print(
            f"wrote {args.out}: apply it with "
            f"ember.set_backend_options({args.device!r}, ntt_table={args.out!r}), or build it in "
            "with bench/make_ntt_table.py",
            file=sys.stderr,
        )
    else:
        print(text)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="ember", description="Ember FHE command line")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="version, backends, visible GPUs").set_defaults(fn=cmd_info)
    demo = sub.add_parser("demo", help="the flagship demo (GPU if present)")
    demo.add_argument("--device", default="auto")
    demo.set_defaults(fn=cmd_demo)
    bench = sub.add_parser("bench", help="benchmarks; prints JSON")
    bench.add_argument(
        "what", choices=["ntt", "ckks", "boot", "bfv", "bgv", "cggi", "multi", "split", "dist"]
    )
    bench.add_argument("--device", default="auto")
    bench.add_argument(
        "--devices",
        default="all",
        help="multi, split and dist: 'all' (every GPU) or a comma-separated list such as cpu:0,cpu:1",
    )
    bench.add_argument("--json", default=None, help="also write the JSON to this file")
    bench.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    bench.add_argument(
        "--prime-bits",
        type=int,
        default=50,
        help="ntt only: bits of the primes (up to 50 run on the FP64 path, above on the integer one)",
    )
    bench.set_defaults(fn=cmd_bench)
    tune = sub.add_parser(
        "tune", help="measure the NTT schedules on this GPU and write its autotune table (JSON)"
    )
    tune.add_argument("--device", default="cuda")
    tune.add_argument("--out", default=None, help="write the table to this file (else stdout)")
    tune.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    tune.set_defaults(fn=cmd_tune)
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except ember.Error as e:
        print(f"ember: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
