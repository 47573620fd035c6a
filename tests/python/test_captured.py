"""Arrays a jitted function reads from its scope: a change after tracing is not ignored."""

import numpy as np

import cuvil

WEIGHT = np.ones((8, 8), np.float32)


def _compiled_count(fn) -> int:
    return sum(1 for c in cuvil.compilations() if c.function == fn.__qualname__)


def test_a_global_changed_after_tracing_is_compiled_again(caplog):
    WEIGHT[:] = 1.0

    @cuvil.jit
    def project(x):
        return x @ WEIGHT

    x = np.ones((2, 8), np.float32)
    np.testing.assert_allclose(project(x), x @ WEIGHT)
    WEIGHT[...] *= 3.0
    np.testing.assert_allclose(project(x), x @ WEIGHT)
    assert _compiled_count(project) == 2
    assert "changed after it was traced" in caplog.text
    np.testing.assert_allclose(project(x), x @ WEIGHT)
    assert _compiled_count(project) == 2, "an unchanged array must not recompile"


def test_full_mode_sees_a_change_between_the_samples(monkeypatch):
    monkeypatch.setenv("CUVIL_CHECK_CAPTURED", "full")
    table = np.arange(1000, dtype=np.float32)

    @cuvil.jit
    def shift(x):
        return x + table

    x = np.zeros(1000, np.float32)
    np.testing.assert_allclose(shift(x), table)
    table[3] = -5.0  # not one of the sampled elements
    np.testing.assert_allclose(shift(x), table)


def test_off_keeps_the_traced_values(monkeypatch):
    monkeypatch.setenv("CUVIL_CHECK_CAPTURED", "off")
    bias = np.ones(16, np.float32)

    @cuvil.jit
    def add(x):
        return x + bias

    x = np.zeros(16, np.float32)
    add(x)
    bias[:] = 7.0
    # Documented: with the check off, the values traced stay baked in.
    np.testing.assert_allclose(add(x), np.ones(16, np.float32))
