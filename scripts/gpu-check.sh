#!/usr/bin/env bash
# The cuda target's checks on a machine with an NVIDIA GPU, in one run:
# the GPU and its driver, a build (reused when present, else `make build`),
# the tests labelled `gpu` (op table and examples against NumPy, the profiler's
# CUPTI collector) and benchmarks/bench_gpu.py against PyTorch on the same GPU.
# Results go to $OUT (default build/gpu-check): gpu.txt, tests.txt,
# bench_gpu.txt and bench_gpu.json. Exits non-zero when a test fails.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-check}
mkdir -p "$out"
status=0

{
  echo "== $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi
    nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv
  else
    echo "gpu-check: no nvidia-smi on PATH"
  fi
  echo "CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}"
  "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" --version 2>&1 | tail -1
} 2>&1 | tee "$out/gpu.txt"

# A build: the existing one when the package imports, else the full set-up.
python=.venv/bin/python
if ! $python -c "import sys; sys.path.insert(0, 'embedded_python'); import cuvil" 2>/dev/null; then
  echo "gpu-check: building (make build)"
  make build || exit 1
fi
$python - <<'PY' 2>&1 | tee -a "$out/gpu.txt"
import sys
sys.path.insert(0, "embedded_python")
import cuvil
reason = cuvil._targets.unavailable_reason("cuda", 0)
print("cuda target:", "usable" if reason is None else f"NOT usable: {reason}")
PY

# The gpu-labelled tests: through CTest when there is a build folder (the
# profiler's CUPTI test is a C++ binary), else the Python ones directly.
if [ -f build/CTestTestfile.cmake ]; then
  (cd build && ctest -L gpu -V --timeout 1200) >"$out/tests.txt" 2>&1 || status=1
else
  $python -m pytest -q -rs tests/gpu >"$out/tests.txt" 2>&1 || status=1
fi
tail -25 "$out/tests.txt"

env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=embedded_python \
  $python benchmarks/bench_gpu.py --tf32 --json "$out/bench_gpu.json" 2>&1 | tee "$out/bench_gpu.txt"
exit $status
