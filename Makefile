# Every target sets itself up from nothing: python3 (and node/npm for the VS Code shim) is all it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo demo-http test test-fast test-python test-vscode test-vscode-real test-nvim test-acp-ts bench lint setup clean system-tools

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# swebench: the official SWE-bench harness, whose own loading code the evaluator's tests check predictions with.
	$(PY) -m pip install -q -e '.[dev,http,swebench,desktop]'
	touch $(STAMP)

setup: $(STAMP) system-tools

# Shell commands run in a bubblewrap sandbox (git is needed by the escape tests; chromium by the web client's browser
# suite and openssl by its TLS test, tests/http). Installed when missing and we are root on Debian/Ubuntu; otherwise a note: Kgent then asks
# before every shell command.
system-tools:
	@missing=""; for t in bwrap:bubblewrap git:git chromium:chromium openssl:openssl xvfb-run:xvfb; do command -v $${t%%:*} >/dev/null 2>&1 || missing="$$missing $${t#*:}"; done; \
	ldconfig -p | grep -q libxcb-cursor.so.0 || missing="$$missing libxcb-cursor0"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing$$missing"; apt-get update -q >/dev/null && apt-get install -y -q$$missing >/dev/null; \
	  else echo "note: missing$$missing (apt-get install$$missing): without bubblewrap every shell command is asked"; fi; \
	fi

demo: $(STAMP)
	$(PY) -m kgent.testing.daemon_demo

# The HTTP front and its web client on the scripted provider: prints the URL (with its token) to open in a browser.
demo-http: $(STAMP)
	$(PY) -m kgent.testing.http_demo

# test-vscode-real fits: measured on 2 cores, the whole of `make test` stays well under 15 minutes (editors/vscode/README.md).
test: test-python test-vscode test-vscode-real test-nvim test-acp-ts

# Two workers, a test file each at a time: the suite spends much of its time waiting on subprocesses (daemons,
# browsers, sandboxes), so on 2 cores two workers nearly halve its wall time. `pytest PATH` alone runs serially.
PYTEST_WORKERS ?= 2
test-python: $(STAMP) system-tools
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile

# Unit tests only: no daemon subprocess suites (tests/e2e) and no editors; well under a minute.
test-fast: $(STAMP) system-tools
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile --ignore=tests/e2e

bench: $(STAMP) system-tools
	$(PY) bench/run.py

# ruff, mypy strict, then the release gate: a wheel and an sdist (tests/test_build.py installs both in a clean venv).
lint: $(STAMP)
	$(VENV)/bin/ruff check server tests bench
	$(VENV)/bin/ruff format --check server tests bench
	$(VENV)/bin/mypy
	$(PY) -m build --outdir dist .

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

# `kgent acp` driven by the official ACP TypeScript SDK's client (a second implementation; docs/acp.md).
test-acp-ts: $(STAMP)
	cd tests/acp-ts && npm ci --no-audit --no-fund && npm test
