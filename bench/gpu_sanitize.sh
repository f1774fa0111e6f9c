#!/usr/bin/env bash
# On a GPU machine (nvcc, compute-sanitizer, no internet): NVIDIA compute-sanitizer over a bounded
# selection of the GPU equivalence suite (tests/gpu). memcheck (out-of-bounds and misaligned
# accesses, invalid frees, CUDA API errors) over every test module at small and medium sizes;
# racecheck (shared-memory hazards) and synccheck (illegal barriers) over a few tests whose
# kernels use shared memory and __syncthreads / warp shuffles. Each tool runs under a time limit
# (compute-sanitizer slows kernels 10-100x), so the whole run stays under about 9 minutes after
# the build on an H100; a tool stopped by its limit is reported as partial. Measured on an H100
# (driver 580.159.04, compute-sanitizer 2025.3.1): build 80 s, memcheck 151 tests in 57-91 s,
# racecheck 8 tests in 69 s, synccheck 3 s, 0 errors after the cluster NTT fix (the whole suite
# under memcheck did not finish in 470 s: hence the selection).
#
# Writes under the output folder ($1, default gpu-sanitize-out): build.log, one pytest log and one
# sanitizer log per tool and process (<tool>-pytest.log, <tool>.<pid>.log) and summary.txt
# ("<tool>: N errors ..." per tool, then "total errors: N"). Exit status 0 when no tool found an
# error and every selected test passed. SKIP_BUILD=1 uses the ember already installed (it should
# have been built with -lineinfo for source lines in the reports, as the build here does).
# Overrides: MEMCHECK_FILES, MEMCHECK_K (pytest -k), RACE_TESTS (node ids), MEMCHECK_LIMIT_S,
# RACECHECK_LIMIT_S, SYNCCHECK_LIMIT_S, COMPUTE_SANITIZER (path), PYTHON.
set -uo pipefail
OUT=${1:-gpu-sanitize-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.." || exit 1
PY=${PYTHON:-python3}
export EMBER_CUDA=ON PYTHONUNBUFFERED=1
CS=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
if [ ! -x "$CS" ]; then
  echo "compute-sanitizer not found: put it on PATH or set COMPUTE_SANITIZER" | tee "$OUT/summary.txt"
  exit 1
fi

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "== build (CUDA backend, -lineinfo)"
  # -lineinfo: the reports name the kernel's source line; it does not change the code generated.
  if ! SKBUILD_CMAKE_ARGS="-DCMAKE_CUDA_FLAGS=-lineinfo" \
    "$PY" -m pip install --no-build-isolation --no-deps -q . >"$OUT/build.log" 2>&1; then
    tail -40 "$OUT/build.log"
    echo "build failed" | tee "$OUT/summary.txt"
    exit 1
  fi
fi
{ "$CS" --version | tail -1; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } \
  >"$OUT/gpu.txt" 2>&1

# memcheck: every module, without the sizes and sweeps that would take hours under the tool
# (the N = 2^16 and 2^17 cases run the same kernels as the smaller ones, with larger grids; the
# every-variant and every-schedule sweeps repeat kernels covered once each elsewhere; the
# full-size presets and the paper sets are N = 2^15..2^16). The schemes' comparisons run under
# every backend option setting of tests/gpu/switches.py in-process (fused key product and tensor,
# CUDA-core conversions, ...). The forked-child test of test_gpu_hardening is left out: it forks a process that holds
# a CUDA context on purpose, which the tool need not follow.
MEMCHECK_K=${MEMCHECK_K:-"not 65536 and not 131072 and not 32768 and not full_size and not \
paper_sets and not every_variant and not every_ntt_schedule and not known_answers and not \
bootstrap_pair and not forked_child and not tune_writes"}
# The primitives first, bootstrapping (the longest test) last: a run stopped by its limit has
# checked the most kernels.
MEMCHECK_FILES=${MEMCHECK_FILES:-"tests/gpu/test_gpu_equivalence.py tests/gpu/test_gpu_ckks.py \
tests/gpu/test_gpu_bfv_bgv.py tests/gpu/test_gpu_options.py \
tests/gpu/test_gpu_hardening.py tests/gpu/test_gpu_bootstrap.py"}
# racecheck and synccheck: a few tests whose kernels share memory and synchronize (the NTTs at
# one- and several-kernel sizes, the pointwise and automorphism kernels, key switching and the
# fused tensor via a CKKS product at two parameter sets).
RACE_TESTS=${RACE_TESTS:-"tests/gpu/test_gpu_equivalence.py::test_ntt_intt[N4096x8] \
tests/gpu/test_gpu_equivalence.py::test_ntt_intt[N16384x1] \
tests/gpu/test_gpu_equivalence.py::test_pointwise_ops[N4096x8] \
tests/gpu/test_gpu_equivalence.py::test_automorphism[N4096x3] \
tests/gpu/test_gpu_ckks.py::test_multiply"}

# run_tool TOOL LIMIT_S PYTEST_ARGS...: one sanitized pytest run, its logs under $OUT.
run_tool() {
  local tool=$1 limit=$2
  shift 2
  echo "== compute-sanitizer --tool $tool (at most ${limit} s)"
  local start=$SECONDS rc
  timeout --kill-after=30 "$limit" \
    "$CS" --tool "$tool" --target-processes all --log-file "$OUT/$tool.%p.log" \
    "$PY" -m pytest -q -p no:cacheprovider "$@" >"$OUT/$tool-pytest.log" 2>&1
  rc=$?
  tail -3 "$OUT/$tool-pytest.log"
  summarize "$tool" "$rc" $((SECONDS - start))
}

# summarize TOOL RC SECONDS: appends "<tool>: N errors ..." to summary.txt. N sums the ERROR
# SUMMARY line of every process (racecheck: its RACECHECK SUMMARY's errors and warnings); a
# process stopped before printing one has its error records counted instead (lines "========= Invalid ...", "========= Potential invalid ...", ...).
summarize() {
  local tool=$1 rc=$2 secs=$3 errors=0 partial="" n f
  for f in "$OUT/$tool".*.log; do
    [ -e "$f" ] || continue
    n=$(sed -n 's/^========= ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$f" | tail -1)
    if [ -z "$n" ]; then  # racecheck's own: "RACECHECK SUMMARY: H hazards displayed (E errors, W warnings)"
      n=$(sed -n 's/^========= RACECHECK SUMMARY: .*(\([0-9]*\) errors*, \([0-9]*\) warning.*/\1 + \2/p' "$f" | tail -1)
      [ -n "$n" ] && n=$((n))
    fi
    if [ -z "$n" ]; then
      n=$(grep -cE '^========= (Potential|Invalid|Program hit|Race reported|Barrier|Uninitialized|Error|Warning)' "$f")
      partial=" (a process ended without its summary)"
    fi
    errors=$((errors + n))
  done
  local tests
  tests=$(grep -E '(passed|failed|skipped|error).* in [0-9.]+s' "$OUT/$tool-pytest.log" | tail -1)
  if ! grep -qE '[0-9]+ passed' "$OUT/$tool-pytest.log"; then
    status=1  # all skipped: no CUDA build or no visible GPU (the suite skips, it does not fail)
    partial="$partial (no test passed)"
  fi
  case $rc in
    0) ;;
    124 | 130 | 137) partial=" (stopped by its ${secs} s limit: partial)$partial" ;;
    *) status=1 ;;
  esac
  [ "$errors" -gt 0 ] && status=1
  echo "$tool: $errors errors$partial; pytest: ${tests:-no result}; ${secs} s" | tee -a "$OUT/summary.txt"
  total=$((total + errors))
}

status=0
total=0
: >"$OUT/summary.txt"
# Split on spaces without globbing (node ids hold brackets).
read -r -a memcheck_files <<<"$MEMCHECK_FILES"
read -r -a race_tests <<<"$RACE_TESTS"
run_tool memcheck "${MEMCHECK_LIMIT_S:-330}" "${memcheck_files[@]}" -k "$MEMCHECK_K"
run_tool racecheck "${RACECHECK_LIMIT_S:-150}" "${race_tests[@]}"
run_tool synccheck "${SYNCCHECK_LIMIT_S:-60}" "${race_tests[@]}"
echo "total errors: $total" | tee -a "$OUT/summary.txt"
exit $status
