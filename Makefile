PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo perf perf-peers perf-gpu clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

# One worker per core (each with its own kernel cache directory, tests/conftest.py); a
# worker that runs out of tests takes some of another's.
test: $(STAMP)
	$(PY) -m pytest -n auto --maxprocesses=8 --dist worksteal

demo: $(STAMP)
	$(PY) examples/tour.py

perf: $(STAMP)
	$(PY) perf/run.py

perf-peers: $(STAMP)
	$(PY) -m pip install -q torch==2.13.0 jax jaxlib
	$(PY) perf/run.py

# On a machine with an NVIDIA GPU: the cuda extra, tests/gpu on the device, then the GPU
# table beside PyTorch CUDA and JAX where installed (fails at once without a GPU).
perf-gpu: $(STAMP)
	$(PY) -m pip install -q -e '.[cuda]'
	$(PY) perf/gpu.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
