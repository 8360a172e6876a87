# The two commands a fresh machine needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.ndp-installed
WARM := $(VENV)/.ndp-kernels-cached
WARM_DEVICE := $(VENV)/.ndp-device-apps-cached
DATA := data
SF ?= 0.1

.PHONY: install demo test bench sanitize clean gpu gpu-wheels

install: $(WARM)

# Re-install whenever the build inputs change.
$(INSTALLED): pyproject.toml setup.py $(wildcard ndp_core/src/*)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

# Compile the reader's kernels once (and again when they change) so every later
# process loads them from Numba's on-disk cache. Numba keys a cached kernel on its
# own file only, so a constant changed in a module it imports (a status, a layout
# word) would leave it stale: any change recompiles them all. The warm-up also builds the startup
# library (arrow_bridge/startup.py: a small read's kernels, compiled ahead of time), from the same
# sources (startup.KERNEL_SOURCES lists them too).
KERNEL_SOURCES := $(wildcard arrow_bridge/*/*.py ndp_core/*.py ndp_core/src/* \
                  $(addprefix arrow_bridge/,transcoding.py line_filters.py column_finish.py preamble.py jit.py startup.py))
$(WARM): $(INSTALLED) $(KERNEL_SOURCES)
	find arrow_bridge -name '*.nbi' -delete -o -name '*.nbc' -delete
	$(PY) -m arrow_bridge.warmup
	touch $@

# The device-side StorageApps (about half the compile time) compile on the first device= read;
# the tests compile them up front instead, once, rather than in several processes at a time.
$(WARM_DEVICE): $(WARM)
	$(PY) -m arrow_bridge.warmup --device
	touch $@

$(DATA)/lineitem-sf$(SF).csv: $(WARM)
	$(PY) -m benchmarks.datasets lineitem --scale-factor $(SF) --out $@

demo: $(DATA)/lineitem-sf$(SF).csv
	$(PY) -m benchmarks.demo $<

# The suite runs in TEST_WORKERS processes (pytest-xdist), a test file to a process so that a
# file's fixtures and compiled programs are built once: 6-7.5 minutes on 2 cores, 12 in one.
TEST_WORKERS ?= auto
test: install $(WARM_DEVICE)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

bench: install
	$(PY) -m benchmarks.peers

# The C++ engine under AddressSanitizer + UBSan, then ThreadSanitizer (.ci/sanitize).
sanitize: install $(WARM_DEVICE)
	bash .ci/sanitize address
	bash .ci/sanitize thread

clean:
	rm -rf $(VENV) build *.egg-info $(DATA) arrow_bridge/_startup_kernels
	find . -name __pycache__ -prune -exec rm -rf {} +

# Here (online), before `make gpu` elsewhere: the wheels the GPU machine lacks, for its
# Python 3.12: Dask and distributed with the dependencies its image lacks (the Dask GPU
# partition tests), polars (the thread-scaling peer), tpchgen-cli (lineitem). The image
# has tqdm, hypothesis, toolz, cloudpickle, fsspec, msgpack, psutil, pyyaml and jinja2.
GPU_WHEEL_NAMES := dask distributed partd locket tblib zict tornado polars polars-runtime-32 tpchgen-cli
gpu-wheels: install
	$(PY) -m pip download --quiet --only-binary=:all: --python-version 3.12 --no-deps -d $(GPU_WHEELS) \
	  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
	  --platform any $(GPU_WHEEL_NAMES)

# On the GPU machine: offline, system Python with CuPy, numba-cuda, pyarrow, pandas and
# pybind11 preinstalled, no venv. Builds the C++ engine in place, fills Numba's kernel
# cache, runs the GPU tests (the `gpu`-marked ones too), benchmarks.gpu with its thread
# scaling, and benchmarks.span_sizes at the machine's 16 threads; a failing step does not
# stop the later ones, the target fails at the end. Wheels carried into GPU_WHEELS (`make gpu-wheels`) are installed first. PIP_BREAK_SYSTEM_PACKAGES: the system Python may be
# "externally managed" (PEP 668). GPU_BENCH_ARGS goes to both benchmark runs
# (e.g. --quick, --repeat 1, --tpchgen-cli PATH).
GPU_PY ?= python3
OUT ?= benchmarks/results
GPU_WHEELS ?= build/gpu-wheels
GPU_BENCH_ARGS ?=
GPU_TESTS ?= tests/cuda_p2p tests/dask_plugin/test_gpu_partitions.py

gpu:
	if [ -d $(GPU_WHEELS) ]; then PIP_BREAK_SYSTEM_PACKAGES=1 $(GPU_PY) -m pip install --quiet --no-index --no-deps $(GPU_WHEELS)/*.whl; fi
	PIP_BREAK_SYSTEM_PACKAGES=1 $(GPU_PY) -m pip install --quiet --no-index --no-deps --no-build-isolation -e .
	$(GPU_PY) -m arrow_bridge.warmup --device
	status=0; \
	$(GPU_PY) -m pytest -q -o addopts="" -p no:cacheprovider --continue-on-collection-errors $(GPU_TESTS) || status=$$?; \
	$(GPU_PY) -m benchmarks.gpu --out $(OUT) $(GPU_BENCH_ARGS) || status=$$?; \
	$(GPU_PY) -m benchmarks.gpu --scaling --out $(OUT) $(GPU_BENCH_ARGS) || status=$$?; \
	$(GPU_PY) -m benchmarks.span_sizes --out $(OUT) || status=$$?; \
	exit $$status
