#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian machine, idempotently:
#   - Debian packages: chromium (UI tests), build-essential, python3 and libkrb5-dev (code-server's
#     native modules are compiled from source because prebuilt binaries cannot be downloaded), ripgrep
#     (the rg of the floor host's VS Code, which would otherwise come from GitHub);
#     openssl (a throw-away certificate for the UI test of the extension details page);
#   - the npm packages of package-lock.json (npm ci);
#   - the two code-server hosts the extension-host and UI tests run in, each with its Node, cached
#     outside the repo: the floor (code-server 4.96 = VS Code 1.96, Node 20) in
#     ~/.cache/tinker-studio/code-server-floor and the newest (code-server 4.139, Node 24) in
#     ~/.cache/tinker-studio/code-server (scripts/install-code-server.sh).
# Only the npm registry and Debian's apt are used.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

missing=()
for p in chromium build-essential python3 libkrb5-dev ripgrep openssl; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "[setup] installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

echo "[setup] npm ci"
npm ci --no-audit --no-fund --loglevel=error

echo "[setup] code-server hosts"
bash scripts/install-code-server.sh
echo "[setup] done"
