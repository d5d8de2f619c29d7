# `make demo` and `make test` each bootstrap .venv from the package registry on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: demo test bench lint clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "zeroclaw-obs needs Python 3.11+")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-* && touch $@

demo: $(STAMP)
	$(BIN)/zeroclaw-obs demo

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/redaction.py
	$(BIN)/python benchmarks/telemetry.py
	@# Issue 17's targets 1 and 2 in instructions, not µs (steady across hours; needs valgrind).
	if command -v valgrind >/dev/null; then $(BIN)/python benchmarks/telemetry_icount.py; \
	else echo "telemetry_icount.py skipped: no valgrind (Debian package valgrind)"; fi
	$(BIN)/python benchmarks/providers.py
	$(BIN)/python benchmarks/mcp_calls.py
	$(BIN)/python benchmarks/server.py

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache zeroclaw_obs.egg-info
