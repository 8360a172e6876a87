# The two commands a fresh machine needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.ndp-installed
WARM := $(VENV)/.ndp-kernels-cached
DATA := data
SF ?= 0.1

.PHONY: install demo test bench sanitize clean

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
# word) would leave it stale: any change recompiles them all.
KERNEL_SOURCES := $(wildcard arrow_bridge/kernels/*.py arrow_bridge/*/*.py ndp_core/*.py \
                  $(addprefix arrow_bridge/,transcoding.py line_filters.py column_finish.py preamble.py))
$(WARM): $(INSTALLED) $(KERNEL_SOURCES)
	find arrow_bridge -name '*.nbi' -delete -o -name '*.nbc' -delete
	$(PY) -m arrow_bridge.warmup
	touch $@

$(DATA)/lineitem-sf$(SF).csv: $(WARM)
	$(PY) -m benchmarks.datasets lineitem --scale-factor $(SF) --out $@

demo: $(DATA)/lineitem-sf$(SF).csv
	$(PY) -m benchmarks.demo $<

test: install
	$(PY) -m pytest -q

bench: install
	$(PY) -m benchmarks.peers

# The C++ engine under AddressSanitizer + UBSan, then ThreadSanitizer (.ci/sanitize).
sanitize: install
	bash .ci/sanitize address
	bash .ci/sanitize thread

clean:
	rm -rf $(VENV) build *.egg-info $(DATA)
	find . -name __pycache__ -prune -exec rm -rf {} +
