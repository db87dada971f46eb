#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian machine, idempotently:
#   - Debian packages: chromium (UI tests), build-essential, python3 and libkrb5-dev (code-server's
#     native modules are compiled from source because prebuilt binaries cannot be downloaded);
#   - the npm packages of package-lock.json (npm ci);
#   - Node 24 + code-server (the VS Code the extension-host and UI tests run in), cached under
#     ~/.cache/tinker-studio/code-server, outside the repo.
# Only the npm registry and Debian's apt are used.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

missing=()
for p in chromium build-essential python3 libkrb5-dev; do
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

echo "[setup] code-server"
bash scripts/install-code-server.sh
echo "[setup] done"
