"""Compiled exp and log against float64 where float32 results or arguments are subnormal."""

import numpy as np
import pytest

import cuvil

# The smallest positive float32 and the subnormal spacing.
TINY = np.float32(1.4e-45)


@pytest.mark.parametrize("fusion", [True, False], ids=["fused", "unfused"])
def test_log_of_subnormal_arguments(fusion):
    rng = np.random.default_rng(3)
    x = np.concatenate(
        [
            np.array([1e-45, 3e-42, 1e-40, 1.17e-38, 1.2e-38, 0.5, 2.0], np.float32),
            rng.uniform(1e-45, 1.2e-38, 4096).astype(np.float32),
        ]
    )
    log = cuvil.jit(lambda a: np.log(a) + 0.0, enable_fusion=fusion)
    got = log(x)
    want = np.log(x.astype(np.float64))
    # log(1e-45) is -103.28: before, the exponent-bit range reduction gave -87.34.
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)


@pytest.mark.parametrize("fusion", [True, False], ids=["fused", "unfused"])
def test_exp_with_subnormal_results(fusion):
    rng = np.random.default_rng(4)
    x = np.concatenate(
        [
            np.array([-103.9, -100.0, -95.0, -88.0, -87.3, -80.0], np.float32),
            rng.uniform(-104.0, -87.0, 4096).astype(np.float32),
        ]
    )
    exp = cuvil.jit(lambda a: np.exp(a) + 0.0, enable_fusion=fusion)
    got = exp(x).astype(np.float64)
    want = np.exp(x.astype(np.float64))
    assert np.all(got[x > -103.0] > 0), "subnormal results were flushed to zero"
    # Relative error of the normal range (|x| eps for |x| near 100) plus a few
    # units of the subnormal spacing.
    np.testing.assert_array_less(np.abs(got - want), 1e-5 * want + 64 * TINY)
