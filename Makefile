# Ember: the two commands of the README (demo, test) and the GPU verification entry point.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
OUT    ?= gpu-out

.PHONY: venv install demo test test-cpp test-python gpu-check format lint clean

$(VENV)/.ready: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "scikit-build-core>=0.10" "nanobind>=2.0" "numpy>=1.22" "pytest>=7" ruff
	touch $@

venv: $(VENV)/.ready

# Builds the package (CUDA backend too when nvcc is found; EMBER_CUDA=OFF skips it).
install: venv
	$(PIP) install -q --no-build-isolation .

demo: install
	$(VENV)/bin/ember demo

test: install test-cpp test-python

test-cpp:
	cmake -S . -B build/cpp -DEMBER_BUILD_TESTS=ON -DEMBER_CUDA=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build/cpp -j2
	cd build/cpp && ctest --output-on-failure

test-python: install
	cd tests && ../$(PY) -m pytest -q python

# On a machine with an NVIDIA GPU and nvcc (no internet needed): builds the CUDA backend, runs the
# GPU equivalence suite and the benchmarks, writes JSON and logs under $(OUT).
gpu-check:
	bash bench/gpu_check.sh $(OUT)

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp' '*.cu' '*.cuh')
	$(VENV)/bin/ruff format python tests bench examples

lint:
	$(VENV)/bin/ruff check python tests bench examples

clean:
	rm -rf build $(VENV)
