"""The fallback path: arguments or code Cuvil cannot compile run as plain Python, with a reason."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import caller_line, line_of

import cuvil

THIS_FILE = os.path.abspath(__file__)


@cuvil.jit
def matmul(A, B):
    return A @ B


@cuvil.jit
def identity_plus_one(x):
    return x + 1


@cuvil.jit
def python_if(x):
    if x.sum() > 0:  # MARK: python-if
        return x * 2.0
    return -x


@cuvil.jit
def einsum_user(x):
    return np.einsum("ij->ji", x)  # MARK: einsum


@cuvil.jit
def swallows_error(x):
    try:
        flag = bool(x[0] > 0)  # MARK: swallowed
    except Exception:
        flag = True
    return x * 2.0 if flag else x


@cuvil.jit
def updates_argument(x):
    x += 1.0  # MARK: inplace-arg
    return x


@cuvil.jit
def updates_temporary(x):
    y = x * 2.0
    y += 1.0
    y *= x
    return y


def _assert_warned(caplog, reason: str) -> None:
    messages = [r.getMessage() for r in caplog.records if r.name == "cuvil"]
    assert any(reason in m for m in messages), messages
    assert any(r.levelno == logging.WARNING for r in caplog.records if r.name == "cuvil")


def test_non_contiguous_argument_falls_back(caplog, rng):
    a = rng.standard_normal((6, 8), dtype=np.float32).T  # (8, 6), Fortran order
    b = rng.standard_normal((6, 3), dtype=np.float32)
    with caplog.at_level(logging.WARNING, logger="cuvil"):
        result, line = matmul(a, b), caller_line()
    np.testing.assert_allclose(result, a @ b, rtol=1e-6)
    reason = cuvil.last_fallback_reason(matmul)
    assert "argument 'A' is not C-contiguous" in reason
    assert f"{THIS_FILE}:{line}" in reason
    _assert_warned(caplog, reason)


def test_object_dtype_falls_back(caplog):
    x = np.array([1, 2.5, 3], dtype=object)
    with caplog.at_level(logging.WARNING, logger="cuvil"):
        result, line = identity_plus_one(x), caller_line()
    assert list(result) == [2, 3.5, 4]
    reason = cuvil.last_fallback_reason(identity_plus_one)
    assert "unsupported dtype object" in reason and f"{THIS_FILE}:{line}" in reason
    _assert_warned(caplog, reason)


def test_float16_is_compiled_and_keeps_its_dtype():
    x = np.arange(4, dtype=np.float16)
    result = identity_plus_one(x)
    assert cuvil.last_fallback_reason(identity_plus_one) is None
    assert result.dtype == np.float16
    np.testing.assert_array_equal(result, x + 1)


def test_unsupported_dtype_falls_back():
    x = np.arange(4, dtype=np.uint16)
    result, line = identity_plus_one(x), caller_line()
    assert result.dtype == np.uint16
    np.testing.assert_array_equal(result, x + 1)
    reason = cuvil.last_fallback_reason(identity_plus_one)
    assert "unsupported dtype uint16" in reason and f"{THIS_FILE}:{line}" in reason


def test_non_array_argument_falls_back():
    result, line = identity_plus_one(2.5), caller_line()
    assert result == 3.5
    reason = cuvil.last_fallback_reason(identity_plus_one)
    assert "argument 'x' is a float, not a numpy.ndarray" in reason
    assert f"{THIS_FILE}:{line}" in reason


def test_python_if_on_traced_value_falls_back(caplog, rng):
    x = rng.standard_normal((4, 5), dtype=np.float32)
    with caplog.at_level(logging.WARNING, logger="cuvil"):
        result = python_if(x)
    np.testing.assert_array_equal(result, python_if.__wrapped__(x))
    reason = cuvil.last_fallback_reason(python_if)
    assert "Python control flow on a traced array" in reason
    assert f"{THIS_FILE}:{line_of('MARK: python-if', THIS_FILE)}" in reason
    _assert_warned(caplog, reason)
    # The decision is cached per signature: the next call falls back without re-tracing.
    np.testing.assert_array_equal(python_if(-x), python_if.__wrapped__(-x))
    assert cuvil.last_fallback_reason(python_if) == reason


def test_unsupported_numpy_function_names_it(rng):
    x = rng.standard_normal((3, 4), dtype=np.float32)
    np.testing.assert_array_equal(einsum_user(x), x.T)
    reason = cuvil.last_fallback_reason(einsum_user)
    assert "np.einsum" in reason
    assert f"{THIS_FILE}:{line_of('MARK: einsum', THIS_FILE)}" in reason


def test_swallowed_unsupported_error_still_falls_back(rng):
    x = rng.standard_normal(5).astype(np.float32)
    np.testing.assert_array_equal(swallows_error(x), swallows_error.__wrapped__(x))
    reason = cuvil.last_fallback_reason(swallows_error)
    assert f"{THIS_FILE}:{line_of('MARK: swallowed', THIS_FILE)}" in reason


def test_inplace_update_of_argument_falls_back_and_mutates_like_numpy():
    x = np.zeros(3, dtype=np.float32)
    result = updates_argument(x)
    np.testing.assert_array_equal(x, [1.0, 1.0, 1.0])  # NumPy semantics: the caller's array changed
    assert result is x
    reason = cuvil.last_fallback_reason(updates_argument)
    assert (
        "in-place" in reason and f"{THIS_FILE}:{line_of('MARK: inplace-arg', THIS_FILE)}" in reason
    )


def test_inplace_update_of_temporary_compiles(rng):
    x = rng.standard_normal((4, 3), dtype=np.float32)
    np.testing.assert_allclose(updates_temporary(x), (x * 2.0 + 1.0) * x, rtol=1e-6)
    assert cuvil.last_fallback_reason(updates_temporary) is None


def test_compiled_call_clears_the_reason(rng):
    a = rng.standard_normal((4, 6), dtype=np.float32)
    b = rng.standard_normal((6, 3), dtype=np.float32)
    matmul(np.asfortranarray(a), b)
    assert cuvil.last_fallback_reason(matmul) is not None
    np.testing.assert_allclose(matmul(a, b), a @ b, rtol=1e-5, atol=1e-5)
    assert cuvil.last_fallback_reason(matmul) is None


def test_zero_size_argument_falls_back():
    x = np.zeros((0, 3), dtype=np.float32)
    assert identity_plus_one(x).shape == (0, 3)
    assert "is empty" in cuvil.last_fallback_reason(identity_plus_one)


def test_fallback_warning_is_logged_once_per_reason(caplog):
    @cuvil.jit
    def add_one(x):
        return x + 1

    x = np.arange(6, dtype=np.uint16)
    with caplog.at_level(logging.DEBUG, logger="cuvil"):
        for _ in range(3):
            add_one(x)  # one call site, so one reason
    warnings = [r for r in caplog.records if r.name == "cuvil" and r.levelno == logging.WARNING]
    assert len(warnings) == 1


def test_last_fallback_reason_rejects_plain_functions():
    with pytest.raises(TypeError, match="@cuvil.jit"):
        cuvil.last_fallback_reason(lambda x: x)


def test_builders_compute_with_numpy_outside_tracing(rng):
    x = rng.standard_normal((2, 3, 6, 6), dtype=np.float32)
    assert isinstance(cuvil.relu(x), np.ndarray)
    np.testing.assert_array_equal(cuvil.relu(x), np.maximum(x, 0))
    pooled = cuvil.max_pool2d(x, 2)
    assert pooled.shape == (2, 3, 3, 3)
    np.testing.assert_array_equal(pooled, x.reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5)))
    np.testing.assert_array_equal(cuvil.dropout(x, 0.5), x)


@pytest.mark.parametrize("drawn_before", [0, 5, 600])
def test_random_draws_while_tracing_fall_back_with_the_reason(drawn_before):
    # Values drawn while tracing would be frozen into the compiled code. However many numbers
    # were drawn before (the generator refills its key only every 624), a draw is seen.
    np.random.seed(1)
    np.random.randint(0, 2**31, drawn_before)

    @cuvil.jit
    def noisy(x):
        return x + np.random.rand(*x.shape).astype(np.float32)

    a = np.zeros(64, np.float32)
    first, second = noisy(a), noisy(a)
    assert not np.array_equal(first, second), "the same random values twice"
    reason = cuvil.last_fallback_reason(noisy)
    assert reason is not None and "draws random numbers" in reason
    assert "Pass the random values in as arguments" in reason


_FIRST_IMPORT_CHILD = """
import sys, numpy as np, cuvil
quiet = cuvil.jit(lambda x: x * 2.0)
quiet(np.zeros(8, np.float32))
untouched = "numpy.random" not in sys.modules
noisy = cuvil.jit(lambda x: x + np.random.rand(*x.shape).astype(np.float32))
noisy(np.zeros(8, np.float32))
print(untouched, cuvil.last_fallback_reason(quiet), cuvil.last_fallback_reason(noisy))
"""


def test_tracing_leaves_numpy_random_unimported_and_still_sees_first_draws():
    """NumPy imports numpy.random on first use (~15 ms): a trace that does not use it
    does not import it; a function whose trace imports it and draws is still refused."""
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_IMPORT_CHILD],
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    ).stdout
    assert out.startswith("True None "), out
    assert "draws random numbers" in out


@pytest.mark.parametrize(
    ("dtype", "fn"),
    [
        ("float16", lambda x: np.maximum(x, x)),
        ("float32", lambda x: np.maximum(x, x)),
        ("float64", lambda x: np.maximum(x, x)),
        ("int32", lambda x: np.maximum(x, x)),
        ("int64", lambda x: np.maximum(x, x)),
        (np.longlong, lambda x: np.maximum(x, x)),  # int64 under NumPy's other type number
        ("bool", lambda x: np.where(x, x, x)),
    ],
)
def test_compiled_calls_take_every_compiled_dtype(dtype, fn):
    """The call path reads each argument's dtype from its type number, not NumPy's name."""
    jitted = cuvil.jit(fn)
    x = np.arange(6).reshape(2, 3).astype(dtype)
    result = jitted(x)
    assert cuvil.last_fallback_reason(jitted) is None
    assert result.dtype == x.dtype and np.array_equal(result, fn(x))


def test_compiled_code_rejects_a_wrong_or_byte_swapped_dtype_by_name():
    jitted = cuvil.jit(lambda x: x + 1.0)
    x = np.ones((2, 3), np.float32)
    jitted(x)
    compiled = cuvil.compilations()[-1].compiled
    out = np.empty((2, 3), np.float32)
    for wrong, name in ((x.astype(">f4"), ">f4"), (x.astype(np.float64), "float64")):
        with pytest.raises(ValueError, match=f"input 0 is {name}\\(2, 3\\) but the compiled "
                                             "function expects float32\\(2, 3\\)"):  # fmt: skip
            compiled([wrong], [out])
    compiled([x], [out])
    assert np.array_equal(out, x + 1.0)
