"""Symbolic dimensions: to_ir_with_dynamic_shape keeps them in the IR, checks them, sizes outputs"""

from __future__ import annotations

import numpy as np
import pytest

import cuvil
from cuvil import _symbolic
from cuvil.frontend import build_ir, to_ir_with_dynamic_shape
from cuvil.frontends import to_ir_module
from cuvil.frontends.builder import IRBuilder, TensorType

W = np.arange(8 * 16, dtype=np.float32).reshape(8, 16) / 100.0
B = np.linspace(-1.0, 1.0, 16, dtype=np.float32)


def image_block(x):
    return np.maximum(x * 2.0, 0.0).sum(axis=1)


def mlp(x):
    return np.maximum(x @ W + B, 0.0)


def test_symbols_stay_symbolic_in_the_ir():
    spec = cuvil.TensorSpec(shape=(1, 3, "h", "w"), dtype="float32")
    module = to_ir_with_dynamic_shape(image_block, input_spec=[spec])
    assert 'tensor<1x3x?x?xf32> {cuvil.symbols = ["h", "w"]}' in module.text
    assert module.is_symbolic
    assert module.input_spec == {"x": spec}
    assert module.output_spec == (cuvil.TensorSpec((1, "h", "w"), "float32"),)
    assert module.output_shapes(np.zeros((1, 3, 5, 7), np.float32)) == ((1, 5, 7),)
    assert module.output_shapes((1, 3, 224, 96)) == ((1, 224, 96),)


def test_batch_symbol_through_a_gemm_and_reshape_minus_one():
    def model(x):
        y = mlp(x)
        return y, y.reshape(2, -1)

    module = to_ir_with_dynamic_shape(model, {"x": (("N", 8), "float32")})
    assert module.output_spec == (
        cuvil.TensorSpec(("N", 16), "float32"),
        cuvil.TensorSpec((2, "N * 8"), "float32"),
    )
    for n in (1, 3, 8):
        assert module.output_shapes((n, 8)) == ((n, 16), (2, n * 8))


def test_unnamed_dims_get_names_of_their_own():
    module = to_ir_with_dynamic_shape(lambda a: a * 3.0, [cuvil.TensorSpec((None, 4), "float32")])
    assert '{cuvil.symbols = ["arg0_d0"]}' in module.text
    assert module.output_spec == (cuvil.TensorSpec(("arg0_d0", 4), "float32"),)


def test_different_symbols_where_sizes_must_be_equal_are_an_error():
    specs = [cuvil.TensorSpec(("N", 4), "float32"), cuvil.TensorSpec(("M", 4), "float32")]
    with pytest.raises(cuvil.CompileError) as info:
        to_ir_with_dynamic_shape(lambda a, b: a + b, specs)
    message = str(info.value)
    assert "'cuvil.add' op dimensions N and M of the operands differ" in message
    assert "test_symbolic_shapes.py" in message  # the op's location, the user's line
    # The same name is the same size: accepted.
    same = [cuvil.TensorSpec(("N", 4), "float32"), cuvil.TensorSpec(("N", 4), "float32")]
    assert to_ir_with_dynamic_shape(lambda a, b: a + b, same).output_spec[0].shape == ("N", 4)


def test_output_shapes_check_the_bindings():
    module = to_ir_with_dynamic_shape(
        lambda a, b: a + b,
        [cuvil.TensorSpec(("N", 4), "float32"), cuvil.TensorSpec(("N", 4), "float32")],
    )
    with pytest.raises(ValueError, match="symbol 'N' is 2 at dim 0 of input 'a' but 3"):
        module.output_shapes((2, 4), (3, 4))
    with pytest.raises(ValueError, match="input 'b' has size 5 at dim 1, declared 4"):
        module.output_shapes((2, 4), (2, 5))


def test_size_expressions_evaluate_like_python():
    bindings = {"h": 9, "w": 224, "N": 3}
    assert _symbolic.evaluate("((h + -1) // 2) + 1", bindings) == 5
    assert _symbolic.evaluate("N * (w // 16)", bindings) == 42
    with pytest.raises(ValueError, match="could not name"):
        _symbolic.evaluate("?", bindings)
    with pytest.raises(ValueError, match="not a size expression"):
        _symbolic.evaluate("__import__('os')", bindings)


def test_symbol_names_must_be_identifiers():
    with pytest.raises(cuvil.ShapeSpecError, match="must be Python identifiers"):
        to_ir_with_dynamic_shape(image_block, [cuvil.TensorSpec((1, 3, "h w", 4), "float32")])


def test_one_compilation_serves_every_batch_size():
    def model(x):
        y = mlp(x)
        return y - y.mean(axis=0, keepdims=True), y.reshape(2, -1)

    module = to_ir_with_dynamic_shape(model, [cuvil.TensorSpec(("N", 8), "float32")])
    compiled = module.compile()
    record = compiled.compilation
    rng = np.random.default_rng(0)
    for n in (1, 3, 8):
        x = rng.standard_normal((n, 8)).astype(np.float32)
        centered, folded = compiled(x)
        y = mlp(x)
        np.testing.assert_allclose(
            centered, y - y.mean(axis=0, keepdims=True), rtol=1e-5, atol=1e-5
        )
        np.testing.assert_allclose(folded, y.reshape(2, -1), rtol=1e-5, atol=1e-5)
    # The calls compiled nothing more: the last compilation is still the one
    # compile() made, the only one of this IR (the list keeps the most recent).
    recent = cuvil.compilations()
    assert recent[-1] is record
    assert sum(r.mlir == module.text for r in recent) == 1


def test_symbolic_image_sizes_and_gather_run_compiled():
    def model(x, table, ids):
        return image_block(x), np.take(table, ids, axis=0) * 2.0

    specs = [
        cuvil.TensorSpec((1, 3, "h", "w"), "float32"),
        cuvil.TensorSpec((10, 4), "float32"),
        cuvil.TensorSpec(("B", "T"), "int64"),
    ]
    compiled = to_ir_with_dynamic_shape(model, specs).compile()
    rng = np.random.default_rng(1)
    table = rng.standard_normal((10, 4)).astype(np.float32)
    for (h, w), (b, t) in (((5, 7), (1, 3)), ((16, 9), (2, 5))):
        x = rng.standard_normal((1, 3, h, w)).astype(np.float32)
        ids = rng.integers(-10, 10, (b, t))
        image, rows = compiled(x, table, ids)
        np.testing.assert_allclose(image, image_block(x), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(rows, np.take(table, ids, axis=0) * 2.0)


def test_calls_with_clashing_sizes_are_refused():
    compiled = to_ir_with_dynamic_shape(
        lambda a, b: a + b,
        [cuvil.TensorSpec(("N", 4), "float32"), cuvil.TensorSpec(("N", 4), "float32")],
    ).compile()
    a, b = np.ones((2, 4), np.float32), np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="symbol 'N' is 2 at dim 0 of input 'a' but 3"):
        compiled(a, b)
    with pytest.raises(ValueError, match="input 'a' has shape"):
        compiled(np.ones((2, 5), np.float32), b)


def test_static_build_ir_still_rejects_none_and_symbols():
    with pytest.raises(cuvil.ShapeSpecError, match="Missing shape attr") as info:
        build_ir(mlp, {"x": (None, 8)})
    assert "to_ir_with_dynamic_shape" in str(info.value)
    with pytest.raises(cuvil.ShapeSpecError, match="not supported by build_ir"):
        build_ir(mlp, {"x": ("N", 8)})


# Models with dynamic batch and spatial / sequence sizes: each is compiled
# once from its symbolic IR and compared at several sizes with NumPy (the
# model called on arrays runs Cuvil's NumPy implementations) and with a
# static compilation of the same model at that size.

RNG = np.random.default_rng(7)


def _weights(*shape, scale=0.2):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


CONV1, CONV2, CONV3 = _weights(8, 3, 3, 3), _weights(8, 8, 3, 3), _weights(8, 8, 3, 3)
GROUPED = _weights(8, 4, 3, 3)
BN = (
    np.linspace(0.5, 1.5, 8, dtype=np.float32),
    np.linspace(-0.1, 0.1, 8, dtype=np.float32),
    np.linspace(-0.2, 0.2, 8, dtype=np.float32),
    np.linspace(0.8, 1.2, 8, dtype=np.float32),
)
HEAD = _weights(16, 5)


def resnet_style(x):
    """Stem (conv, BN, ReLU, max pool), a residual block, then a grouped
    strided conv and an average pool side by side, concatenated over
    channels, global average pool and a classifier."""
    y = cuvil.relu(cuvil.batch_norm(cuvil.conv2d(x, CONV1, padding=1), *BN))
    y = cuvil.max_pool2d(y, 3, strides=2, padding=1)
    r = cuvil.relu(cuvil.batch_norm(cuvil.conv2d(y, CONV2, padding=1), *BN))
    y = cuvil.relu(cuvil.conv2d(r, CONV3, padding=1) + y)
    a = cuvil.conv2d(y, GROUPED, strides=2, padding=1, groups=2)
    b = cuvil.avg_pool2d(y, 3, strides=2, padding=1, count_include_pad=False)
    features = np.concatenate([a, b], axis=1)
    return features, features.mean(axis=(2, 3)) @ HEAD


C, HEADS = 32, 4
D = C // HEADS
LN = (np.linspace(0.9, 1.1, C, dtype=np.float32), np.linspace(-0.05, 0.05, C, dtype=np.float32))
WQ, WK, WV = (_weights(HEADS, C, D) for _ in range(3))
WO, W1, W2 = _weights(C, C), _weights(C, 4 * C), _weights(4 * C, C)
B1, B2 = _weights(4 * C, scale=0.05), _weights(C, scale=0.05)


def attention(x):
    """Multi-head self-attention over (B, T, C): per head, Q @ K^T is a
    batched matmul of two (B, T, D) operands whose T is dynamic; the heads
    are concatenated along the channels."""
    heads = []
    for h in range(HEADS):
        q, k, v = x @ WQ[h], x @ WK[h], x @ WV[h]
        scores = (q @ k.transpose(0, 2, 1)) * np.float32(1.0 / np.sqrt(D))
        heads.append(cuvil.softmax(scores, axis=-1) @ v)
    return np.concatenate(heads, axis=-1) @ WO


def gpt2_block(x):
    """Pre-norm decoder block: x + attn(ln(x)), then x + mlp(ln(x))."""
    x = x + attention(cuvil.layer_norm(x, *LN))
    return x + cuvil.gelu(cuvil.layer_norm(x, *LN) @ W1 + B1) @ W2 + B2


def _compiled_once(model, spec, sizes, rtol=1e-4, atol=1e-4):
    """Compiles `model` for the symbolic `spec` and checks it at each shape in
    `sizes` against the model run on arrays; the calls compile nothing."""
    compiled = to_ir_with_dynamic_shape(model, [spec]).compile()
    count = len(cuvil.compilations())
    for shape in sizes:
        x = RNG.standard_normal(shape).astype(np.float32)
        got, want = compiled(x), model(x)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    assert len(cuvil.compilations()) == count
    return compiled


def _matches_static(model, compiled, shape):
    """The dynamic compilation gives the static compilation's numbers."""
    x = RNG.standard_normal(shape).astype(np.float32)
    static = build_ir(model, {"x": shape}).compile()
    got, want = compiled(x), static(x)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_resnet_style_cnn_with_dynamic_batch_and_image_size():
    spec = cuvil.TensorSpec(("N", 3, "h", "w"), "float32")
    compiled = _compiled_once(resnet_style, spec, [(1, 3, 9, 11), (2, 3, 16, 16), (3, 3, 7, 20)])
    _matches_static(resnet_style, compiled, (2, 3, 12, 10))


def test_gpt2_block_with_dynamic_batch_and_sequence():
    spec = cuvil.TensorSpec(("B", "T", C), "float32")
    compiled = _compiled_once(gpt2_block, spec, [(1, 1, C), (2, 5, C), (3, 17, C), (1, 40, C)])
    _matches_static(gpt2_block, compiled, (2, 24, C))


def window_ops(x):
    """Each window op with dynamic batch and image sizes: strides, dilation,
    groups, both average-pool divisors, asymmetric padding."""
    return (
        cuvil.conv2d(x, CONV1, strides=(2, 1), padding=(1, 0, 2, 1), dilations=(2, 1)),
        cuvil.conv2d(cuvil.relu(cuvil.conv2d(x, CONV1)), GROUPED, groups=2),
        cuvil.max_pool2d(x, (3, 2), strides=(1, 2), padding=(1, 0, 1, 1)),
        cuvil.avg_pool2d(x, 3, strides=2, padding=1, count_include_pad=True),
        cuvil.avg_pool2d(x, 3, strides=2, padding=1, count_include_pad=False),
    )


def test_convolution_and_pooling_with_dynamic_sizes():
    spec = cuvil.TensorSpec(("N", 3, "h", "w"), "float32")
    _compiled_once(window_ops, spec, [(1, 3, 5, 6), (2, 3, 9, 5), (4, 3, 13, 17)])


PROJECT = _weights(1, 4, 3)


def concat_and_batched_matmuls(x):
    """Concatenation along a dynamic axis and static ones; batched matmuls of
    two dynamic (B, 2, T, .) operands, and one against a broadcast weight."""
    y = x * 2.0
    return (
        np.concatenate([x, y, x], axis=2),
        np.concatenate([x, y], axis=3),
        np.concatenate([y, x], axis=1),
        x @ y.transpose(0, 1, 3, 2),
        x @ PROJECT,
    )


def test_concat_and_batched_matmul_with_dynamic_sizes():
    spec = cuvil.TensorSpec(("B", 2, "T", 4), "float32")
    _compiled_once(concat_and_batched_matmuls, spec, [(1, 2, 1, 4), (3, 2, 5, 4), (2, 2, 33, 4)])


def test_reduction_of_a_constant_broadcast_like_a_dynamic_tensor():
    """Fused, the reduction read no input and the vectorizer dropped its dimension (gave 1)."""
    b = IRBuilder("f")
    x = b.argument(TensorType(("N", 20), "float32"))
    one = b.constant(np.ones((1, 1), np.float32))
    y = b.op("cuvil.broadcast_to", [one, x], result_type=TensorType((None, 20), "float32"))
    s = b.op("cuvil.reduce_sum", [y], {"axes": [1], "keepdims": False})
    module = to_ir_module(b.program([s]), name="f", source="")
    for fusion in (True, False):
        compiled = module.compile(enable_fusion=fusion)
        for n in (1, 3):
            np.testing.assert_array_equal(compiled(np.zeros((n, 20), np.float32)), np.full(n, 20.0))


def test_gather_from_data_of_dynamic_size():
    """Constant indices into a dynamic tensor (a slice by gather) crashed the compiler."""
    b = IRBuilder("f")
    x = b.argument(TensorType(("N", 8, "L"), "float32"))
    ids = b.argument(TensorType(("K",), "int64"))
    cols = b.op("cuvil.gather", [x, b.constant(np.arange(3, dtype=np.int64))], {"axis": 2})
    rows = b.op("cuvil.gather", [x, ids], {"axis": 0})
    module = to_ir_module(b.program([cols, rows]), name="f", source="")
    compiled = module.compile()
    rng = np.random.default_rng(0)
    for n, length, k in ((1, 5, 2), (4, 9, 6)):
        data = rng.standard_normal((n, 8, length)).astype(np.float32)
        index = rng.integers(0, n, k).astype(np.int64)
        got_cols, got_rows = compiled(data, index)
        np.testing.assert_array_equal(got_cols, data[:, :, :3])
        np.testing.assert_array_equal(got_rows, data[index])


def test_slicing_a_static_axis_of_a_tensor_with_symbolic_dims():
    """A qkv split on (B, T, 3C): the static axis is sliced, B and T stay symbolic."""
    from cuvil.frontends import composites

    b = IRBuilder("f")
    x = b.argument(TensorType(("B", "T", 12), "float32"))
    parts = [composites.slice_axis(b, x, 2, 4 * i, 4 * (i + 1)) for i in range(3)]
    strided = composites.slice_axis(b, x, 2, 1, 12, 3)
    module = to_ir_module(b.program([*parts, strided]), name="f", source="")
    compiled = module.compile()
    before = len(cuvil.compilations())
    rng = np.random.default_rng(0)
    for batch, length in ((1, 1), (2, 5), (3, 7)):
        data = rng.standard_normal((batch, length, 12)).astype(np.float32)
        *got, got_strided = compiled(data)
        for i, part in enumerate(got):
            np.testing.assert_array_equal(part, data[:, :, 4 * i : 4 * (i + 1)])
        np.testing.assert_array_equal(got_strided, data[:, :, 1:12:3])
    assert len(cuvil.compilations()) <= before + 1
    with pytest.raises(
        ValueError,
        match="symbolic axis 1 .* from -2 to 5: a slice from the end must stop at the end",
    ):
        composites.slice_axis(b, x, 1, -2, 5)


def test_static_limits_on_a_symbolic_axis_are_read_at_run_time_and_their_range_checked():
    """x[:, :2], x[:, 1:-1], x[:, 2::2], x[:, -2:] and x[:, -2:-1] of a symbolic T: sizes 2,
    T - 2, ceil((T - 2) / 2), 2 and 1, true for T >= 2, which every call checks (Python would
    clamp a smaller T)."""
    from cuvil.frontends import composites

    b = IRBuilder("f")
    x = b.argument(TensorType(("B", "T", 12), "float32"))
    end = 2**63 - 1
    bounds = ((0, 2), (1, -1), (2, end, 2), (-2, end), (-2, -1))
    parts = [composites.slice_axis(b, x, 1, *bound) for bound in bounds]
    module = to_ir_module(b.program(parts), name="f", source="")
    assert [s.shape[1] for s in module.output_spec] == [2, "T + -2", "-(-(T + -2) // 2)", 2, 1]
    assert module.symbol_ranges == {"T": (2, None)}
    compiled = module.compile()
    rng = np.random.default_rng(0)
    for length in (2, 3, 8):
        data = rng.standard_normal((2, length, 12)).astype(np.float32)
        wanted = (data[:, :2], data[:, 1:-1], data[:, 2::2], data[:, -2:], data[:, -2:-1])
        for got, want in zip(compiled(data), wanted):
            np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="input 'arg0' dim 1 is 1, but the model allows 2 <= T"):
        compiled(np.zeros((2, 1, 12), np.float32))


def test_numpy_slices_of_symbolic_axes_with_static_bounds():
    def f(x):
        return x[1:] * 2, x[:, -2:], x[:-1, 1:3]

    module = to_ir_with_dynamic_shape(f, input_spec=[cuvil.TensorSpec(("N", "M"), "float32")])
    assert [s.shape for s in module.output_spec] == [("N + -1", "M"), ("N", 2), ("N + -1", 2)]
    assert module.symbol_ranges == {"N": (1, None), "M": (3, None)}
    compiled = module.compile()
    for n, m in ((1, 3), (4, 6), (7, 3)):
        a = np.random.default_rng(n).standard_normal((n, m)).astype(np.float32)
        for got, want in zip(compiled(a), f(a)):
            np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="dim 1 is 2, but the model allows 3 <= M"):
        compiled(np.zeros((4, 2), np.float32))


def test_numpy_slices_of_static_axes_with_symbolic_dims():
    def f(x):
        return x[:, 1:4] * 2 + x[..., ::2][:, :3]

    module = to_ir_with_dynamic_shape(f, input_spec=[cuvil.TensorSpec(("N", 8), "float32")])
    assert module.output_spec == (cuvil.TensorSpec(("N", 3), "float32"),)
    compiled = module.compile()
    for n in (1, 5):
        a = np.random.default_rng(n).standard_normal((n, 8)).astype(np.float32)
        np.testing.assert_allclose(compiled(a), f(a), rtol=1e-6)
    spec = [cuvil.TensorSpec(("N", 8), "float32")]
    with pytest.raises(cuvil.UnsupportedConstructError, match="the symbolic axis 0 .size 'N'."):
        to_ir_with_dynamic_shape(lambda x: x[::-1], input_spec=spec)
    with pytest.raises(cuvil.UnsupportedConstructError, match="an integer index or np.newaxis"):
        to_ir_with_dynamic_shape(lambda x: x[:, 0], input_spec=spec)


def test_a_result_larger_than_its_out_param_is_an_error_not_a_write_past_it():
    """The compiled code checks each dynamic result size against the buffer the caller sized
    from the symbols (cuvil-check-result-sizes) and ends the call with an error."""
    b = IRBuilder("rows")
    x = b.argument(TensorType(("N", 4), "float32"))
    module = to_ir_module(b.program([b.op("cuvil.tanh", [x])]), name="rows", source="")
    compiled = module.compile()
    assert "cuvil_result_size_mismatch" in compiled.inspect("llvm-dialect")
    data = np.ones((3, 4), np.float32)
    # Sizing the output from a wrong expression, as a wrong symbol derivation would.
    with pytest.raises(
        RuntimeError, match="output 0 has size 3 in dim 0 but its buffer was sized 5"
    ):
        compiled._entry.run([data], [(5, 4)])
    np.testing.assert_allclose(compiled(data), np.tanh(data), rtol=1e-6)


def test_a_static_range_of_a_symbolic_axis_broadcasts_like_numpy():
    """``x[1:2]`` of an ``n``-long axis has one element (each call checks n >= 2); it used
    to keep the unknown size, and broadcasting it to (4, 3) copied past it."""

    def model(x):
        return np.broadcast_to(x[1:2], (4, 3)) * 2.0, x[0:4:2] + 1.0

    compiled = to_ir_with_dynamic_shape(model, [cuvil.TensorSpec(("n",), "float32")]).compile()
    for n in (4, 7):
        x = np.arange(n, dtype=np.float32) + 10
        broadcast, stepped = compiled(x)
        np.testing.assert_array_equal(broadcast, np.broadcast_to(x[1:2], (4, 3)) * 2.0)
        np.testing.assert_array_equal(stepped, x[0:4:2] + 1.0)
    with pytest.raises(ValueError, match="n"):
        compiled(np.arange(3, dtype=np.float32))  # x[0:4:2] needs n >= 4


def test_broadcasting_a_symbolic_dim_to_a_static_size_checks_the_size():
    """The code copies such a dim without broadcasting it: each call checks it is that size
    (it read past the input, or dropped elements, before)."""
    module = to_ir_with_dynamic_shape(
        lambda x: np.broadcast_to(x, (4, 3)) * 1.0, [cuvil.TensorSpec(("n",), "float32")]
    )
    compiled = module.compile()
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(compiled(x), np.broadcast_to(x, (4, 3)))
    for n in (1, 2, 5):
        with pytest.raises(ValueError, match=rf"dim 0 is {n}, but the model allows 3 <= n <= 3"):
            compiled(np.arange(n, dtype=np.float32))


def test_layer_norm_over_symbolic_dims():
    def model(x):
        return cuvil.layer_norm(x, axis=-1), cuvil.layer_norm(x, beta=0.5, axis=0)

    compiled = to_ir_with_dynamic_shape(model, [cuvil.TensorSpec((3, "n"), "float32")]).compile()
    rng = np.random.default_rng(4)
    for n in (2, 9):
        x = rng.standard_normal((3, n)).astype(np.float32)
        last, whole = compiled(x)
        np.testing.assert_allclose(last, cuvil.layer_norm(x, axis=-1), rtol=1e-5, atol=1e-5)
        want = cuvil.layer_norm(x, beta=0.5, axis=0)
        np.testing.assert_allclose(whole, want, rtol=1e-5, atol=1e-5)


def test_elementwise_results_keep_symbol_names():
    """``tanh(x)`` of ``x: [n, 2]`` is ``[n, 2]`` (not ``[?, 2]``), so a static-bound slice of
    its ``n`` axis can be checked at each call."""

    def model(x):
        return (np.tanh(x) * 2.0 + x)[1:3]

    compiled = to_ir_with_dynamic_shape(model, [cuvil.TensorSpec(("n", 2), "float32")]).compile()
    x = np.linspace(-1, 1, 10, dtype=np.float32).reshape(5, 2)
    np.testing.assert_allclose(compiled(x), (np.tanh(x) * 2.0 + x)[1:3], rtol=1e-6)
