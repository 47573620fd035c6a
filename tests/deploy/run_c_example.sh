#!/usr/bin/env bash
# The deployment path without Python: export the MLP example as a .cuvil with
# the CLI, build resources/examples/deploy/run_model.c with `cc -std=c11`
# (and its header with a C++ compiler), run it, and compare its output with
# the example's float64 reference and with cuvil.runtime in Python. A
# truncated package must be refused with the file and the field named.
set -euo pipefail
python=$1 build=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bash "$root/tests/deploy/export_mlp.sh" "$python" "$work"

include="$root/compiler_core/include"
cc -std=c11 -Wall -Wextra -Werror "$root/resources/examples/deploy/run_model.c" \
  -I"$include" -L"$build/lib" -lcuvil_runtime -Wl,-rpath,"$build/lib" -o "$work/run_model"
echo '#include "cuvil/Runtime/cuvil_runtime.h"' | c++ -std=c++17 -Wall -Wextra -Werror \
  -I"$include" -x c++ -fsyntax-only -

"$work/run_model" "$work/mlp.cuvil" main "$work"/in{0,1,2,3,4}.bin "$work/out"
# The same with the code mapped from a file named by its digest (use_mmap).
CUVIL_MAPPED_DIR="$work/mapped" "$work/run_model" "$work/mlp.cuvil" main \
  "$work"/in{0,1,2,3,4}.bin "$work/mapped-out"
cmp "$work/out0.bin" "$work/mapped-out0.bin"
ls "$work/mapped"/*.so >/dev/null

"$python" - "$root" "$work" <<'PY'
import sys
import numpy as np
import cuvil
sys.path.insert(0, f"{sys.argv[1]}/resources/examples")
import mlp
work = sys.argv[2]
inputs = mlp.make_inputs()
c_out = np.fromfile(f"{work}/out0.bin", np.float32).reshape(64, 128)
py_out = cuvil.runtime.load_executable(f"{work}/mlp.cuvil").get_function("mlp")(*inputs)
error = np.abs(c_out - mlp.reference(*inputs)).max()
assert np.array_equal(c_out, py_out.numpy()), "C and Python runtimes differ"
assert error < 1e-4, f"C runtime result off by {error}"
print(f"C runtime: max |error| vs float64 reference {error:.2e}, equal to cuvil.runtime")
PY

head -c 3000 "$work/mlp.cuvil" >"$work/truncated.cuvil"
if "$work/run_model" "$work/truncated.cuvil" main "$work"/in{0,1,2,3,4}.bin "$work/out" \
  2>"$work/err.txt"; then
  echo "a truncated package was accepted"; exit 1
fi
grep -q "truncated.cuvil: file size: .*truncated" "$work/err.txt" || { cat "$work/err.txt"; exit 1; }
echo "truncated package refused: $(cat "$work/err.txt")"
