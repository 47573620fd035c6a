"""cuvil.frontends.composites: each composition, compiled, against PyTorch's own operator."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cuvil.frontends import IRBuilder, TensorType, composites, to_ir_module

F = torch.nn.functional

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 5, 6)).astype(np.float32)


def _run(build, *arrays):
    """Build ``build(builder, *arguments)`` as a function of ``arrays``, compile it, run it."""
    b = IRBuilder("composite")
    args = [b.argument(TensorType.of(a.shape, a.dtype)) for a in arrays]
    program = b.program([build(b, *args)])
    return to_ir_module(program, name="composite", source="").compile()(*arrays)


def _t(*arrays):
    return [torch.from_numpy(a) for a in arrays]


ACTIVATIONS = [
    (
        "gelu_tanh",
        lambda b, x: composites.gelu(b, x, "tanh"),
        lambda t: F.gelu(t, approximate="tanh"),
    ),
    ("gelu_erf", composites.gelu, F.gelu),
    ("silu", composites.silu, F.silu),
    ("hardswish", composites.hardswish, F.hardswish),
    ("hardsigmoid", composites.hardsigmoid, F.hardsigmoid),
    ("leaky_relu", lambda b, x: composites.leaky_relu(b, x, 0.2), lambda t: F.leaky_relu(t, 0.2)),
    ("log_softmax", lambda b, x: composites.log_softmax(b, x, 1), lambda t: F.log_softmax(t, 1)),
    ("elu", lambda b, x: composites.elu(b, x, 0.5), lambda t: F.elu(t, 0.5)),
    ("selu", lambda b, x: composites.elu(b, x, 1.6732632423543772, 1.0507009873554805), F.selu),
    ("softplus", composites.softplus, F.softplus),
    ("mish", composites.mish, F.mish),
    (
        "upsample_nearest",
        lambda b, x: composites.upsample_nearest(b, x, (1, 1, 2, 3)),
        lambda t: F.interpolate(t, scale_factor=(2, 3), mode="nearest"),
    ),
    ("clip", lambda b, x: composites.clip(b, x, -0.5, 0.7), lambda t: t.clamp(-0.5, 0.7)),
    (
        "global_max",
        lambda b, x: composites.global_pool2d(b, x, "max"),
        lambda t: F.adaptive_max_pool2d(t, 1),
    ),
    (
        "adaptive_avg_even",
        lambda b, x: composites.adaptive_pool2d(b, x, (5, 3)),
        lambda t: F.adaptive_avg_pool2d(t, (5, 3)),
    ),
    (
        "adaptive_avg_uneven",
        lambda b, x: composites.adaptive_pool2d(b, x, (2, 4)),
        lambda t: F.adaptive_avg_pool2d(t, (2, 4)),
    ),
    (
        "adaptive_max_uneven",
        lambda b, x: composites.adaptive_pool2d(b, x, (3, 4), "max"),
        lambda t: F.adaptive_max_pool2d(t, (3, 4)),
    ),
]


@pytest.mark.parametrize("name,build,reference", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_unary_composition_matches_pytorch(name, build, reference):
    expected = reference(torch.from_numpy(X)).numpy()
    np.testing.assert_allclose(_run(build, X), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "groups,stride,padding,output_padding,dilation",
    [
        (1, (2, 2), (1, 1), (1, 1), (1, 1)),
        (3, (1, 2), (0, 1), (0, 1), (2, 1)),
        (1, (3, 3), (2, 2), (0, 2), (1, 1)),
    ],
)
def test_conv_transpose2d_matches_pytorch(groups, stride, padding, output_padding, dilation):
    weight = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    bias = RNG.standard_normal(2 * groups).astype(np.float32)

    def build(b, x, bias_value):
        return composites.conv_transpose2d(
            b,
            x,
            weight,
            bias_value,
            strides=stride,
            padding=padding + padding,
            output_padding=output_padding,
            dilations=dilation,
            groups=groups,
        )

    expected = F.conv_transpose2d(
        *_t(X, weight, bias), stride, padding, output_padding, groups, dilation
    ).numpy()
    np.testing.assert_allclose(_run(build, X, bias), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_matches_pytorch(causal):
    q, k, v = (RNG.standard_normal((2, 4, 6, 8)).astype(np.float32) for _ in range(3))
    got = _run(
        lambda b, *a: composites.scaled_dot_product_attention(b, *a, is_causal=causal), q, k, v
    )
    expected = F.scaled_dot_product_attention(*_t(q, k, v), is_causal=causal).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_scaled_dot_product_attention_with_boolean_mask():
    q, k, v = (RNG.standard_normal((1, 2, 4, 8)).astype(np.float32) for _ in range(3))
    mask = RNG.random((4, 4)) > 0.3
    np.fill_diagonal(mask, True)
    got = _run(lambda b, *a: composites.scaled_dot_product_attention(b, *a), q, k, v, mask)
    expected = F.scaled_dot_product_attention(*_t(q, k, v, mask)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_gemm_with_transposes_alpha_and_beta():
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    w = RNG.standard_normal((3, 4)).astype(np.float32)
    c = RNG.standard_normal(3).astype(np.float32)
    got = _run(
        lambda b, *v: composites.gemm(b, *v, alpha=0.5, beta=2.0, trans_a=True, trans_b=True),
        a,
        w,
        c,
    )
    np.testing.assert_allclose(got, 0.5 * a.T @ w.T + 2 * c, rtol=1e-5, atol=1e-5)


def test_linear_matches_pytorch():
    x = RNG.standard_normal((2, 7, 5)).astype(np.float32)
    w = RNG.standard_normal((3, 5)).astype(np.float32)
    bias = RNG.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(
        _run(composites.linear, x, w, bias), F.linear(*_t(x, w, bias)).numpy(), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_with_runtime_and_constant_indices_matches_numpy_take(axis):
    table = RNG.standard_normal((10, 4, 3)).astype(np.float32)
    ids = np.array([[1, 2, -1], [0, 2, 2]], dtype=np.int64)
    expected = np.take(table, ids, axis=axis)
    runtime = _run(lambda b, t, i: composites.gather(b, t, i, axis), table, ids)
    constant = _run(lambda b, t: composites.gather(b, t, ids, axis), table)
    np.testing.assert_array_equal(runtime, expected)
    np.testing.assert_array_equal(constant, expected)


def test_pad_and_reshape_helpers():
    got = _run(
        lambda b, x: composites.pad(b, composites.reshape(b, x, (6, -1)), [(1, 0), (0, 2)], 3.0), X
    )
    np.testing.assert_array_equal(
        got, np.pad(X.reshape(6, -1), [(1, 0), (0, 2)], constant_values=3.0)
    )


@pytest.mark.parametrize(
    "build,reference",
    [
        (composites.layer_norm, lambda t, g, eps: F.layer_norm(t, (6,), g, eps=eps)),
        (composites.rms_norm, lambda t, g, eps: F.rms_norm(t, (6,), g, eps=eps)),
    ],
    ids=["layer_norm_without_beta", "rms_norm"],
)
def test_normalization_over_the_last_axis_matches_pytorch(build, reference):
    x = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    gamma = RNG.standard_normal(6).astype(np.float32)
    got = _run(lambda b, v, g: build(b, v, g, epsilon=1e-3), x, gamma)
    expected = reference(*_t(x, gamma), 1e-3).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_batch_norm_of_rank_3_matches_pytorch():
    x = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    scale, bias, mean = (RNG.standard_normal(4).astype(np.float32) for _ in range(3))
    var = RNG.random(4).astype(np.float32) + 0.5
    got = _run(lambda b, *v: composites.batch_norm(b, *v, epsilon=1e-3), x, scale, bias, mean, var)
    expected = F.batch_norm(*_t(x, mean, var, scale, bias), eps=1e-3).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_swish_with_alpha():
    got = _run(lambda b, v: composites.silu(b, v, 1.5), X)
    np.testing.assert_allclose(got, X / (1 + np.exp(-1.5 * X)), rtol=1e-5, atol=1e-6)
