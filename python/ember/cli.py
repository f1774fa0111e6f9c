"""The ``ember`` command line: info, demo, bench, tune, compile, run, apps."""

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

    if args.what == "report":
        from .report import make_report

        if not args.out:
            raise ember.ParameterError("ember bench report needs --out DIR")
        suites = [s for s in (args.run or "").split(",") if s]
        path = make_report(args.out, args.inputs, suites, device=args.device, quick=args.quick)
        print(f"wrote {path}")
        return 0
    if args.inputs:
        raise ember.ParameterError("input files are for ember bench report only")
    if args.what == "apps":
        from .apps.bench import bench_apps

        results = bench_apps(
            device=args.device,
            devices=args.devices if args.devices != "all" else "1,2,4",
            preset=args.preset,
            programs=args.programs,
            quick=args.quick,
            precompiled=args.circuits_from,
            modes=args.modes,
        )
        return _print_json(results, args.json)
    devices = args.devices.split(",") if args.devices and args.devices != "all" else args.devices
    results = run_bench(
        args.what,
        device=args.device,
        quick=args.quick,
        prime_bits=args.prime_bits,
        devices=devices,
        circuit=args.circuit,
        function=args.function,
        params=args.params,
    )
    return _print_json(results, args.json)


def _print_json(results, path) -> int:
    text = json.dumps(results, indent=1)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


def cmd_tune(args) -> int:
    from .ntt_tune import tune

    device = ember.resolve_device(args.device)
    table = tune(device, quick=args.quick, progress=lambda m: print(m, file=sys.stderr))
    text = json.dumps(table, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
        print(
            f"wrote {args.out}: apply it with "
            f"ember.set_backend_options({device!r}, ntt_table={args.out!r}), or build it in "
            "with bench/make_ntt_table.py",
            file=sys.stderr,
        )
    else:
        print(text)
    return 0


def cmd_compile(args) -> int:
    import time

    from .compiler import compile_c

    t0 = time.perf_counter()
    circ = compile_c(
        args.source, args.function, keep_dir=args.keep, three_input_gates=not args.two_input_gates
    )
    seconds = time.perf_counter() - t0
    out = args.output or f"{args.function}.circuit"
    circ.save(out)
    stats = circ.stats()
    stats["compile_seconds"] = round(seconds, 3)
    stats["yosys_seconds"] = round(circ.compile_info["yosys_seconds"], 3)
    stats["inputs"] = {p.name: _port_text(p) for p in circ.inputs}
    stats["outputs"] = {p.name: _port_text(p) for p in circ.outputs}
    print(json.dumps(stats, indent=1))
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _port_text(p) -> str:
    t = f"{'' if p.signed else 'u'}int{p.width}" if p.width > 1 else "bool"
    return t + "".join(f"[{d}]" for d in p.shape)


def cmd_run(args) -> int:
    import time

    import numpy as np

    from . import cggi
    from .circuit import Circuit

    circ = Circuit.load(args.circuit)
    try:
        inputs = json.loads(args.inputs)
    except json.JSONDecodeError as e:
        raise ember.ParameterError(f"--inputs is not JSON: {e}") from None
    if not isinstance(inputs, dict):
        raise ember.ParameterError("--inputs must be a JSON object such as '{\"a\": [1, 2]}'")
    params = cggi.Params.preset(args.params, insecure=args.params.endswith("insecure"))
    ctx = cggi.Context(params, device=args.device)
    t0 = time.perf_counter()
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=not args.no_progress)
    t1 = time.perf_counter()
    ins = circ.encrypt_inputs(ctx, ck, **inputs)
    t2 = time.perf_counter()
    devices = args.devices.split(",") if args.devices and args.devices != "all" else args.devices
    outs = circ.run(ctx, sk, ins, devices=devices, mode=args.mode, progress=not args.no_progress)
    t3 = time.perf_counter()
    res = circ.decrypt_outputs(ctx, ck, outs)
    t4 = time.perf_counter()
    plain = circ.evaluate(**inputs)
    ok = all(np.array_equal(np.asarray(res[k]), np.asarray(plain[k])) for k in plain)
    stats = circ.stats()
    report = {
        "outputs": {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in res.items()},
        "matches_plaintext_evaluation": ok,
        "device": ctx.device,
        "params": args.params,
        "gates": stats["gates"],
        "bootstraps": stats["bootstraps"],
        "depth": stats["depth"],
        "seconds": {
            "keys": round(t1 - t0, 3),
            "encrypt": round(t2 - t1, 3),
            "run": round(t3 - t2, 3),
            "decrypt": round(t4 - t3, 3),
        },
        "bootstraps_per_second": round(stats["bootstraps"] / max(t3 - t2, 1e-9), 1),
        "run": {
            k: circ.last_run_stats[k]
            for k in ("device_names", "mode", "launches", "cross_device_copies", "spilled")
        },
    }
    print(json.dumps(report, indent=1))
    return 0 if ok else 1


def cmd_apps(args) -> int:
    from .apps import APPS
    from .apps.flows import FLOWS, run_cnn_app, run_helr_app, run_mnist_fhe, run_transcipher_app
    from .apps.runner import run_app

    if args.apps_command == "compile":
        from .apps.runner import export_apps

        names = list(APPS) if args.names == ["all"] else args.names
        for name, gates, seconds in export_apps(names, args.out):
            print(
                f"{name:14} {gates:>9} gates  compiled in {seconds} s -> {args.out}/{name}.circuit"
            )
        return 0
    if args.apps_command == "list":
        for name, app in APPS.items():
            print(
                f"{name:14} {'ci   ' if app.ci else 'bench'} {app.source}:{app.function}: {app.summary}"
            )
        for name, fn in FLOWS.items():
            print(f"{name:14} flow  {fn.__doc__.strip().splitlines()[0]}")
        return 0
    progress = not args.no_progress
    if args.name == "mnist_fhe":
        preset = args.preset or "int4_128"
        report = run_mnist_fhe(
            args.device, preset, args.images, progress, data_dir=args.data, batch=args.batch
        )
    elif args.name == "helr":
        report = run_helr_app(args.device, args.devices, args.data, args.iterations, progress)
    elif args.name == "cnn":
        report = run_cnn_app(args.device, args.devices, args.data, args.mode, args.images, progress)
    elif args.name == "transcipher":
        report = run_transcipher_app(
            args.device,
            args.devices,
            args.preset or "bool_128",
            args.blocks,
            args.seed,
            progress,
            precompiled=args.circuits_from,
        )
    else:
        report = run_app(
            args.name,
            device=args.device,
            devices=args.devices,
            preset=args.preset or "bool_128",
            seed=args.seed,
            progress=progress,
            precompiled=args.circuits_from,
        )
    _print_json(report, args.json)
    return 0 if report["ok"] else 1


def add_device_option(parser, what: str = "cpu, cpu:N, cuda, cuda:N or auto") -> None:
    """--device, whose absence (None) means the library's default device (issue 31)."""
    parser.add_argument(
        "--device", default=None, help=f"{what} (default: $EMBER_DEVICE, else auto)"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="ember", description="Ember FHE command line")
    parser.add_argument("--version", action="version", version=f"ember {ember.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="version, backends, visible GPUs").set_defaults(fn=cmd_info)
    demo = sub.add_parser("demo", help="the flagship demo (GPU if present)")
    add_device_option(demo)
    demo.set_defaults(fn=cmd_demo)
    bench = sub.add_parser("bench", help="benchmarks; prints JSON")
    bench.add_argument(
        "what",
        choices=[
            "ntt",
            "ntt32",
            "ckks",
            "ckks32",
            "boot",
            "bfv",
            "bgv",
            "cggi",
            "heaan",
            "multi",
            "split",
            "dist",
            "circuit",
            "apps",
            "report",
        ],
    )
    bench.add_argument(
        "--inputs",
        nargs="+",
        default=[],
        help="report: Ember's bench JSON files and peers' JSON-lines files (or folders of them) "
        "measured in the same run",
    )
    bench.add_argument("--out", default=None, help="report: the folder for report.md and PNGs")
    bench.add_argument(
        "--run",
        default=None,
        help="report: suites to run first, e.g. ntt,ckks,boot,bfv,bgv,cggi (their JSON goes to "
        "OUT/raw)",
    )
    add_device_option(bench)
    bench.add_argument(
        "--devices",
        default="all",
        help="multi, split, dist and circuit: 'all' (every GPU) or a comma-separated list such as "
        "cpu:0,cpu:1; apps: device counts such as 1,2,4 (those that exist run)",
    )
    bench.add_argument(
        "--circuit",
        default=None,
        help="circuit only: a .circuit file or a C file (default: "
        "examples/circuits/compiled/dot500.circuit when it exists, else a shorter dot product)",
    )
    bench.add_argument("--function", default="dot", help="circuit only: the C file's function")
    bench.add_argument(
        "--params",
        default=None,
        help="circuit: CGGI preset (default bool_128 on GPUs, test_insecure on the CPU); heaan: "
        "HEAAN preset (default N16_logQ1200 on GPUs, N14_logQ300 on the CPU); boot: CKKS preset "
        "(default N16_boot on GPUs, N12_boot_insecure on the CPU; N16_boot32: 32-bit words)",
    )
    bench.add_argument(
        "--preset", default="bool_128", help="apps: the CGGI preset (test_insecure for smoke runs)"
    )
    bench.add_argument(
        "--programs", default=None, help="apps: a comma-separated list (see ember apps list)"
    )
    bench.add_argument(
        "--circuits-from",
        default=None,
        help="apps: a folder of compiled programs (ember apps compile --out), used as they are",
    )
    bench.add_argument(
        "--modes",
        default="dataflow",
        help="apps: the scheduler modes to time, comma-separated (wave, dataflow)",
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
    add_device_option(tune, "the GPU to tune: cuda or cuda:N")
    tune.add_argument("--out", default=None, help="write the table to this file (else stdout)")
    tune.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    tune.set_defaults(fn=cmd_tune)
    comp = sub.add_parser("compile", help="compile a C function to a circuit; prints statistics")
    comp.add_argument("source", help="the C file")
    comp.add_argument("--function", "-f", required=True, help="the function to compile")
    comp.add_argument(
        "--two-input-gates",
        action="store_true",
        help="map to two-input gates and MUX only (no MAJ / XOR3 three-input gates)",
    )
    comp.add_argument(
        "-o", "--output", default=None, help="circuit file (default <function>.circuit)"
    )
    comp.add_argument("--keep", default=None, help="keep the Verilog and netlist in this folder")
    comp.set_defaults(fn=cmd_compile)
    run = sub.add_parser(
        "run", help="encrypt inputs, run a circuit, decrypt; prints outputs, timing"
    )
    run.add_argument("circuit", help="a file written by ember compile")
    run.add_argument("--inputs", required=True, help='JSON object, e.g. \'{"a": [1, 2], "x": 3}\'')
    add_device_option(run)
    run.add_argument(
        "--params",
        default="test_insecure",
        help="CGGI preset (default test_insecure: fast, NOT secure; bool_128 for 128-bit security)",
    )
    run.add_argument(
        "--devices",
        default=None,
        help="where the gates run: 'all' (every GPU) or a comma-separated list such as "
        "cuda:0,cuda:1 (default: --device)",
    )
    run.add_argument("--mode", choices=["wave", "dataflow"], default="dataflow")
    run.add_argument("--no-progress", action="store_true", help="no progress bars")
    run.set_defaults(fn=cmd_run)
    apps = sub.add_parser("apps", help="ARCTYREX's applications (examples/circuits)")
    apps_sub = apps.add_subparsers(dest="apps_command", required=True)
    apps_sub.add_parser("list", help="the applications").set_defaults(fn=cmd_apps)
    acomp = apps_sub.add_parser(
        "compile", help="compile (cached) and write <name>.circuit files for another machine"
    )
    acomp.add_argument("names", nargs="+", help="applications (ember apps list), or all")
    acomp.add_argument("--out", required=True, help="the folder to write")
    acomp.set_defaults(fn=cmd_apps)
    arun = apps_sub.add_parser(
        "run", help="compile (cached), check natively, run encrypted, decrypt; prints JSON"
    )
    arun.add_argument("name", help="an application (ember apps list)")
    add_device_option(arun)
    arun.add_argument(
        "--devices", default=None, help="several devices: a count (2) or names (cuda:0,cuda:1)"
    )
    arun.add_argument(
        "--preset",
        default=None,
        help="CGGI preset (default bool_128; int4_128 for mnist_fhe; test_insecure: fast, "
        "NOT secure)",
    )
    arun.add_argument("--seed", type=int, default=None, help="seed of the example inputs")
    arun.add_argument(
        "--images", type=int, default=1, help="mnist_fhe: the first N test images to classify"
    )
    arun.add_argument(
        "--data",
        default=None,
        help="mnist_fhe, helr, cnn: the MNIST folder (IDX files; mnist_fhe's default: the 100 "
        "images shipped; helr and cnn: $EMBER_MNIST, else ../shared/data/mnist)",
    )
    arun.add_argument("--batch", type=int, default=16, help="mnist_fhe: images a server call")
    arun.add_argument(
        "--iterations", type=int, default=None, help="helr: iterations (32 on GPUs, 3 on CPUs)"
    )
    arun.add_argument(
        "--mode",
        choices=["single", "packed"],
        default="single",
        help="cnn: one image per ciphertext set, or the same pixel of many images per ciphertext",
    )
    arun.add_argument(
        "--circuits-from",
        default=None,
        help="a folder of compiled programs (ember apps compile --out), used as they are",
    )
    arun.add_argument("--blocks", type=int, default=1, help="transcipher: AES blocks")
    arun.add_argument("--json", default=None, help="also write the report to this file")
    arun.add_argument("--no-progress", action="store_true", help="no progress bars")
    arun.set_defaults(fn=cmd_apps)
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except ember.Error as e:
        print(f"ember: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
