#!/usr/bin/env bash
# On a GPU machine (nvcc, no internet): build the CUDA backend, run the CPU and GPU suites and the
# benchmarks, and write logs and JSON under the output folder ($1, default gpu-out).
set -uo pipefail
OUT=${1:-gpu-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
status=0
export EMBER_CUDA=ON PYTHONUNBUFFERED=1
step() { echo "== $*"; }

step build
if ! $PY -m pip install --no-build-isolation --no-deps -q . >"$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; echo "build failed"; exit 1
fi
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv \
  >"$OUT/gpu.txt" 2>&1
$PY -m ember.cli info | tee -a "$OUT/gpu.txt"

step "GPU equivalence suite (tests/gpu)"
$PY -m pytest -q -p no:cacheprovider tests/gpu --junitxml="$OUT/gpu-tests.xml" 2>&1 | tail -25 \
  || status=1
step "CPU suite (tests/python)"
(cd tests && $PY -m pytest -q -p no:cacheprovider python 2>&1 | tail -5) || status=1

step "benchmarks"
$PY -m ember.cli bench ntt --device cuda --json "$OUT/bench_ntt.json" >/dev/null || status=1
if [ -x .peers/phantom_ntt_bench ]; then
  .peers/phantom_ntt_bench >"$OUT/phantom_ntt.jsonl" 2>"$OUT/phantom_ntt.log" || status=1
fi
$PY bench/compare_ntt.py "$OUT/bench_ntt.json" "$OUT/phantom_ntt.jsonl" | tee "$OUT/ntt_table.md"
$PY -m ember.cli bench ckks --device cuda --json "$OUT/bench_ckks.json" >/dev/null || status=1
# Collectives over every GPU (NCCL where compiled in, and the peer-to-peer copies) on 2+ GPUs.
if [ "$($PY -c 'import ember; print(len(ember._ember.cuda_devices()))')" -ge 2 ]; then
  $PY -m ember.cli bench dist --json "$OUT/bench_dist.json" >/dev/null || status=1
fi
# Peers, when their binaries / wheels were brought along (never built or committed here).
if [ -x .peers/phantom_ckks_bench ]; then
  .peers/phantom_ckks_bench >"$OUT/phantom_ckks.jsonl" 2>"$OUT/phantom_ckks.log" || status=1
fi
if ls .whl/desilofhe*.whl >/dev/null 2>&1 && [ -f .peers/desilo_ckks_bench.py ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --target /tmp/ember-peers .whl/*.whl &&
    PYTHONPATH=/tmp/ember-peers $PY .peers/desilo_ckks_bench.py --configs 16:4 \
      >"$OUT/desilo_ckks.jsonl" 2>"$OUT/desilo_ckks.log" || status=1
fi
$PY bench/compare_ckks.py "$OUT/bench_ckks.json" "$OUT/phantom_ckks.jsonl" "$OUT/desilo_ckks.jsonl" \
  | tee "$OUT/ckks_table.md"
$PY -m ember.cli bench boot --device cuda --json "$OUT/bench_boot.json" >/dev/null || status=1
if ls .whl/desilofhe*.whl >/dev/null 2>&1 && [ -f .peers/desilo_boot_bench.py ]; then
  PYTHONPATH=/tmp/ember-peers $PY .peers/desilo_boot_bench.py \
    >"$OUT/desilo_boot.jsonl" 2>"$OUT/desilo_boot.log" || status=1
fi
$PY bench/compare_boot.py "$OUT/bench_boot.json" "$OUT/desilo_boot.jsonl" | tee "$OUT/boot_table.md"
for scheme in bfv bgv; do
  $PY -m ember.cli bench $scheme --device cuda --json "$OUT/bench_$scheme.json" >/dev/null || status=1
done
if [ -x .peers/phantom_bfv_bgv_bench ]; then
  .peers/phantom_bfv_bgv_bench >"$OUT/phantom_bfv_bgv.jsonl" 2>"$OUT/phantom_bfv_bgv.log" || status=1
fi
for scheme in bfv bgv; do
  $PY bench/compare_integer.py "$OUT/bench_$scheme.json" "$OUT/phantom_bfv_bgv.jsonl" \
    | tee "$OUT/${scheme}_table.md"
done
exit $status
