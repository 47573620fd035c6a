#!/usr/bin/env bash
# Shared by the deployment tests: exports the MLP example as WORK/mlp.cuvil
# with the CLI and writes its inputs as WORK/in0.bin ... in4.bin (raw
# row-major float32). Usage: export_mlp.sh PYTHON WORK
set -euo pipefail
python=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
"$python" -m cuvil compile "$root/resources/examples/mlp.py" --emit cuvil \
  -o "$work/mlp.cuvil" >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; exit 1; }
"$python" - "$root" "$work" <<'PY'
import sys
sys.path.insert(0, f"{sys.argv[1]}/resources/examples")
import mlp
for i, x in enumerate(mlp.make_inputs()):
    x.tofile(f"{sys.argv[2]}/in{i}.bin")
PY
