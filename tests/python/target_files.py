"""What the tests of the targets that write files to deploy (c, wasm) share: running the
examples and the op table on a target, and ``cuvil compile EXAMPLE --target T -o DIR``."""

from __future__ import annotations

import pathlib
import runpy
import subprocess
import sys

import numpy as np

import cuvil

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import test_ops  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "resources" / "examples"

EXAMPLE_FUNCTIONS = [
    ("mlp", "mlp"),
    ("transformer_block", "transformer_block"),
    ("matmul_inference", "matmul_inference"),
]


def assert_close(result, expected):
    """float32 sums of a few hundred terms: errors scale with the outputs' magnitude."""
    atol = 4e-6 * float(np.abs(expected).max())
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=atol)


def example(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / f"{name}.py"))


def check_example_on(target: str, name: str, function: str) -> None:
    """The example's function compiled for ``target`` and called computes its reference."""
    namespace = example(name)
    compiled = cuvil.jit(namespace[function].__cuvil_function__, target=target)
    inputs = namespace["make_inputs"]()
    result = compiled(*inputs)
    assert cuvil.last_fallback_reason(compiled) is None
    assert cuvil.compilations()[-1].target == target
    assert_close(result, namespace["reference"](*inputs))


def check_op_on(target: str, info, sample) -> None:
    """One op-table case compiled for ``target`` and called matches NumPy."""
    compiled = cuvil.jit(test_ops._traced_function(info, sample), target=target)
    result = compiled(*sample.args)
    assert cuvil.last_fallback_reason(compiled) is None, cuvil.last_fallback_reason(compiled)
    test_ops._assert_matches(result, info.reference(sample), info.tolerance(sample))


def compile_file(tmp_path, name: str, function: str, target: str, suffixes) -> pathlib.Path:
    """``cuvil compile EXAMPLE --target TARGET -o DIR`` (the file's decorator says cpu): the
    folder, holding exactly ``<function><suffix>`` for each of ``suffixes``."""
    out = tmp_path / target
    command = [sys.executable, "-m", "cuvil", "compile", str(EXAMPLES / f"{name}.py")]
    run = subprocess.run(
        [*command, "--target", target, "-o", str(out)], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    assert f"// wrote {out / (function + suffixes[0])}" in run.stdout
    assert {p.name for p in out.iterdir()} == {function + suffix for suffix in suffixes}
    return out
