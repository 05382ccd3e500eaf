# Quick start: `make run` and `make test` each set up .venv on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test typecheck stubtest pytest bench clean

# -qq keeps pip's errors but drops notices about the machine's own package indexes.
$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -qq --upgrade pip
	$(BIN)/pip install -qq -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/tcpdsl run examples

typecheck: $(STAMP)
	$(BIN)/mypy --strict tcpdsl

# The facade stub must describe the runtime module it stands for.
stubtest: $(STAMP)
	MYPYPATH=stubs $(BIN)/python -m mypy.stubtest tcpdsl --concise --allowlist stubs/stubtest-allowlist.txt

pytest: $(STAMP)
	$(BIN)/pytest -n 2

test: typecheck stubtest pytest

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .hypothesis
