"""The traced IR text: types, attributes, constants, NumPy promotion rules and source locations."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from conftest import line_of

import cuvil
from cuvil import _mlir

THIS_FILE = os.path.abspath(__file__)
F32 = np.ones((2, 3), np.float32)


def _ops(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if '= "cuvil.' in line]


def test_module_shape_and_locations():
    def affine(x, w, b):
        y = x @ w  # MARK: affine-matmul
        return y + b

    text = cuvil.trace_to_mlir(affine, F32, np.ones((3, 4), np.float32), np.ones(4, np.float32))
    assert text.startswith("module {\n  func.func @affine(")
    assert "-> (tensor<2x4xf32>)" in text
    assert '"func.return"(%1) : (tensor<2x4xf32>) -> ()' in text
    matmul, add = _ops(text)
    line = line_of("MARK: affine-matmul", THIS_FILE)
    # Column is 1-based: the `x` of `x @ w`.
    assert matmul.endswith(f'loc("{THIS_FILE}":{line}:13)')
    assert add.startswith('%1 = "cuvil.add"(%0, %arg2)')
    def_line = line_of("def affine(", THIS_FILE)
    assert f'%arg0: tensor<2x3xf32> loc("{THIS_FILE}":{def_line}:' in text


def test_decorated_function_arguments_point_at_the_def_line():
    @cuvil.jit(target="cpu")
    def decorated(x):  # MARK: decorated-def
        return x * 2.0

    text = cuvil.trace_to_mlir(decorated, F32)
    assert f'loc("{THIS_FILE}":{line_of("MARK: decorated-def", THIS_FILE)}:5)' in text


def test_weak_python_scalars_keep_float32():
    text = cuvil.trace_to_mlir(lambda x: x * 2.0 + 1, F32)
    assert "f64" not in text
    assert "dense<2.0> : tensor<f32>" in text and "dense<1.0> : tensor<f32>" in text


def test_numpy_scalars_are_strong():
    text = cuvil.trace_to_mlir(lambda x: x * np.float64(2.0), F32)
    assert '"cuvil.cast"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf64>' in text
    assert "-> (tensor<2x3xf64>)" in text


def test_mixed_dtypes_insert_casts_like_numpy():
    text = cuvil.trace_to_mlir(lambda a, b: a + b, np.ones(3, np.int32), np.ones(3, np.float32))
    casts = [op for op in _ops(text) if '"cuvil.cast"' in op]
    assert len(casts) == 2 and all("xf64" in c for c in casts)
    text = cuvil.trace_to_mlir(lambda a: a / 2, np.ones(3, np.int32))
    assert "tensor<3xf64>" in text and "-> (tensor<3xf64>)" in text


def test_reduction_and_layout_attributes():
    def f(x):
        return x.sum(axis=(-1, 0), keepdims=True), np.transpose(x, (2, 0, 1)), x[1:, ::2, 3]

    text = cuvil.trace_to_mlir(f, np.ones((4, 5, 6), np.float32))
    assert "<{axes = array<i64: 0, 2>, keepdims = true}>" in text
    assert "<{permutation = array<i64: 2, 0, 1>}>" in text
    assert (
        "<{start = array<i64: 1, 0, 3>, limit = array<i64: 4, 5, 4>, step = array<i64: 1, 2, 1>}>"
        in text
    )
    assert '"cuvil.reshape"' in text and "-> tensor<3x3xf32>" in text


def test_nn_op_attributes():
    def f(x, w):
        y = cuvil.conv2d(x, w, strides=2, padding=(1, 2), dilations=(1, 1), groups=1)
        y = cuvil.avg_pool2d(y, 2, padding=1, count_include_pad=False)
        y = cuvil.layer_norm(y, axis=1, epsilon=1e-6)
        return cuvil.dropout(cuvil.softmax(y, axis=-1), 0.1)

    text = cuvil.trace_to_mlir(
        f, np.ones((1, 3, 8, 8), np.float32), np.ones((4, 3, 3, 3), np.float32)
    )
    assert (
        "strides = array<i64: 2, 2>, padding = array<i64: 1, 2, 1, 2>, "
        "dilations = array<i64: 1, 1>, groups = 1 : i64" in text
    )
    assert "kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>" in text
    assert "count_include_pad = false" in text
    assert "<{axis = 1 : i64, epsilon = 1.0e-06 : f64}>" in text
    assert "<{axis = 3 : i64}>" in text and "<{ratio = 0.1 : f64}>" in text


def test_compare_and_where():
    text = cuvil.trace_to_mlir(lambda x: np.where(x >= 1, x, 0.0), F32)
    assert "<{predicate = 5 : i64}>" in text and "-> tensor<2x3xi1>" in text  # ge
    assert re.search(r'"cuvil.where"\(%\d+, %arg0, %\d+\) : \(tensor<2x3xi1>, ', text)


def test_captured_arrays_become_hex_constants_once():
    weights = np.arange(6, dtype=np.float32).reshape(2, 3)

    def f(x):
        return x * weights + weights

    text = cuvil.trace_to_mlir(f, F32)
    constants = [op for op in _ops(text) if '"cuvil.constant"' in op]
    assert len(constants) == 1
    expected = weights.astype("<f4").tobytes().hex()
    assert f'dense<"0x{expected}"> : tensor<2x3xf32>' in constants[0]


@pytest.mark.parametrize(
    "array, text",
    [
        (np.array([True, False, True]), 'dense<"0x05"> : tensor<3xi1>'),
        (np.ones((2, 2), np.float32), "dense<1.0> : tensor<2x2xf32>"),
        (np.array(-0.0), "dense<-0.0> : tensor<f64>"),
        (np.array(np.nan, np.float32), "dense<0x7FC00000> : tensor<f32>"),
        (np.array(np.inf), "dense<0x7FF0000000000000> : tensor<f64>"),
        (
            np.array([1, -2], np.int64),
            'dense<"0x0100000000000000feffffffffffffff"> : tensor<2xi64>',
        ),
        (np.array(7, np.int32), "dense<7> : tensor<i32>"),
        (np.array(1e-5), "dense<1.0e-05> : tensor<f64>"),
    ],
)
def test_dense_constant_forms(array, text):
    assert _mlir.format_dense(array) == text


def test_locations_escape_paths():
    from cuvil._source import SourceLoc

    assert _mlir.format_loc(SourceLoc('/a "b"\\c.py', 3, 4)) == r'loc("/a \22b\22\5Cc.py":3:4)'


def test_symbol_names_are_sanitized():
    assert _mlir.sanitize_symbol("<lambda>") == "lambda"
    assert _mlir.sanitize_symbol("9lives") == "_9lives"
    text = cuvil.trace_to_mlir(lambda x: x + 1, F32)
    assert "func.func @lambda(" in text


def test_nested_jit_functions_are_inlined():
    @cuvil.jit
    def inner(x):
        return np.exp(x)

    def outer(x):
        return inner(x) + 1.0

    text = cuvil.trace_to_mlir(outer, F32)
    assert '"cuvil.exp"' in text and '"cuvil.add"' in text


def test_inplace_updates_rebind_values():
    def f(x):
        y = x * 2.0
        alias = y
        y += 1.0
        return alias

    text = cuvil.trace_to_mlir(f, F32)
    # `alias` is the same array object as `y`, so it sees the update, as in NumPy.
    updated = re.search(r'(%\d+) = "cuvil.add"', text).group(1)
    assert f'"func.return"({updated})' in text


def test_matmul_vector_operands_are_reshaped():
    text = cuvil.trace_to_mlir(
        lambda v, m: v @ m, np.ones(3, np.float32), np.ones((3, 4), np.float32)
    )
    ops = _ops(text)
    assert '"cuvil.reshape"(%arg0)' in ops[0] and "-> tensor<1x3xf32>" in ops[0]
    assert "-> tensor<1x4xf32>" in ops[1] and "-> tensor<4xf32>" in ops[2]
