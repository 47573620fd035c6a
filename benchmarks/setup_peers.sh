#!/usr/bin/env bash
# Installs the benchmark-only peers (benchmarks/requirements-peers.txt) into a cached folder and prints its path.
#
# Like the frameworks folder of scripts/setup.sh, the folder is keyed by the
# pinned requirements, lives outside the checkout, is shared by every clone
# and is built as "<dir>.partial" then renamed, so an interrupted install
# starts over. `make bench-peers` puts it on PYTHONPATH for the benchmark
# only; the project's .venv does not see it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
requirements="$root/benchmarks/requirements-peers.txt"
cache=${CUVIL_FRAMEWORKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cuvil}
key=$(sha256sum < "$requirements" | cut -c1-16)
peers="$cache/bench-peers-$key"
if [ ! -d "$peers" ]; then
  echo "bench-peers: installing IREE into $peers (once per requirements change)" >&2
  mkdir -p "$cache"
  rm -rf "$peers.partial"
  "$root/.venv/bin/pip" install -q --disable-pip-version-check --no-deps \
    --target "$peers.partial" -r "$requirements" >&2
  mv "$peers.partial" "$peers"
fi
echo "$peers"
