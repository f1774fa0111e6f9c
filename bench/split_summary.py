"""Prints one line per parameter set and device count of an `ember bench split` JSON file."""

import json
import sys

with open(sys.argv[1]) as f:
    d = json.load(f)
for r in d["results"]:
    print(
        f"{r['set']}: one device mul {r['multiply_relin_ms']:.3f} ms, rot {r['rotate_ms']:.3f} ms, host issue of a mul {r['multiply_relin_issue_ms']:.3f} ms"
    )
    for s in r["splits"]:
        ok = s["multiply_bit_identical"] and s["rotate_bit_identical"]
        print(
            f"  {s['devices']} dev ({s['exchange']}): mul {s['multiply_relin_ms']:.3f} ms"
            f" x{s['multiply_relin_speedup']:.2f} (latency x{s['multiply_relin_latency_speedup']:.2f})"
            f"  rot {s['rotate_ms']:.3f} ms x{s['rotate_speedup']:.2f}"
            f" (latency x{s['rotate_latency_speedup']:.2f})  issue {s['multiply_relin_issue_ms']:.3f} ms"
            f"  bit-identical {ok}"
        )
