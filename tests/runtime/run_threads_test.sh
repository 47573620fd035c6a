#!/usr/bin/env bash
# Exports the MLP example with the CLI and runs RuntimeThreadsTest (built with
# ThreadSanitizer) on it; any report fails the test.
set -euo pipefail
python=$1 test=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m cuvil compile "$root/resources/examples/mlp.py" --emit cuvil \
  -o "$work/mlp.cuvil" >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; exit 1; }
"$python" - "$root" "$work" <<'PY'
import sys
sys.path.insert(0, f"{sys.argv[1]}/resources/examples")
import mlp
for i, x in enumerate(mlp.make_inputs()):
    x.tofile(f"{sys.argv[2]}/in{i}.bin")
PY
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
  "$test" "$work/mlp.cuvil" "$work"/in{0,1,2,3,4}.bin
