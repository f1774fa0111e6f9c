#!/usr/bin/env bash
# On a machine with several GPUs (nvcc, no internet): build the CUDA backend, run the GPU suite on
# cuda:0 and again against cuda:1 (moves between GPUs included), the multi-GPU benchmarks (independent
# operations, one split operation) and the collectives' benchmark;
# logs and JSON under the output folder ($1, default gpu-out).
set -uo pipefail
OUT=${1:-gpu-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PY=${PYTHON:-python3}
status=0
export EMBER_CUDA=ON PYTHONUNBUFFERED=1
step() { echo "== $*"; }

step build
if ! $PY -m pip install --no-build-isolation --no-deps -q . >"$OUT/build.log" 2>&1; then
  grep -E "error" "$OUT/build.log" | head -30; echo "build failed"; exit 1
fi
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
nvidia-smi topo -m >>"$OUT/gpu.txt" 2>&1

step "GPU suite on cuda:0"
$PY -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -4 | tee "$OUT/tests_gpu_cuda0.txt" || status=1
step "GPU suite against cuda:1"
EMBER_EQUIV_DEVICE=cuda:1 $PY -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -4 |
  tee "$OUT/tests_gpu_cuda1.txt" || status=1

step "benchmark: independent multiplications over 1, 2, 4 GPUs"
(cd /tmp && $PY -m ember.cli bench multi --devices all --json "$OUT/bench_multi.json" \
  >/dev/null) || status=1
$PY - "$OUT/bench_multi.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    print(f"{r['set']:14s} {r['devices']} GPU  8 ops {r['strong_ms']:7.2f} ms  x{r['strong_speedup']:.2f}"
          f"   8/GPU {r['weak_ms']:7.2f} ms  x{r['weak_throughput_ratio']:.2f}"
          f"   moved {r['strong_moved_ms']:7.2f} ms  x{r['strong_moved_speedup']:.2f}")
PYEOF
step "benchmark: one multiplication and one rotation split over 1, 2, 4 GPUs"
(cd /tmp && $PY -m ember.cli bench split --devices all --json "$OUT/bench_split.json" \
  >/dev/null) || status=1
$PY bench/split_summary.py "$OUT/bench_split.json"
step "benchmark: collectives (NCCL and copy)"
$PY -c "import ember.dist as d; print('nccl compiled in:', d.nccl_available())" | tee -a "$OUT/gpu.txt"
(cd /tmp && $PY -m ember.cli bench dist --json "$OUT/bench_dist.json" >/dev/null) || status=1
exit $status
