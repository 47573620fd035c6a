"""The JAX front end: each primitive and whole models, compiled by Cuvil, against JAX itself."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

import cuvil

jnp = jax.numpy
lax = jax.lax

from conftest import caller_line, check_float16_model  # noqa: E402

F32 = jnp.float32
EXACT = {"rtol": 1e-6, "atol": 1e-6}
ROUNDED = {"rtol": 1e-5, "atol": 1e-5}
TRANSCENDENTAL = {"rtol": 1e-4, "atol": 1e-5}
MODEL = {"rtol": 1e-4, "atol": 1e-4}


def _spec(shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _sample(rng, spec, low=-2.0, high=2.0):
    if np.issubdtype(spec.dtype, np.floating):
        return rng.uniform(low, high, spec.shape).astype(spec.dtype)
    if spec.dtype == np.bool_:
        return rng.random(spec.shape) < 0.5
    return rng.integers(-5, 6, spec.shape).astype(spec.dtype)


def _check(fn, specs, tol, low=-2.0, high=2.0, seed=0):
    """Compile ``fn`` with Cuvil and compare with JAX on random inputs."""
    module = cuvil.compile_to_ir(fn, *specs)
    rng = np.random.default_rng(seed)
    args = [_sample(rng, s, low, high) for s in specs]
    got = module.compile()(*args)
    want = jax.jit(fn)(*args)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, **tol)
    return module


_NHWC = ("NHWC", "HWIO", "NHWC")


def _conv(x, w, **kw):
    return lax.conv_general_dilated(x, w, dimension_numbers=("NHWC", "HWIO", "NHWC"), **kw)


@jax.custom_vjp
def _scaled_tanh(x):
    return jnp.tanh(x) * 3


_scaled_tanh.defvjp(lambda x: (_scaled_tanh(x), x), lambda residual, g: (g,))


@jax.jit
def _affine(t):
    return t * 2 + 1


# (name, function, input specs, tolerance[, (low, high) input range])
X, Y = _spec((3, 4)), _spec((3, 4))
POS = (0.5, 2.0)
OPS = [
    ("add", lambda a, b: a + b, [X, Y], EXACT),
    ("sub", lambda a, b: a - b, [X, Y], EXACT),
    ("mul", lambda a, b: a * b, [X, Y], EXACT),
    ("div", lambda a, b: a / b, [X, Y], ROUNDED, POS),
    ("max", jnp.maximum, [X, Y], EXACT),
    ("min", jnp.minimum, [X, Y], EXACT),
    ("pow", jnp.power, [X, Y], TRANSCENDENTAL, POS),
    ("integer_pow", lambda a: a**3 + a**-2, [X], ROUNDED, POS),
    ("square", lax.square, [X], EXACT),
    ("neg_abs", lambda a: -jnp.abs(a), [X], EXACT),
    ("exp_log", lambda a: jnp.exp(a) + jnp.log(jnp.abs(a) + 1), [X], TRANSCENDENTAL),
    (
        "exp2_log1p_expm1",
        lambda a: jnp.exp2(a) + jnp.log1p(a * a) + jnp.expm1(a),
        [X],
        TRANSCENDENTAL,
    ),
    ("tanh_logistic", lambda a: jnp.tanh(a) + jax.nn.sigmoid(a), [X], TRANSCENDENTAL),
    ("sqrt_rsqrt", lambda a: jnp.sqrt(a) + lax.rsqrt(a), [X], TRANSCENDENTAL, POS),
    ("erf", jax.scipy.special.erf, [X], TRANSCENDENTAL),
    # Tiny arguments: log(1 + x) and exp(x) - 1 would lose every digit of x.
    (
        "log1p_expm1_tiny",
        lambda a: (jnp.log1p(a * 1e-6) + jnp.expm1(a * 1e-6)) * 1e6,
        [X],
        TRANSCENDENTAL,
    ),
    ("sin_cos", lambda a: jnp.sin(a) + jnp.cos(a), [X], TRANSCENDENTAL, (-40.0, 40.0)),
    (
        "floor_ceil_round",
        lambda a: jnp.floor(a) + jnp.ceil(a) * 2 + jnp.round(a) * 4 + lax.round(a) * 8,
        [X],
        EXACT,
        (-5.0, 5.0),
    ),
    ("round_ties", lambda a: jnp.round(a * 0 + 2.5) + lax.round(a * 0 - 2.5), [X], EXACT),
    ("floor_divide_remainder", lambda a, b: a // b + (a % b) * 3, [X, Y], ROUNDED, POS),
    (
        "int_div_rem",
        lambda a, b: (
            lax.div(a, jnp.abs(b) + 1) * 100
            + lax.rem(a, jnp.abs(b) + 1) * 10
            + a // (jnp.abs(b) + 1)
        ),
        [_spec((3, 4), np.int32), _spec((3, 4), np.int32)],
        EXACT,
    ),
    ("sign_clip", lambda a: jnp.sign(a) * jnp.clip(a, -1.0, 1.0), [X], EXACT),
    (
        "relu_gelu_silu",
        lambda a: jax.nn.relu(a) + jax.nn.gelu(a) + jax.nn.silu(a),
        [X],
        TRANSCENDENTAL,
    ),
    ("gelu_exact", lambda a: jax.nn.gelu(a, approximate=False), [X], TRANSCENDENTAL),
    (
        "softmax_log_softmax",
        lambda a: jax.nn.softmax(a) + jax.nn.log_softmax(a, axis=0),
        [X],
        TRANSCENDENTAL,
    ),
    ("compare_select", lambda a, b: jnp.where((a < b) | (a >= 1.0), a, b * 2), [X, Y], EXACT),
    (
        "compare_all",
        lambda a, b: jnp.stack([a == b, a != b, a <= b, a > b, ~(a > b)]),
        [X, Y],
        EXACT,
    ),
    ("int_ops", lambda a, b: a * b - jnp.maximum(a, b), [_spec((3, 4), jnp.int32)] * 2, EXACT),
    ("convert", lambda a: a.astype(jnp.int32) + 1, [X], EXACT),
    ("broadcast_in_dim", lambda a, v: a + v[None, :] + jnp.ones((3, 1)), [X, _spec((4,))], EXACT),
    ("reshape_transpose", lambda a: a.reshape(2, 6).T.reshape(4, 3), [X], EXACT),
    ("squeeze_expand", lambda a: jnp.squeeze(jnp.expand_dims(a, 1), 1)[:, None], [X], EXACT),
    ("reduce", lambda a: (a.sum(0), a.max(1), a.min(), a.mean(1)), [X], ROUNDED),
    ("argmax_argmin", lambda a: (jnp.argmax(a, axis=1), jnp.argmin(a, axis=0)), [X], EXACT),
    ("concatenate", lambda a, b: jnp.concatenate([a, b, a], axis=1), [X, Y], EXACT),
    ("slice", lambda a: a[1:3, ::2] + a[:2, 1:3], [X], EXACT),
    ("dynamic_slice", lambda a: lax.dynamic_slice(a, (1, 2), (2, 2)), [X], EXACT),
    ("split", lambda a: jnp.split(a, 2, axis=1), [X], EXACT),
    ("pad", lambda a: jnp.pad(a, ((1, 2), (0, 1)), constant_values=3.0), [X], EXACT),
    ("pad_negative", lambda a: lax.pad(a, 0.0, ((-1, 1, 0), (2, -1, 0))), [X], EXACT),
    ("iota", lambda a: a + jnp.arange(4.0) * lax.broadcasted_iota(F32, (3, 4), 0), [X], EXACT),
    ("dot", jnp.dot, [X, _spec((4, 5))], ROUNDED),
    ("matmul_batched", jnp.matmul, [_spec((2, 3, 4)), _spec((2, 4, 5))], ROUNDED),
    (
        "einsum",
        lambda a, b: jnp.einsum("bhqd,bkhd->bhqk", a, b),
        [_spec((2, 3, 4, 5)), _spec((2, 6, 3, 5))],
        ROUNDED,
    ),
    ("dot_vector", lambda a, b: a @ b, [_spec((4,)), _spec((4, 3))], ROUNDED),
    (
        "conv_nhwc",
        lambda x, w: _conv(x, w, window_strides=(1, 1), padding="SAME"),
        [_spec((2, 6, 6, 3)), _spec((3, 3, 3, 4))],
        ROUNDED,
    ),
    (
        "conv_strided_dilated",
        lambda x, w: _conv(
            x, w, window_strides=(2, 1), padding=((1, 0), (2, 2)), rhs_dilation=(1, 2)
        ),
        [_spec((1, 7, 8, 3)), _spec((3, 3, 3, 2))],
        ROUNDED,
    ),
    (
        "conv_nchw_grouped",
        lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", feature_group_count=2),
        [_spec((1, 4, 5, 5)), _spec((6, 2, 3, 3))],
        ROUNDED,
    ),
    (
        "conv_depthwise",
        lambda x, w: _conv(x, w, window_strides=(1, 1), padding="SAME", feature_group_count=3),
        [_spec((1, 5, 5, 3)), _spec((3, 3, 1, 3))],
        ROUNDED,
    ),
    (
        "conv_1d",
        lambda x, w: lax.conv_general_dilated(
            x, w, (2,), ((1, 2),), rhs_dilation=(2,), dimension_numbers=("NWC", "WIO", "NWC")
        ),
        [_spec((2, 9, 3)), _spec((3, 3, 4))],
        ROUNDED,
    ),
    (
        "max_pool",
        lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
        [_spec((2, 6, 6, 3))],
        EXACT,
    ),
    (
        "max_pool_same",
        lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
        [_spec((1, 7, 7, 2))],
        EXACT,
    ),
    (
        "avg_pool",
        lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID") / 4,
        [_spec((2, 3, 6, 6))],
        ROUNDED,
    ),
    (
        "conv_transpose",
        lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=_NHWC),
        [_spec((1, 5, 5, 3)), _spec((3, 3, 3, 4))],
        ROUNDED,
    ),
    (
        "conv_transpose_valid_rect",
        lambda x, w: lax.conv_transpose(x, w, (2, 1), "VALID", dimension_numbers=_NHWC),
        [_spec((2, 4, 5, 2)), _spec((2, 3, 2, 3))],
        ROUNDED,
    ),
    (
        "conv_lhs_dilation_negative_padding",
        lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), ((-1, 2), (1, -1)), lhs_dilation=(2, 3)
        ),
        [_spec((1, 2, 4, 4)), _spec((3, 2, 2, 3))],
        ROUNDED,
    ),
    ("erf_inv", jax.scipy.special.erfinv, [X], TRANSCENDENTAL, (-0.999, 0.999)),
    ("rev", lambda a: jnp.flip(a, (0, 1)) + lax.rev(a, (1,)), [X], EXACT),
    ("cumsum", lambda a: jnp.cumsum(a, axis=1) + lax.cumsum(a, 0, reverse=True), [X], ROUNDED),
    ("cumsum_int", lambda a: jnp.cumsum(a, axis=0), [_spec((6, 3), jnp.int32)], EXACT),
    *[
        (
            f"image_resize_{method}",
            functools.partial(jax.image.resize, shape=(2, 7, 3, 3), method=method),
            [_spec((2, 4, 5, 3))],
            ROUNDED,
        )
        for method in ("nearest", "linear", "cubic")
    ],
    ("jit_call", lambda a: jax.jit(lambda t: jnp.tanh(t) * 2)(a) + 1, [X], TRANSCENDENTAL),
    ("checkpoint", lambda a: jax.checkpoint(lambda t: jnp.tanh(t) + t * t)(a), [X], TRANSCENDENTAL),
    (
        "custom_vjp_and_repeated_jit",
        lambda a: _scaled_tanh(_affine(_affine(a))),
        [X],
        TRANSCENDENTAL,
    ),
    ("stop_gradient", lambda a: lax.stop_gradient(a) * 2, [X], EXACT),
    ("constants_folded", lambda a: a + jnp.linspace(0, 1, 4).reshape(1, 4).T.T, [X], EXACT),
]


@pytest.mark.parametrize("case", OPS, ids=[op[0] for op in OPS])
def test_primitive_matches_jax(case):
    name, fn, specs, tol, *bounds = case
    low, high = bounds[0] if bounds else (-2.0, 2.0)
    _check(fn, specs, tol, low, high)


# ----- whole models -------------------------------------------------------------------------


def _dense(key, n_in, n_out):
    k1, k2 = jax.random.split(key)
    scale = 1.0 / np.sqrt(n_in)
    return (
        np.asarray(jax.random.normal(k1, (n_in, n_out)) * scale, np.float32),
        np.asarray(jax.random.normal(k2, (n_out,)) * 0.1, np.float32),
    )


def _mlp(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return jax.nn.log_softmax(x @ w + b)


def test_mlp_matches_jax():
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    params = [_dense(keys[0], 16, 32), _dense(keys[1], 32, 32), _dense(keys[2], 32, 10)]
    _check(functools.partial(_mlp, params), [_spec((8, 16))], MODEL)


def _cnn(params, x):
    conv1, conv2, (w, b) = params
    dn = ("NHWC", "HWIO", "NHWC")
    x = lax.conv_general_dilated(x, conv1[0], (1, 1), "SAME", dimension_numbers=dn) + conv1[1]
    x = jax.nn.relu(x)
    x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    x = lax.conv_general_dilated(x, conv2[0], (2, 2), ((1, 1), (1, 1)), dimension_numbers=dn)
    x = jax.nn.silu(x + conv2[1])
    x = jnp.mean(x, axis=(1, 2))  # global average pooling
    return jax.nn.softmax(x @ w + b)


def test_cnn_matches_jax():
    k = jax.random.split(jax.random.PRNGKey(1), 4)
    conv1 = (
        np.asarray(jax.random.normal(k[0], (3, 3, 3, 8)) * 0.3, np.float32),
        np.zeros(8, np.float32),
    )
    conv2 = (
        np.asarray(jax.random.normal(k[1], (3, 3, 8, 16)) * 0.2, np.float32),
        np.ones(16, np.float32) * 0.1,
    )
    params = (conv1, conv2, _dense(k[2], 16, 10))
    _check(functools.partial(_cnn, params), [_spec((2, 16, 16, 3))], MODEL)


def _layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + eps) * gamma + beta


def _encoder_block(params, x, heads=4):
    batch, length, dim = x.shape
    h = _layer_norm(x, *params["ln1"])
    qkv = h @ params["qkv"][0] + params["qkv"][1]
    q, k, v = jnp.split(qkv, 3, axis=-1)
    split = lambda t: t.reshape(batch, length, heads, dim // heads)  # noqa: E731
    q, k, v = split(q), split(k), split(v)
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(dim // heads)
    mask = jnp.tril(jnp.ones((length, length), bool))
    scores = jnp.where(mask, scores, -1e9)
    attn = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), v)
    x = x + attn.reshape(batch, length, dim) @ params["proj"][0] + params["proj"][1]
    h = _layer_norm(x, *params["ln2"])
    h = jax.nn.gelu(h @ params["fc1"][0] + params["fc1"][1])
    return x + h @ params["fc2"][0] + params["fc2"][1]


def test_transformer_encoder_block_matches_jax():
    dim = 32
    k = jax.random.split(jax.random.PRNGKey(2), 4)
    ln = (np.ones(dim, np.float32), np.zeros(dim, np.float32))
    params = {
        "ln1": ln,
        "ln2": ln,
        "qkv": _dense(k[0], dim, 3 * dim),
        "proj": _dense(k[1], dim, dim),
        "fc1": _dense(k[2], dim, 4 * dim),
        "fc2": _dense(k[3], 4 * dim, dim),
    }
    module = _check(jax.jit(functools.partial(_encoder_block, params)), [_spec((2, 8, dim))], MODEL)
    assert "cuvil.matmul" in module.text and "cuvil.softmax" not in module.text


def test_build_ir_picks_jax_for_jitted_functions_and_numpy_for_plain_ones():
    fn = jax.jit(lambda x, y: jnp.tanh(x) @ y)
    assert cuvil.frontends.for_model(fn).name == "jax"
    assert cuvil.frontends.for_model(lambda x: x).name == "numpy"
    module = cuvil.frontend.build_ir(model=fn, input_spec={"y": (4, 2), "x": (3, 4)})
    assert list(module.input_spec) == ["x", "y"]
    x = np.ones((3, 4), np.float32)
    y = np.full((4, 2), 0.5, np.float32)
    np.testing.assert_allclose(module.compile()(x=x, y=y), np.asarray(fn(x, y)), **ROUNDED)
    listed = cuvil.frontend.build_ir(model=fn, input_spec=[_spec((3, 4)), cuvil.TensorSpec((4, 2))])
    assert listed.fingerprint == module.fingerprint


# ----- errors and locations ---------------------------------------------------------------


def test_ops_are_located_at_the_users_line_inside_the_primitive_name():
    def model(x, w):
        return jnp.tanh(x @ w)  # the line

    line = caller_line() - 2
    text = cuvil.compile_to_ir(model, _spec((2, 3)), _spec((3, 4))).text
    assert f'loc("dot_general"("{__file__}":{line}:' in text
    assert f'loc("tanh"("{__file__}":{line}:' in text


def test_inlined_jit_calls_carry_the_call_site():
    @jax.jit
    def inner(t):
        return jnp.tanh(t)

    inner_line = caller_line() - 2

    def outer(x):
        return inner(x) * 2

    call_line = caller_line() - 2
    text = cuvil.compile_to_ir(outer, _spec((4,))).text
    assert (
        f'loc("inner/tanh"(callsite("{__file__}":{inner_line}:16 at "{__file__}":{call_line}:'
        in text
    )


def test_unsupported_primitive_names_it_the_equation_and_the_line():
    def model(x):
        return lax.cumprod(x)

    line = caller_line() - 2
    with pytest.raises(cuvil.UnsupportedConstructError) as info:
        cuvil.compile_to_ir(model, _spec((4,)))
    message = str(info.value)
    assert "JAX primitive 'cumprod'" in message and "= cumprod" in message
    assert f"{__file__}:{line}" in message


def test_take_and_embedding_lookups_use_the_runtime_gather():
    def lookup(table, ids, x):
        return jnp.take(table, ids, axis=0).sum(1) + jnp.take(x, ids[0], axis=1)

    specs = [_spec((10, 3)), _spec((2, 3), jnp.int32), _spec((2, 10))]
    rng = np.random.default_rng(0)
    args = [
        rng.normal(size=(10, 3)).astype(np.float32),
        rng.integers(-10, 10, (2, 3)).astype(np.int32),
        rng.normal(size=(2, 10)).astype(np.float32),
    ]
    module = cuvil.compile_to_ir(lookup, *specs)
    assert "cuvil.gather" in module.text
    np.testing.assert_allclose(module.compile()(*args), jax.jit(lookup)(*args), **ROUNDED)
    # Constant indices into constant data are folded away.
    module = cuvil.compile_to_ir(
        lambda t: jnp.take(jnp.arange(6.0), jnp.array([4, 1])) * t, _spec((2,))
    )
    np.testing.assert_allclose(module.compile()(np.ones(2, np.float32)), [4.0, 1.0])


def test_gathers_other_than_take_are_refused():
    with pytest.raises(cuvil.UnsupportedConstructError, match="gather other than a take"):
        cuvil.compile_to_ir(lambda x, i: x[i, i], _spec((3, 3)), _spec((2,), jnp.int32))


def test_training_mode_and_missing_shapes_are_refused():
    with pytest.raises(ValueError, match="mode='training'"):
        cuvil.compile_to_ir(jnp.tanh, _spec((4,)), mode="training")
    with pytest.raises(cuvil.ShapeSpecError, match="Missing shape attr.*'x'.*dim 0"):
        cuvil.frontend.build_ir(model=jax.jit(lambda x: x * 2), input_spec={"x": (None, 4)})


# ----- float16 at the boundary -------------------------------------------------------------


def test_float16_inputs_and_outputs_compute_in_float32_and_convert_at_the_boundary():
    import jax.numpy as jnp

    weight = np.random.default_rng(3).standard_normal((8, 5)).astype(np.float16)

    def model(x):
        h = jnp.tanh(x @ weight + 1.0)
        return jax.nn.relu(h) * 2.0, h.astype(jnp.float32).sum(axis=-1)

    struct = jax.ShapeDtypeStruct(jax.export.symbolic_shape("N, 8"), jnp.float16)
    module = cuvil.compile_to_ir(model, struct)
    assert module.input_spec == {"x": cuvil.TensorSpec(("N", 8), "float16")}
    assert [s.dtype for s in module.output_spec] == ["float16", "float32"]
    # Against JAX's own float16.
    compiled = check_float16_model(module, model, lambda n: (n, 8))
    with pytest.raises(TypeError, match=r"has dtype float32, but the IR was built for float16"):
        compiled(np.ones((2, 8), np.float32))
