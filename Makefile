# The two commands a fresh machine needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ndp-installed
DATA := data
SF ?= 0.1

.PHONY: install demo test bench clean

install: $(STAMP)

# Re-install whenever the build inputs change; then compile the reader's kernels
# once so every later process loads them from Numba's on-disk cache.
$(STAMP): pyproject.toml setup.py $(wildcard ndp_core/src/*)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m arrow_bridge.warmup
	touch $@

$(DATA)/lineitem-sf$(SF).csv: $(STAMP)
	$(PY) -m benchmarks.datasets lineitem --scale-factor $(SF) --out $@

demo: $(DATA)/lineitem-sf$(SF).csv
	$(PY) -m benchmarks.demo $<

test: install
	$(PY) -m pytest -q

bench: install
	$(PY) -m benchmarks.peers

clean:
	rm -rf $(VENV) build *.egg-info $(DATA)
	find . -name __pycache__ -prune -exec rm -rf {} +
