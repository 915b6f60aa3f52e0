# Every target sets itself up from nothing: python3 (and node/npm for the VS Code shim) is all it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo demo-http format test test-lane-vscode test-lane-nvim test-fast test-python test-editors test-vscode test-vscode-real test-nvim test-acp-ts bench lint setup clean system-tools

# The venv is installed by uv (from PyPI, into the venv): the same resolution as pip's, with bytecode compiled as pip leaves
# it, in ~15 s where pip took ~60 s of every clean-clone CI run. `pip install .` itself is checked by tests/test_build.py.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check 'uv>=0.9,<1'
	# swebench: the official SWE-bench harness, whose own loading code the evaluator's tests check predictions with.
	$(VENV)/bin/uv pip install -q --compile-bytecode --python $(PY) --upgrade-package pip pip -e '.[dev,http,swebench,desktop]'
	touch $(STAMP)

setup: $(STAMP) system-tools

# Shell commands run in a bubblewrap sandbox (git and ripgrep are needed by the escape tests, which run them as commands; chromium by the web client's browser
# suite and openssl by its TLS test, tests/http; luacheck by make lint). Installed when missing and we are root on Debian/Ubuntu; otherwise a note: Kgent then asks
# before every shell command.
# What Qt's xcb platform plugin (kgent desktop: pywebview on PyQt6) loads beyond a base Debian, as soname:package;
# tests/http/test_http_desktop_libraries.py checks that the plugin's libraries resolve on this machine.
QT_XCB_LIBS := libxcb-cursor.so.0:libxcb-cursor0 libxcb-icccm.so.4:libxcb-icccm4 libxcb-keysyms.so.1:libxcb-keysyms1 \
  libxcb-image.so.0:libxcb-image0 libxcb-render-util.so.0:libxcb-render-util0 libxcb-shape.so.0:libxcb-shape0 \
  libxcb-xkb.so.1:libxcb-xkb1 libxkbcommon-x11.so.0:libxkbcommon-x11-0 libxcb-randr.so.0:libxcb-randr0 \
  libxcb-xinerama.so.0:libxcb-xinerama0 libEGL.so.1:libegl1 libGL.so.1:libgl1 libfontconfig.so.1:libfontconfig1 \
  libdbus-1.so.3:libdbus-1-3 libnss3.so:libnss3 libasound.so.2:libasound2
system-tools:
	@missing=""; for t in bwrap:bubblewrap git:git rg:ripgrep chromium:chromium openssl:openssl xvfb-run:xvfb luacheck:lua-check; do command -v $${t%%:*} >/dev/null 2>&1 || missing="$$missing $${t#*:}"; done; \
	for lib in $(QT_XCB_LIBS); do ldconfig -p | grep -q "$${lib%%:*}" || missing="$$missing $${lib#*:}"; done; \
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

# Three lanes side by side: the Python suite (two workers); the VS Code shim's Node suite, then the packaged extension
# in a real VS Code (whose code-server set-up builds native modules); headless Neovim, then the ACP TS client. All of
# them mostly wait (on daemons, browsers, sandboxes, a headless Neovim, a real VS Code). In each lane every part runs
# even when one before it failed. Output is interleaved by line.
test: $(STAMP) system-tools
	$(MAKE) --no-print-directory -j3 --output-sync=line --keep-going test-python test-lane-vscode test-lane-nvim

test-lane-vscode: $(STAMP)
	$(MAKE) --no-print-directory -j1 --keep-going test-vscode test-vscode-real

test-lane-nvim: $(STAMP)
	$(MAKE) --no-print-directory -j1 --keep-going test-nvim test-acp-ts

# Every editor's suite, one after another.
test-editors: $(STAMP)
	$(MAKE) --no-print-directory -j1 --keep-going test-vscode test-vscode-real test-nvim test-acp-ts

# Two workers, a test file each at a time: the suite spends much of its time waiting on subprocesses (daemons,
# browsers, sandboxes), so on 2 cores two workers nearly halve its wall time (three made the whole run slower: with
# the other lanes beside them the machine was oversubscribed). `pytest PATH` alone runs serially.
PYTEST_WORKERS ?= 2
# The 30 slowest tests are listed at the end: where the suite's time goes, in every CI log.
test-python: $(STAMP) system-tools
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile --durations=30

# Unit tests only: no daemon subprocess suites (tests/e2e) and no editors; well under a minute.
test-fast: $(STAMP) system-tools
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile --ignore=tests/e2e

# The peers bench/firstrun.py measures beside Kgent (Pi: `pi --mode rpc`, `pi -p`), from the npm registry, locked.
PEERS_DEPS := bench/pi/node_modules/.package-lock.json
$(PEERS_DEPS): bench/pi/package-lock.json
	cd bench/pi && npm ci --no-audit --no-fund
	touch $@

# bench/instructions.py counts instructions under valgrind's callgrind (installed here, as system-tools does).
bench: $(STAMP) system-tools $(PEERS_DEPS)
	@command -v valgrind >/dev/null 2>&1 || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing valgrind"; apt-get update -q >/dev/null && apt-get install -y -q valgrind >/dev/null; \
	else echo "note: missing valgrind (apt-get install valgrind): bench/instructions.py will fail"; fi; }
	$(PY) bench/run.py

# The TypeScript, JavaScript and Lua gates (the root package.json: biome, and stylua's WebAssembly build, which
# editors/stylua.mjs drives), installed once per package-lock.json.
GATES_DEPS := node_modules/.package-lock.json
BIOME      := node_modules/.bin/biome
STYLUA     := node editors/stylua.mjs
LUA        := editors/nvim/lua editors/nvim/plugin editors/nvim/tests
$(GATES_DEPS): package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# ruff, mypy strict, biome on the TypeScript and JavaScript (biome.jsonc), stylua and luacheck on the Lua (.stylua.toml,
# .luacheckrc), then the release gate: a wheel and an sdist (tests/test_build.py installs both in a clean venv).
lint: $(STAMP) $(GATES_DEPS) system-tools
	$(VENV)/bin/ruff check server tests bench
	$(VENV)/bin/ruff format --check server tests bench
	$(VENV)/bin/mypy
	$(BIOME) ci --error-on-warnings
	$(STYLUA) --check $(LUA)
	luacheck $(LUA)
	$(PY) -m build --outdir dist .

# Rewrites what the formatters cover: the Python, the TypeScript and JavaScript, the Lua.
format: $(STAMP) $(GATES_DEPS)
	$(VENV)/bin/ruff format server tests bench
	$(BIOME) format --write
	$(STYLUA) --write $(LUA)

clean:
	rm -rf $(VENV)

# Editor shims (each against the real daemon on the scripted provider).
# npm writes node_modules/.package-lock.json on every install: installed once per package-lock.json, not per target.
# When targets that need editors/vscode's or editors/web's run side by side (make -j), NPM_CI holds a lock in the
# package's directory (flock, where util-linux has it) and skips the install when the other finished it meanwhile.
NPM_CI = $$(command -v flock >/dev/null && echo flock .npm-ci.lock) sh -c \
  '[ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund'
VSCODE_DEPS := editors/vscode/node_modules/.package-lock.json
$(VSCODE_DEPS): editors/vscode/package-lock.json
	cd editors/vscode && $(NPM_CI)
	touch $@
# The pages' one source (editors/web/src): the extension bundles it into its webview, with editors/web's pins of
# markdown-it, DOMPurify and highlight.js. `python editors/web/build.py` builds the web client's copy (committed).
WEB_DEPS := editors/web/node_modules/.package-lock.json
$(WEB_DEPS): editors/web/package-lock.json
	cd editors/web && $(NPM_CI)
	touch $@

test-vscode: $(STAMP) $(VSCODE_DEPS) $(WEB_DEPS)
	cd editors/vscode && npm test

# The packaged .vsix in a real VS Code (code-server 4.99 in Debian's Chromium, driven by playwright-core). Sets itself
# up from nothing: the Debian packages it needs (as root), then code-server and its native modules (test-real/setup.sh).
test-vscode-real: $(STAMP) $(VSCODE_DEPS) $(WEB_DEPS)
	cd editors/vscode && npm run test:real

test-nvim: $(STAMP)
	bash editors/nvim/tests/run.sh

# `kgent acp` driven by the official ACP TypeScript SDK's client (a second implementation; docs/acp.md).
ACP_TS_DEPS := tests/acp-ts/node_modules/.package-lock.json
$(ACP_TS_DEPS): tests/acp-ts/package-lock.json
	cd tests/acp-ts && npm ci --no-audit --no-fund
	touch $@

test-acp-ts: $(STAMP) $(ACP_TS_DEPS)
	cd tests/acp-ts && npm test
