# The README's commands. `make serve` and `make test` work on a fresh machine: each creates the
# virtual environment it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

.PHONY: serve test install install-test lint bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# The service: the package and its runtime dependencies only (no torch).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e .
	touch $@

# Tests: also sentence-transformers on the CPU build of torch (pinned in the `st` extra, so no
# CUDA build is ever pulled) and the browser test's driver.
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e '.[test,st]'
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

serve: install
	$(BIN)/rag db migrate
	$(BIN)/rag sample
	$(BIN)/rag serve

test: install-test
	$(BIN)/python -m pytest -q

lint: install-test
	$(BIN)/python -m ruff check rag tests bench
	$(BIN)/python -m ruff format --check rag tests bench
	$(BIN)/python -m mypy rag

bench: install
	$(BIN)/python bench/bench_ingest.py
