"""The bundled examples compile and agree with their independent NumPy references."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLE_NAMES, EXAMPLES_DIR, load_example, run_python

import cuvil

# float32 against float64 references: GEMM accumulation over K <= 512 and the
# normalizations bound the error well below these.
TOLERANCES = {
    "matmul_inference": dict(rtol=1e-4, atol=2e-3),
    "mlp": dict(rtol=1e-4, atol=1e-4),
    "transformer_block": dict(rtol=1e-3, atol=1e-4),
}


@pytest.fixture(scope="module", params=EXAMPLE_NAMES)
def example(request):
    return request.param, load_example(request.param)


def test_example_exposes_the_expected_interface(example):
    name, module = example
    fn = getattr(module, name)
    assert isinstance(fn, cuvil.JitFunction)
    inputs = module.make_inputs()
    assert all(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in inputs)
    assert all(a.flags.c_contiguous for a in inputs)
    # Same seed, same inputs.
    for a, b in zip(inputs, module.make_inputs()):
        np.testing.assert_array_equal(a, b)


def test_example_as_plain_numpy_matches_reference(example):
    name, module = example
    inputs = module.make_inputs()
    eager = getattr(module, name).__wrapped__(*inputs)
    np.testing.assert_allclose(eager, module.reference(*inputs), **TOLERANCES[name])


def test_compiled_example_matches_reference(example):
    name, module = example
    fn = getattr(module, name)
    inputs = module.make_inputs()
    result = fn(*inputs)
    assert cuvil.last_fallback_reason(fn) is None, cuvil.last_fallback_reason(fn)
    expected = module.reference(*inputs)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    np.testing.assert_allclose(result, expected, **TOLERANCES[name])
    assert name in cuvil.inspect_ir(fn)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_runs_as_a_script(name):
    result = run_python([str(EXAMPLES_DIR / f"{name}.py")])
    assert result.returncode == 0, result.stderr
    assert "max abs error" in result.stdout
    assert "ran as plain NumPy" not in result.stdout
