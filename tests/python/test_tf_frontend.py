"""The TensorFlow front end: each op and Keras models, compiled by Cuvil, against TensorFlow."""

from __future__ import annotations

import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf
from conftest import caller_line, check_float16_model, line_of, run_python  # noqa: E402

import cuvil

EXACT = {"rtol": 1e-6, "atol": 1e-6}
ROUNDED = {"rtol": 1e-5, "atol": 1e-5}
TRANSCENDENTAL = {"rtol": 1e-4, "atol": 1e-5}
MODEL = {"rtol": 1e-4, "atol": 1e-4}
F32, I32 = tf.float32, tf.int32


def _spec(shape, dtype=F32):
    return tf.TensorSpec(shape, dtype)


def _sample(rng, spec, low=-2.0, high=2.0):
    dtype = spec.dtype.as_numpy_dtype
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(low, high, spec.shape).astype(dtype)
    if dtype == np.bool_:
        return rng.random(spec.shape) < 0.5
    return rng.integers(-5, 6, spec.shape).astype(dtype)


def _check(fn, specs, tol, low=-2.0, high=2.0, seed=0):
    """Import ``fn`` as a tf.function for ``specs``, compile it and compare with TensorFlow."""
    function = fn if hasattr(fn, "get_concrete_function") else tf.function(fn)
    module = cuvil.frontend.build_ir(model=function, input_spec=specs)
    rng = np.random.default_rng(seed)
    args = [_sample(rng, s, low, high) for s in specs]
    got = module.compile()(*args)
    want = function(*args)
    got = got if isinstance(got, tuple) else (got,)
    want = tuple(want) if isinstance(want, (tuple, list)) else (want,)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, **tol)
    return module


def _in_range(indices, size):
    """Indices clipped into [0, size): TensorFlow refuses others on the CPU."""
    return tf.minimum(tf.maximum(indices, 0), size - 1)


X, Y = _spec((3, 4)), _spec((3, 4))
POS = (0.5, 2.0)
IMG = _spec((2, 7, 7, 3))
OPS = [
    ("AddV2_Sub_Mul", lambda a, b: a + b - a * b, [X, Y], EXACT),
    ("RealDiv", lambda a, b: a / b, [X, Y], ROUNDED, POS),
    ("Maximum_Minimum", lambda a, b: tf.maximum(a, b) + tf.minimum(a, b), [X, Y], EXACT),
    ("Pow", tf.pow, [X, Y], TRANSCENDENTAL, POS),
    ("SquaredDifference", tf.math.squared_difference, [X, Y], EXACT),
    ("Relu_Relu6", lambda a: tf.nn.relu(a * 4) + tf.nn.relu6(a * 4), [X], EXACT),
    ("Sigmoid_Tanh", lambda a: tf.sigmoid(a) + tf.tanh(a), [X], TRANSCENDENTAL),
    ("Softmax_LogSoftmax", lambda a: tf.nn.softmax(a) + tf.nn.log_softmax(a), [X], TRANSCENDENTAL),
    ("Gelu", lambda a: tf.nn.gelu(a) + tf.nn.gelu(a, approximate=True), [X], TRANSCENDENTAL),
    (
        "Erf_Exp_Log",
        lambda a: tf.math.erf(a) + tf.exp(a) + tf.math.log(a),
        [X],
        TRANSCENDENTAL,
        POS,
    ),
    (
        "Sqrt_Rsqrt_Square",
        lambda a: tf.sqrt(a) + tf.math.rsqrt(a) + tf.square(a),
        [X],
        TRANSCENDENTAL,
        POS,
    ),
    ("Neg_Abs_LeakyRelu", lambda a: -tf.abs(a) + tf.nn.leaky_relu(a), [X], EXACT),
    ("Sin_Cos", lambda a: tf.sin(a) + tf.cos(a), [X], TRANSCENDENTAL, (-40.0, 40.0)),
    (
        "Log1p_Expm1",
        lambda a: (
            tf.math.log1p(tf.abs(a))
            + tf.math.expm1(a)
            + (tf.math.log1p(a * 1e-6) + tf.math.expm1(a * 1e-6)) * 1e6
        ),
        [X],
        TRANSCENDENTAL,
    ),
    (
        "Floor_Ceil_Round",
        lambda a: tf.floor(a) + tf.math.ceil(a) * 2 + tf.round(a) * 4 + tf.math.rint(a) * 8,
        [X],
        EXACT,
        (-5.0, 5.0),
    ),
    (
        "FloorDiv_FloorMod",
        lambda a, b: tf.math.floordiv(a, b) + tf.math.floormod(a, b) * 3,
        [X, Y],
        ROUNDED,
        (-5.0, 5.0),
    ),
    (
        "Int_FloorDiv_TruncateDiv_Mods",
        lambda a, b: (
            tf.math.floordiv(a, tf.abs(b) + 1) * 1000
            + tf.truncatediv(a, tf.abs(b) + 1) * 100
            + tf.math.floormod(a, tf.abs(b) + 1) * 10
            + tf.truncatemod(a, tf.abs(b) + 1)
        ),
        [_spec((3, 4), tf.int32), _spec((3, 4), tf.int32)],
        EXACT,
    ),
    ("Softplus", tf.nn.softplus, [X], TRANSCENDENTAL),
    ("Elu_Selu", lambda a: tf.nn.elu(a) + tf.nn.selu(a), [X], TRANSCENDENTAL),
    ("Compare_SelectV2", lambda a, b: tf.where((a < b) | (a >= 1.0), a, b), [X, Y], EXACT),
    ("Logical", lambda a, b: tf.cast(tf.logical_not(a > b) & (a > 0), tf.float32), [X, Y], EXACT),
    ("Cast", lambda a: tf.cast(a * 3, tf.int32) + 1, [X], EXACT),
    ("MatMul", lambda a, b: tf.matmul(a, b, transpose_b=True), [X, Y], ROUNDED),
    (
        "BatchMatMulV2",
        lambda a, b: tf.matmul(a, b, adjoint_a=True),
        [_spec((2, 4, 3)), _spec((2, 4, 5))],
        ROUNDED,
    ),
    (
        "Einsum",
        lambda a, b: tf.einsum("btnh,bsnh->bnts", a, b),
        [_spec((2, 3, 2, 4)), _spec((2, 5, 2, 4))],
        ROUNDED,
    ),
    ("BiasAdd", lambda a: tf.nn.bias_add(a, tf.range(4, dtype=tf.float32)), [X], EXACT),
    ("Reshape_Transpose", lambda a: tf.transpose(tf.reshape(a, (2, -1)), (1, 0)), [X], EXACT),
    ("ExpandDims_Squeeze", lambda a: tf.squeeze(tf.expand_dims(a, 1), axis=1)[:, None], [X], EXACT),
    (
        "ConcatV2_Pack",
        lambda a, b: tf.concat([a, tf.stack([a, b], axis=1)[:, 0]], axis=0),
        [X, Y],
        EXACT,
    ),
    ("StridedSlice", lambda a: a[1:, ::2] + a[None, -1, 1:3][0] + a[1:, 0:1], [X], EXACT),
    (
        "Slice_Split",
        lambda a: tf.slice(a, (1, 1), (2, -1)) + tf.split(a, 4, axis=1)[2][1:],
        [X],
        EXACT,
    ),
    ("Unstack_Tile", lambda a: tf.unstack(a)[1] + tf.tile(a[:1], (2, 1))[1], [X], EXACT),
    ("Shape_Fill_Range", lambda a: a + tf.fill(tf.shape(a), 2.0) * tf.range(4.0), [X], EXACT),
    ("ZerosLike_OnesLike", lambda a: tf.zeros_like(a) + tf.ones_like(a) + a, [X], EXACT),
    (
        "Mean_Sum_Max_Min",
        lambda a: (
            tf.reduce_mean(a, 1),
            tf.reduce_sum(a, 0, keepdims=True),
            tf.reduce_max(a),
            tf.reduce_min(a, -1),
        ),
        [X],
        ROUNDED,
    ),
    (
        "ArgMax_ArgMin",
        lambda a: (tf.argmax(a, 1), tf.argmin(a, 0, output_type=tf.int32)),
        [X],
        EXACT,
    ),
    (
        "Conv2D_same",
        lambda x: tf.nn.conv2d(x, tf.reshape(tf.range(108.0) / 100, (3, 3, 3, 4)), 1, "SAME"),
        [IMG],
        ROUNDED,
    ),
    (
        "Conv2D_strided_dilated",
        lambda x: tf.nn.conv2d(x, tf.ones((2, 2, 3, 2)) / 4, (1, 2, 2, 1), "VALID"),
        [IMG],
        ROUNDED,
    ),
    (
        "Conv2D_dilated",
        lambda x: tf.nn.conv2d(x, tf.ones((3, 3, 3, 2)) / 9, 1, "SAME", dilations=2),
        [IMG],
        ROUNDED,
    ),
    (
        "DepthwiseConv2dNative",
        lambda x: tf.nn.depthwise_conv2d(
            x, tf.reshape(tf.range(54.0) / 50, (3, 3, 3, 2)), (1, 2, 2, 1), "SAME"
        ),
        [IMG],
        ROUNDED,
    ),
    ("MaxPool", lambda x: tf.nn.max_pool2d(x, 3, 2, "SAME"), [IMG], EXACT),
    (
        "AvgPool",
        lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME")[:, :3, :3] + tf.nn.avg_pool2d(x, 2, 2, "VALID"),
        [IMG],
        ROUNDED,
    ),
    *[
        (
            f"Resize_{method}",
            lambda x, method=method: tf.image.resize(x, (9, 5), method=method),
            [IMG],
            ROUNDED,
        )
        for method in ("bilinear", "nearest", "bicubic")
    ],
    *[
        (
            f"ResizeV1_{op.__name__}_{corners}",
            lambda x, op=op, corners=corners: op(x, (4, 11), align_corners=corners),
            [IMG],
            ROUNDED,
        )
        for op in (
            tf.compat.v1.image.resize_bilinear,
            tf.compat.v1.image.resize_nearest_neighbor,
            tf.compat.v1.image.resize_bicubic,
        )
        for corners in (False, True)
    ],
    (
        "Conv2DBackpropInput_same",
        lambda x: tf.nn.conv2d_transpose(
            x, tf.reshape(tf.range(54.0) / 50, (3, 3, 2, 3)), (2, 14, 14, 2), 2, "SAME"
        ),
        [IMG],
        ROUNDED,
    ),
    (
        "Conv2DBackpropInput_valid",
        lambda x: tf.nn.conv2d_transpose(
            x, tf.reshape(tf.range(24.0) / 20, (2, 2, 2, 3)), (2, 15, 8, 2), (2, 1), "VALID"
        ),
        [IMG],
        ROUNDED,
    ),
    (
        "GatherV2_batch_dims",
        lambda a, i: tf.gather(a, _in_range(i, 5), axis=1, batch_dims=1),
        [_spec((3, 5, 2)), _spec((3, 4), I32)],
        EXACT,
    ),
    (
        "GatherV2_batch_dims_axis2",
        lambda a, i: tf.gather(a, _in_range(i, 5), axis=2, batch_dims=1),
        [_spec((2, 3, 5, 2)), _spec((2, 4), I32)],
        EXACT,
    ),
    ("ReverseV2", lambda a: tf.reverse(a, [0, -1]), [X], EXACT),
    ("Cumsum_1d", tf.math.cumsum, [_spec((4,))], ROUNDED),
    (
        "Cumsum",
        lambda a: tf.cumsum(a, 1) + tf.cumsum(a, 0, exclusive=True, reverse=True),
        [X],
        ROUNDED,
    ),
    (
        "FusedBatchNormV3",
        lambda x: tf.compat.v1.nn.fused_batch_norm(
            x, tf.ones(3) * 2, tf.ones(3), tf.range(3.0), tf.ones(3) * 0.5, is_training=False
        )[0],
        [IMG],
        ROUNDED,
    ),
]


@pytest.mark.parametrize("case", OPS, ids=[op[0] for op in OPS])
def test_op_matches_tensorflow(case):
    name, fn, specs, tol, *bounds = case
    low, high = bounds[0] if bounds else (-2.0, 2.0)
    _check(fn, specs, tol, low, high)


# ----- Keras models ---------------------------------------------------------------------------


def _randomize_batch_norm(model, seed=0):
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            n = layer.moving_mean.shape[0]
            layer.moving_mean.assign(rng.normal(0, 0.5, n).astype(np.float32))
            layer.moving_variance.assign(rng.uniform(0.5, 1.5, n).astype(np.float32))
            layer.gamma.assign(rng.uniform(0.5, 1.5, n).astype(np.float32))
            layer.beta.assign(rng.normal(0, 0.1, n).astype(np.float32))


def test_keras_sequential_cnn_matches_tensorflow():
    keras.utils.set_random_seed(0)
    layers = keras.layers
    model = keras.Sequential(
        [
            layers.Input((16, 16, 3)),
            layers.Conv2D(8, 3, padding="same", activation="relu"),
            layers.BatchNormalization(),
            layers.MaxPooling2D(),
            layers.DepthwiseConv2D(3, padding="same", activation="relu6"),
            layers.Conv2D(16, 3, strides=2, padding="valid"),
            layers.BatchNormalization(),
            layers.Activation("swish"),
            layers.AveragePooling2D(2, padding="same"),
            layers.GlobalAveragePooling2D(),
            layers.Dropout(0.5),
            layers.Dense(10),
            layers.Softmax(),
        ]
    )
    _randomize_batch_norm(model)
    function = tf.function(lambda x: model(x, training=False))
    module = _check(function, [_spec((2, 16, 16, 3))], MODEL, 0.0, 1.0)
    assert "cuvil.conv2d" in module.text and "cuvil.max_pool2d" in module.text


def test_keras_decoder_with_transposed_convolutions_and_resizing_matches_tensorflow():
    keras.utils.set_random_seed(0)
    layers = keras.layers
    model = keras.Sequential(
        [
            layers.Input((6, 6, 4)),
            layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu"),
            layers.Conv2DTranspose(4, (2, 3), strides=(1, 2), padding="valid"),
            layers.UpSampling2D(2, interpolation="bilinear"),
            layers.Resizing(20, 30),
            layers.UpSampling2D((1, 2)),
        ]
    )
    function = tf.function(lambda x: model(x, training=False))
    _check(function, [_spec((2, 6, 6, 4))], MODEL)


def _transformer_block(dim=32, heads=4, length=8):
    layers = keras.layers
    x = layers.Input((length, dim), batch_size=2)
    h = layers.LayerNormalization(epsilon=1e-5)(x)
    h = layers.MultiHeadAttention(num_heads=heads, key_dim=dim // heads)(h, h)
    x1 = x + h
    h = layers.LayerNormalization(epsilon=1e-5)(x1)
    h = layers.Dense(4 * dim, activation="gelu")(h)
    h = layers.Dense(dim)(h)
    return keras.Model(x, x1 + h)


def test_keras_transformer_block_matches_tensorflow():
    keras.utils.set_random_seed(1)
    model = _transformer_block()
    function = tf.function(
        lambda x: model(x, training=False), input_signature=[_spec((2, 8, 32), F32)]
    )
    module = cuvil.frontend.build_ir(model=function, input_spec=None)
    x = np.random.default_rng(0).normal(size=(2, 8, 32)).astype(np.float32)
    np.testing.assert_allclose(module.compile()(x), function(x).numpy(), **MODEL)


def test_keras_models_are_imported_in_inference_mode():
    keras.utils.set_random_seed(3)
    layers = keras.layers
    model = keras.Sequential(
        [
            layers.Input((6,)),
            layers.Dense(8, activation="tanh"),
            layers.Dropout(0.5),
            layers.Dense(2),
        ]
    )
    assert cuvil.frontends.for_model(model).name == "tensorflow"
    with pytest.raises(cuvil.ShapeSpecError, match="Missing shape attr.*dim 0"):
        cuvil.frontend.build_ir(model=model, input_spec=None)
    module = cuvil.frontend.build_ir(model=model, input_spec=[_spec((4, 6))])
    assert "cuvil.dropout" not in module.text
    x = np.random.default_rng(0).normal(size=(4, 6)).astype(np.float32)
    np.testing.assert_allclose(module.compile()(x), model(x, training=False).numpy(), **MODEL)


def test_concrete_functions_and_named_inputs():
    function = tf.function(lambda images, scale: tf.reduce_mean(images, axis=(1, 2)) * scale)
    concrete = function.get_concrete_function(
        _spec((2, 4, 4, 3), F32), tf.TensorSpec((3,), F32, name="scale")
    )
    assert cuvil.frontends.for_model(concrete).name == "tensorflow"
    assert cuvil.frontends.for_model(function).name == "tensorflow"
    module = cuvil.frontend.build_ir(model=concrete, input_spec=None)
    assert list(module.input_spec) == ["images", "scale"]
    images = np.ones((2, 4, 4, 3), np.float32)
    scale = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(module.compile()(images, scale=scale), [[1, 2, 3]] * 2)


# ----- errors and locations ---------------------------------------------------------------


def test_ops_carry_the_node_names_and_the_function_line():
    keras.utils.set_random_seed(2)
    model = keras.Sequential([keras.layers.Input((4,)), keras.layers.Dense(3, name="dense")])
    function = tf.function(lambda x: model(x, training=False))
    line = caller_line() - 1
    text = cuvil.frontend.build_ir(model=function, input_spec=[_spec((2, 4))]).text
    # Keras numbers its graph scopes per process: sequential_1_1/dense_3/MatMul.
    pattern = rf'loc\("sequential\w*/dense\w*/MatMul"\("{re.escape(__file__)}":{line}:'
    assert re.search(pattern, text)
    assert "cuvil.matmul" in text


class _TwoDense(keras.Model):
    """Two Dense layers and a ReLU, each op made on its own line of ``call``."""

    def __init__(self):
        super().__init__(name="two_dense")
        self.expand = keras.layers.Dense(6, name="expand")
        self.project = keras.layers.Dense(3, name="project")

    def call(self, x):
        h = self.expand(x)  # marker: expand call
        h = tf.nn.relu(h)  # marker: relu call
        return self.project(h)  # marker: project call


def _keras_locs(text):
    """``(op, node name, layer path, file, line)`` of each cuvil op located in a Keras layer."""
    pattern = r'"(cuvil\.\w+)".*loc\("([^"]+)"\("([^"]+)"\("([^"]+)":(\d+):\d+\)\)\)'
    return [(m[1], m[2], m[3], m[4], int(m[5])) for m in re.finditer(pattern, text)]


def test_keras_model_ops_carry_their_layers_and_the_users_lines():
    keras.utils.set_random_seed(4)
    model = _TwoDense()
    x = np.random.default_rng(0).normal(size=(2, 5)).astype(np.float32)
    module = cuvil.frontend.build_ir(model=model, input_spec=[_spec((2, 5))])
    np.testing.assert_allclose(module.compile()(x), model(x, training=False), **MODEL)
    text = module.text
    cuvil_dir = os.path.dirname(cuvil.__file__)
    assert cuvil_dir not in text, "a location points into Cuvil's own code"
    line = {
        name: line_of(f"marker: {name} call", __file__) for name in ("expand", "relu", "project")
    }
    locs = {(op, node, layer): (file, at) for op, node, layer, file, at in _keras_locs(text)}
    # Layer paths are Keras's names, not the graph's numbered scopes; each op
    # points at the line of call() that made it.
    assert locs[("cuvil.matmul", "MatMul", "two_dense/expand")] == (__file__, line["expand"])
    assert locs[("cuvil.add", "BiasAdd", "two_dense/expand")] == (__file__, line["expand"])
    assert locs[("cuvil.relu", "Relu", "two_dense")] == (__file__, line["relu"])
    assert locs[("cuvil.matmul", "MatMul", "two_dense/project")] == (__file__, line["project"])
    # The function and the module are located at the model's def call.
    assert re.search(rf'}} loc\("{re.escape(__file__)}":{line["expand"] - 1}:', text)
    assert module.source == f"{__file__}:{line['expand'] - 1}"
    # The model is left as it was: no layer keeps a recording call.
    assert all("call" not in vars(layer) for layer in model._flatten_layers())


def test_keras_sequential_layers_are_named_and_located_in_user_code():
    keras.utils.set_random_seed(5)
    model = keras.Sequential(
        [keras.layers.Input((4,)), keras.layers.Dense(3, name="first"), keras.layers.Dense(2)],
        name="stack",
    )
    second = model.layers[1].name
    line = caller_line() + 1
    text = cuvil.frontend.build_ir(model=model, input_spec=[_spec((2, 4))]).text
    assert os.path.dirname(cuvil.__file__) not in text
    layers = {(op, layer) for op, _, layer, _, _ in _keras_locs(text)}
    assert {("cuvil.matmul", "stack/first"), ("cuvil.matmul", f"stack/{second}")} <= layers
    # Keras records no line for a built-in layer: its ops point at the import.
    assert {(file, at) for *_, file, at in _keras_locs(text)} == {(__file__, line)}


KERAS_MODEL_FILE = """\
import numpy as np
import tensorflow as tf


class Block(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(8)

    def call(self, x):
        h = self.dense(x)  # marker: dense call
        return tf.nn.relu(h) * 2.0  # marker: relu call


model = tf.keras.Sequential([tf.keras.Input((4,)), Block(), tf.keras.layers.Dense(3)])
example_inputs = (np.ones((2, 4), np.float32),)
"""


def test_cuvil_compile_of_a_keras_model_file_locates_every_op_in_that_file(tmp_path):
    # The model is imported after the file has run: the built-in Dense layer's ops and the
    # function point at the line declaring `model`, not at Cuvil's command line or runpy.
    path = tmp_path / "model.py"
    path.write_text(KERAS_MODEL_FILE)
    result = run_python(["-m", "cuvil", "compile", str(path), "--print-ir-after-all"])
    assert result.returncode == 0, result.stderr
    lines = KERAS_MODEL_FILE.splitlines()
    at = {
        marker: lines.index(next(t for t in lines if marker in t)) + 1
        for marker in ("marker: dense call", "marker: relu call", "model = tf.keras.Sequential")
    }
    located = set(re.findall(r'loc\("([^"<]+)":(\d+):\d+\)', result.stdout))
    assert located == {(str(path), str(line)) for line in at.values()}, located


class _Cumulative(keras.layers.Layer):
    def call(self, x):
        return tf.math.cumprod(x)  # marker: cumprod call


def test_unsupported_op_in_a_keras_layer_names_the_layer_and_the_users_line():
    model = keras.Sequential([keras.Input((4,)), _Cumulative(name="running")], name="scan")
    with pytest.raises(cuvil.UnsupportedConstructError) as info:
        cuvil.frontend.build_ir(model=model, input_spec=[_spec((2, 4))])
    message = str(info.value)
    assert "TensorFlow op 'Cumprod'" in message and "node 'scan/running'" in message
    assert f"{__file__}:{line_of('marker: cumprod call', __file__)}" in message


def test_unsupported_op_names_the_op_the_node_and_the_location():
    @tf.function
    def model(x):
        return tf.math.cumprod(x)

    line = caller_line() - 3
    with pytest.raises(cuvil.UnsupportedConstructError) as info:
        cuvil.frontend.build_ir(model=model, input_spec=[_spec((4,))])
    message = str(info.value)
    assert "TensorFlow op 'Cumprod'" in message and "node 'Cumprod'" in message
    assert f"{__file__}:{line}" in message


def test_gather_uses_the_runtime_gather_and_constant_gathers_fold():
    function = tf.function(lambda t, i: tf.gather(t, i) + tf.gather(t, i[0], axis=1)[:3])
    specs = [_spec((5, 3)), _spec((2, 3), I32)]
    rng = np.random.default_rng(0)
    table = rng.normal(size=(5, 3)).astype(np.float32)
    ids = rng.integers(0, 3, (2, 3)).astype(np.int32)
    module = cuvil.frontend.build_ir(model=function, input_spec=specs)
    assert "cuvil.gather" in module.text
    np.testing.assert_allclose(module.compile()(table, ids), function(table, ids), **ROUNDED)
    _check(lambda t: tf.gather(tf.range(6.0), [4, 1]) * t, [_spec((2,))], EXACT)


def test_none_dims_training_mode_and_missing_signatures_are_refused():
    function = tf.function(lambda x: x * 2, input_signature=[_spec((None, 4))])
    with pytest.raises(cuvil.ShapeSpecError, match="Missing shape attr.*input 'x'.*dim 0"):
        cuvil.frontend.build_ir(model=function, input_spec=None)
    # A static spec given to build_ir wins over the signature's None.
    module = cuvil.frontend.build_ir(model=function, input_spec=[_spec((3, 4))])
    np.testing.assert_allclose(module.compile()(np.ones((3, 4), np.float32)), 2.0)
    with pytest.raises(ValueError, match="mode='training'"):
        cuvil.frontend.build_ir(model=function, input_spec=[_spec((3, 4))], mode="training")
    with pytest.raises(cuvil.InputSpecError, match="no input_signature"):
        cuvil.frontend.build_ir(model=tf.function(lambda x: x), input_spec=None)


# ----- symbolic shapes (here: TensorFlow runs in a pytest process of its own) -----------------


def _compiles_once_for_sizes(module, reference, shape_of_size, sizes=(1, 3, 8)):
    """``module`` compiles once and matches ``reference`` at every size."""
    seen = {id(r) for r in cuvil.compilations()}
    compiled = module.compile()
    rng = np.random.default_rng(0)
    for n in sizes:
        x = rng.normal(size=shape_of_size(n)).astype(np.float32)
        np.testing.assert_allclose(compiled(x), np.asarray(reference(x)), **MODEL)
    assert len([r for r in cuvil.compilations() if id(r) not in seen]) == 1


def test_none_in_the_input_signature_stays_symbolic_through_shape_arithmetic():
    weight = np.random.default_rng(1).normal(size=(6, 5)).astype(np.float32)

    @tf.function(input_signature=[_spec((None, 6))])
    def model(x):
        h = tf.tanh(tf.matmul(x, weight) + 1.0)
        flat = tf.reshape(h, [tf.shape(h)[0], -1])  # Shape, StridedSlice, Pack, Reshape
        return tf.reduce_sum(flat, axis=1) + tf.reduce_mean(tf.nn.relu(h), axis=1)

    # input_spec=None: the declared signature, whose None dim gets a symbol of its own.
    module = cuvil.frontend.to_ir_with_dynamic_shape(model, None)
    assert module.input_spec == {"x": cuvil.TensorSpec(("arg0_d0", 6), "float32")}
    assert module.output_spec == (cuvil.TensorSpec(("arg0_d0",), "float32"),)
    _compiles_once_for_sizes(module, lambda x: model(x).numpy(), lambda n: (n, 6))
    # build_ir stays static.
    with pytest.raises(cuvil.ShapeSpecError, match="Missing shape attr"):
        cuvil.frontend.build_ir(model=model, input_spec=None)


def test_keras_model_with_a_dynamic_batch_compiles_once():
    keras.utils.set_random_seed(0)
    layers = keras.layers
    model = keras.Sequential(
        [layers.Input((6,)), layers.Dense(8, activation="tanh"), layers.Dense(3)]
    )
    module = cuvil.frontend.to_ir_with_dynamic_shape(model, [_spec((None, 6))])
    assert module.output_spec[0].shape[1:] == (3,)
    _compiles_once_for_sizes(module, lambda x: model(x, training=False), lambda n: (n, 6))
    named = cuvil.frontend.to_ir_with_dynamic_shape(
        model, [cuvil.TensorSpec(("batch", 6), "float32")]
    )
    assert named.output_spec == (cuvil.TensorSpec(("batch", 3), "float32"),)


def test_reshape_back_to_two_symbolic_dims_takes_their_run_time_sizes():
    # [B, T, 8] flattened to rows and split back: B and T are given, not regrouped by guess.
    weight = tf.constant(np.random.default_rng(4).standard_normal((8, 8)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, None, 8], tf.float32)])
    def model(x):
        rows = tf.matmul(tf.reshape(x, [-1, 8]), weight)
        return tf.reshape(tf.tanh(rows), tf.shape(x))

    module = cuvil.frontend.to_ir_with_dynamic_shape(model, None)
    before = len(cuvil.compilations())
    compiled = module.compile()
    rng = np.random.default_rng(5)
    for batch, length in ((1, 2), (3, 5), (2, 7)):
        x = rng.standard_normal((batch, length, 8)).astype(np.float32)
        np.testing.assert_allclose(compiled(x), model(x).numpy(), rtol=1e-5, atol=1e-5)
    assert len(cuvil.compilations()) == before + 1


def test_float16_inputs_and_outputs_compute_in_float32_and_convert_at_the_boundary():
    weight = tf.constant(np.random.default_rng(3).standard_normal((8, 5)).astype(np.float16))

    @tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float16)])
    def model(x):
        h = tf.nn.relu(tf.matmul(x, weight) + tf.constant(1.0, tf.float16))
        return tf.nn.softmax(h, axis=-1), tf.cast(h, tf.float32)

    module = cuvil.frontend.to_ir_with_dynamic_shape(model, None)
    assert [s.dtype for s in module.input_spec.values()] == ["float16"]
    assert [s.dtype for s in module.output_spec] == ["float16", "float32"]

    def reference(x):  # TensorFlow's own float16
        return [t.numpy() for t in model(tf.constant(x))]

    check_float16_model(module, reference, lambda n: (n, 8))
