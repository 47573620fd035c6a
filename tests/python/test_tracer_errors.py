"""Invalid traced programs raise TraceError naming the op, the shapes and the user's line."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import line_of

import cuvil

THIS_FILE = os.path.abspath(__file__)


def _where(marker: str) -> str:
    return f"{THIS_FILE}:{line_of(marker, THIS_FILE)}"


@cuvil.jit
def bad_matmul(a, b):
    return a @ b  # MARK: bad-matmul


def test_mismatched_matmul_names_both_shapes_and_line():
    a, b = np.ones((3, 4), np.float32), np.ones((5, 6), np.float32)
    with pytest.raises(cuvil.TraceError) as info:
        bad_matmul(a, b)
    message = str(info.value)
    assert "cuvil.matmul" in message
    assert "(3, 4)" in message and "(5, 6)" in message
    assert _where("MARK: bad-matmul") in message
    assert cuvil.last_fallback_reason(bad_matmul) is None  # errors are not fallbacks


def test_trace_error_is_a_value_error():
    assert issubclass(cuvil.TraceError, ValueError)


def test_broadcast_mismatch():
    def add(a, b):
        return a + b  # MARK: bad-add

    with pytest.raises(cuvil.TraceError) as info:
        cuvil.trace_to_mlir(add, np.ones((3, 4), np.float32), np.ones((5,), np.float32))
    message = str(info.value)
    assert "cuvil.add" in message and "(3, 4)" in message and "(5,)" in message
    assert _where("MARK: bad-add") in message


def test_reshape_size_mismatch():
    def reshape(x):
        return x.reshape(5, -1)  # MARK: bad-reshape

    with pytest.raises(cuvil.TraceError) as info:
        cuvil.trace_to_mlir(reshape, np.ones((3, 4), np.float32))
    message = str(info.value)
    assert "cuvil.reshape" in message and "(3, 4)" in message
    assert _where("MARK: bad-reshape") in message


def test_concat_mismatch():
    def concat(a, b):
        return np.concatenate([a, b], axis=0)  # MARK: bad-concat

    with pytest.raises(cuvil.TraceError) as info:
        cuvil.trace_to_mlir(concat, np.ones((2, 3), np.float32), np.ones((2, 4), np.float32))
    message = str(info.value)
    assert "(2, 3)" in message and "(2, 4)" in message
    assert _where("MARK: bad-concat") in message


def test_conv2d_channel_mismatch():
    def conv(x, w):
        return cuvil.conv2d(x, w)  # MARK: bad-conv

    with pytest.raises(cuvil.TraceError) as info:
        cuvil.trace_to_mlir(
            conv, np.ones((1, 3, 8, 8), np.float32), np.ones((4, 2, 3, 3), np.float32)
        )
    message = str(info.value)
    assert "(1, 3, 8, 8)" in message and "(4, 2, 3, 3)" in message
    assert _where("MARK: bad-conv") in message


def test_layer_norm_parameter_mismatch():
    def norm(x, g):
        return cuvil.layer_norm(x, g, None)  # MARK: bad-norm

    with pytest.raises(cuvil.TraceError) as info:
        cuvil.trace_to_mlir(norm, np.ones((4, 6), np.float32), np.ones((5,), np.float32))
    assert "(5,)" in str(info.value) and _where("MARK: bad-norm") in str(info.value)


def test_numpy_errors_keep_numpy_types():
    def index(x):
        return x[5]

    with pytest.raises(IndexError, match="out of bounds"):
        cuvil.trace_to_mlir(index, np.ones((3,), np.float32))

    def axis(x):
        return x.sum(axis=2)

    with pytest.raises(np.exceptions.AxisError):
        cuvil.trace_to_mlir(axis, np.ones((3, 4), np.float32))


def test_unsupported_construct_from_trace_to_mlir_names_line():
    def branchy(x):
        if x.max() > 1:  # MARK: branch
            return x
        return x * 2

    with pytest.raises(cuvil.UnsupportedConstructError) as info:
        cuvil.trace_to_mlir(branchy, np.ones(3, np.float32))
    assert "Python control flow" in info.value.reason
    assert _where("MARK: branch") in info.value.reason


@pytest.mark.parametrize(
    "body, construct",
    [
        (lambda x: float(x.sum()), "float()"),
        (lambda x: x[x > 0], "boolean mask indexing"),
        (lambda x: x[::-1], "negative step"),
        (lambda x: divmod(x, 2), "divmod()"),
        (lambda x: np.linalg.norm(x), "np.linalg.norm"),
        (lambda x: np.asarray(x), "numpy.ndarray"),
        (lambda x: x.tolist(), "ndarray.tolist"),
        (lambda x: None, "returning None"),
        (lambda x: {"y": x}, "returning a dict"),
        (lambda x: x.astype(np.uint16), "uint16"),
    ],
)
def test_unsupported_constructs_are_named(body, construct):
    with pytest.raises(cuvil.UnsupportedConstructError) as info:
        cuvil.trace_to_mlir(body, np.ones((3, 4), np.float32))
    assert construct in info.value.reason


def test_traced_array_leaking_between_traces_falls_back():
    kept = []

    @cuvil.jit
    def leaky(x):
        if kept:
            return x + kept[0]
        kept.append(x * 2.0)
        return x

    x = np.ones(3, np.float32)
    cuvil.trace_to_mlir(leaky, x)  # stores a tracer in `kept`
    with pytest.raises(cuvil.UnsupportedConstructError, match="outside the trace"):
        cuvil.trace_to_mlir(leaky, x)


def test_an_unregistered_target_is_refused():
    with pytest.raises(
        ValueError, match="unknown target .rocm.; registered targets: c, cpu, cuda or wasm"
    ):
        cuvil.jit(target="rocm")(lambda x: x)


def test_trace_to_mlir_rejects_non_arrays():
    with pytest.raises(TypeError, match="argument 'x'"):
        cuvil.trace_to_mlir(lambda x: x, 3.0)
    with pytest.raises(TypeError, match="uint8"):
        cuvil.trace_to_mlir(lambda x: x, np.ones(2, np.uint8))


def test_inspect_ir_before_any_call_explains_what_to_do():
    @cuvil.jit
    def never_called(x):
        return x

    with pytest.raises(RuntimeError, match="has not been compiled yet"):
        cuvil.inspect_ir(never_called)
    with pytest.raises(TypeError):
        cuvil.inspect_ir(lambda x: x)
