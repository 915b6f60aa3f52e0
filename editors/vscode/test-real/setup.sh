#!/usr/bin/env bash
# Sets up the real-VS-Code suite from nothing, offline apart from the package registries:
#  - Debian packages: chromium (the browser playwright-core drives), ripgrep (VS Code's search binary, which
#    @vscode/ripgrep would otherwise download), and the toolchain to build code-server's native modules;
#  - npm: code-server 4.99.x (a real VS Code 1.99 for Node 20) and playwright-core, from package-lock.json,
#    with install scripts off (they download from the internet), then the postinstall steps done by hand.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
command -v rg >/dev/null || need_apt+=(ripgrep)
command -v g++ >/dev/null && command -v make >/dev/null || need_apt+=(build-essential)
[ -e /usr/include/gssapi/gssapi.h ] || [ -e /usr/include/gssapi.h ] || need_apt+=(libkrb5-dev)
[ -e /usr/include/libsecret-1/libsecret/secret.h ] || need_apt+=(libsecret-1-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "test-real: missing Debian packages: ${need_apt[*]} (run as root, or apt-get install them)" >&2
    exit 1
  fi
  echo "test-real: apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

stamp=node_modules/.kgent-setup-done
if [ -e "$stamp" ] && [ "$stamp" -nt package-lock.json ]; then exit 0; fi

# `make` has installed node_modules from the lock already (npm then writes node_modules/.package-lock.json).
if ! [ node_modules/.package-lock.json -nt package-lock.json ]; then npm ci --ignore-scripts --no-audit --no-fund; fi
# code-server's own native module (password hashing; loaded even with --auth none), built here instead of downloaded.
npm_config_build_from_source=true npm rebuild --no-audit --no-fund argon2
vsc=node_modules/code-server/lib/vscode
# code-server's postinstall.sh, without the downloads: VS Code's own dependencies and its built-in extensions'.
(cd "$vsc" && npm install --omit=dev --ignore-scripts --no-audit --no-fund)  # as postinstall.sh (its shrinkwrap is not `npm ci`-clean)
(cd "$vsc/extensions" && npm install --omit=dev --ignore-scripts --no-audit --no-fund)
mkdir -p "$vsc/node_modules/@vscode/ripgrep/bin"
ln -sf "$(command -v rg)" "$vsc/node_modules/@vscode/ripgrep/bin/rg"
# Native modules, built for this Node (their install scripts were skipped above); node-gyp compiles each module's
# sources on every core (JOBS), the longest step of the set-up.
export JOBS=max
(cd "$vsc" && npm rebuild --no-audit --no-fund @parcel/watcher @vscode/spdlog kerberos native-watchdog node-pty @vscode/deviceid)
ln -sfn node_modules "$vsc/node_modules.asar"
(cd node_modules/code-server/lib/vscode/bin/remote-cli && ln -sf code-linux.sh code-server)
(cd node_modules/code-server/lib/vscode/bin/helpers && ln -sf browser-linux.sh browser.sh)
touch "$stamp"
echo "test-real: set up"
