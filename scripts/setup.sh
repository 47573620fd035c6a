#!/usr/bin/env bash
# Installs what is missing (Debian packages, the .venv), then builds Cuvil.
# Idempotent: a second run only rebuilds what changed. With --packages-only
# it stops after the Debian packages (what `make fuzz` needs).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

packages=(
  build-essential cmake ninja-build ccache git pkg-config
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools lld-19 liblld-19-dev
  python3-dev python3-venv pybind11-dev libzstd-dev zlib1g-dev
  qt6-base-dev qt6-svg-dev libqscintilla2-qt6-dev libgraphviz-dev libssl-dev
  nlohmann-json3-dev libsqlite3-dev libopenblas0-pthread libgtest-dev libdlpack-dev
  clang-format-19 clang-19 libclang-rt-19-dev
  nodejs wasi-libc wabt chromium
  python3-numpy desktop-file-utils appstream lintian
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: packages are missing and this is not root; run as root or install them" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ "${1:-}" = "--packages-only" ]; then
  exit 0
fi

# The project's Python environment, with the package importable from the
# source tree (the build puts the _cuvil extension next to the sources).
if [ ! -x .venv/bin/python ]; then
  /usr/bin/python3 -m venv .venv
fi
if ! .venv/bin/python -c "import numpy, pytest, threadpoolctl" 2>/dev/null ||
   [ ! -x .venv/bin/ruff ] ||
   [ requirements.txt -nt .venv/.requirements-installed ]; then
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
  touch .venv/.requirements-installed
fi
site=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "$root/embedded_python" > "$site/cuvil-source.pth"

# PyTorch, ONNX (+ Runtime), JAX and TensorFlow: about 4 GB installed, so
# they live in a folder keyed by the pinned requirements, outside the
# checkout, shared by every clone and kept between runs. A clone only points
# its .venv at it. Building into "<dir>.partial" and renaming makes an
# interrupted install start over instead of leaving half a folder in use.
frameworks_cache=${CUVIL_FRAMEWORKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cuvil}
key=$(cat requirements-frameworks.txt requirements-torch.txt | sha256sum | cut -c1-16)
frameworks="$frameworks_cache/frameworks-$key"
if [ ! -d "$frameworks" ]; then
  echo "setup: installing model frameworks into $frameworks (once per requirements change)"
  mkdir -p "$frameworks_cache"
  rm -rf "$frameworks.partial"
  .venv/bin/pip install -q --disable-pip-version-check --target "$frameworks.partial" \
    -r requirements-frameworks.txt
  .venv/bin/pip install -q --disable-pip-version-check --no-deps --upgrade \
    --target "$frameworks.partial" -r requirements-torch.txt
  mv "$frameworks.partial" "$frameworks"
fi
echo "$frameworks" > "$site/cuvil-frameworks.pth"
if ! .venv/bin/python -c "import torch" 2>/tmp/cuvil-torch-import.err; then
  echo "setup: 'import torch' fails from $frameworks:" >&2
  tail -3 /tmp/cuvil-torch-import.err >&2
  echo "setup: torch needs the CUDA 13 toolkit's libraries on the loader path" \
    "(see requirements-torch.txt); install it or add the matching nvidia-* wheels" >&2
  exit 1
fi
cat > .venv/bin/cuvil <<LAUNCHER
#!$root/.venv/bin/python
import sys
from cuvil.cli import main
sys.exit(main())
LAUNCHER
chmod +x .venv/bin/cuvil

if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DPython3_EXECUTABLE=/usr/bin/python3
fi
ninja -C build -j2
