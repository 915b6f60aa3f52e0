# Every target sets itself up from nothing: python3 (and node/npm for the VS Code shim) is all it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast test-python test-vscode test-vscode-real test-nvim bench lint setup clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# swebench: the official SWE-bench harness, whose own loading code the evaluator's tests check predictions with.
	$(PY) -m pip install -q -e '.[dev,swebench]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(PY) -m kgent.daemon.demo

# test-vscode-real fits: measured on 2 cores, the whole of `make test` stays well under 15 minutes (editors/vscode/README.md).
test: test-python test-vscode test-vscode-real test-nvim

test-python: $(STAMP)
	$(PY) -m pytest

# Unit tests only: no daemon subprocess suites (tests/e2e) and no editors; well under a minute.
test-fast: $(STAMP)
	$(PY) -m pytest --ignore=tests/e2e

bench: $(STAMP)
	$(PY) bench/run.py

lint: $(STAMP)
	$(VENV)/bin/ruff check server tests bench
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV)

# Editor shims (each against the real daemon on the scripted provider).
test-vscode: $(STAMP)
	cd editors/vscode && npm ci --no-audit --no-fund && npm test

# The packaged .vsix in a real VS Code (code-server 4.99 in Debian's Chromium, driven by playwright-core). Sets itself
# up from nothing: the Debian packages it needs (as root), then code-server and its native modules (test-real/setup.sh).
test-vscode-real: $(STAMP)
	cd editors/vscode && npm ci --no-audit --no-fund && npm run test:real

test-nvim: $(STAMP)
	bash editors/nvim/tests/run.sh
