"""Operator table of the PyTorch importer: each op compiled by Cuvil against PyTorch's result."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from conftest import assert_outputs_match_in_their_dtypes
from torch import nn
from torch.nn import functional as F

from cuvil.frontend import build_ir
from cuvil.frontends.torch import aten

# ----- tolerances (as in test_ops.py) ---------------------------------------------------


@dataclass(frozen=True)
class Tol:
    rtol: float
    atol: float


EXACT = Tol(0.0, 0.0)  # data movement, comparisons, IEEE-exact arithmetic
ROUNDED = Tol(1e-6, 1e-7)  # division, sqrt
TRANSCENDENTAL = Tol(1e-5, 1e-6)  # exp/log/tanh/erf/sigmoid/gelu/pow
NORMALIZATION = Tol(1e-4, 1e-5)  # a reduction with rsqrt
REDUCTION = Tol(1e-5, 1e-5)  # reordered sums of a few dozen terms
CONTRACTION = Tol(1e-4, 1e-4)  # matmul/conv: K products summed in another order
INTERPOLATION = Tol(1e-5, 1e-5)  # resizing: weighted sums, one axis at a time


# ----- cases --------------------------------------------------------------------------------


class Fn(nn.Module):
    """A function of tensors as a module (``forward(a)``, ``forward(a, b)``, ...)."""

    def __init__(self, fn: Callable):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


class Fn1(Fn):
    def forward(self, a):
        return self.fn(a)


class Fn2(Fn):
    def forward(self, a, b):
        return self.fn(a, b)


class Fn3(Fn):
    def forward(self, a, b, c):
        return self.fn(a, b, c)


@dataclass
class Case:
    name: str
    model: Callable  # () -> nn.Module (built under a fixed seed)
    inputs: tuple  # (shape, dtype, low, high) per input
    tol: Tol = EXACT


def f(name, fn, *inputs, tol=EXACT) -> Case:
    wrapper = {1: Fn1, 2: Fn2, 3: Fn3}[len(inputs)]
    return Case(name, lambda: wrapper(fn), tuple(_spec(i) for i in inputs), tol)


def m(name, make, *inputs, tol=CONTRACTION) -> Case:
    return Case(name, make, tuple(_spec(i) for i in inputs), tol)


def _spec(item):
    if isinstance(item, tuple) and item and isinstance(item[0], tuple):
        shape, dtype, *bounds = item
        low, high = bounds if bounds else (-2.0, 2.0)
        return shape, dtype, low, high
    return item, torch.float32, -2.0, 2.0


POS = ((3, 5), torch.float32, 0.1, 3.0)
X = (3, 5)
NCHW = (2, 4, 9, 9)

CASES = [
    # elementwise
    f("relu", torch.relu, X),
    f("leaky_relu", lambda x: F.leaky_relu(x, 0.2), X),
    f("sigmoid", torch.sigmoid, X, tol=TRANSCENDENTAL),
    f("tanh", torch.tanh, X, tol=TRANSCENDENTAL),
    f("gelu", F.gelu, X, tol=TRANSCENDENTAL),
    f("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), X, tol=TRANSCENDENTAL),
    f("silu", F.silu, X, tol=TRANSCENDENTAL),
    f("hardswish", F.hardswish, ((3, 5), torch.float32, -5.0, 5.0), tol=ROUNDED),
    f("hardsigmoid", F.hardsigmoid, ((3, 5), torch.float32, -5.0, 5.0), tol=ROUNDED),
    f("relu6", F.relu6, ((3, 5), torch.float32, -3.0, 9.0)),
    f("erf", torch.erf, X, tol=TRANSCENDENTAL),
    f("exp", torch.exp, X, tol=TRANSCENDENTAL),
    f("log", torch.log, POS, tol=TRANSCENDENTAL),
    f("sqrt", torch.sqrt, POS, tol=ROUNDED),
    f("rsqrt", torch.rsqrt, POS, tol=TRANSCENDENTAL),
    f("sin", torch.sin, ((3, 5), torch.float32, -40.0, 40.0), tol=TRANSCENDENTAL),
    f("cos", torch.cos, ((3, 5), torch.float32, -40.0, 40.0), tol=TRANSCENDENTAL),
    f("floor", torch.floor, ((3, 5), torch.float32, -5.0, 5.0)),
    f("ceil", torch.ceil, ((3, 5), torch.float32, -5.0, 5.0)),
    f("trunc", torch.trunc, ((3, 5), torch.float32, -5.0, 5.0)),
    f("round", torch.round, ((3, 5), torch.float32, -5.0, 5.0)),
    f("round_decimals", lambda a: torch.round(a, decimals=2), X, tol=ROUNDED),
    f("floor_int", torch.floor, ((3, 5), torch.int64, -5, 5)),
    f("floor_divide", torch.floor_divide, ((3, 5), torch.float32, -9.0, 9.0), POS, tol=ROUNDED),
    f(
        "floor_divide_int",
        lambda a, b: a // b,
        ((3, 5), torch.int64, -9, 9),
        ((5,), torch.int64, 1, 4),
    ),
    f("div_trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc"), X, POS, tol=ROUNDED),
    f(
        "div_trunc_int",
        lambda a, b: torch.div(a, b, rounding_mode="trunc"),
        ((3, 5), torch.int64, -9, 9),
        ((5,), torch.int64, 1, 4),
    ),
    f("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"), X, POS, tol=ROUNDED),
    f("remainder", torch.remainder, ((3, 5), torch.float32, -9.0, 9.0), POS, tol=ROUNDED),
    f("remainder_int", lambda a, b: a % b, ((3, 5), torch.int64, -9, 9), ((5,), torch.int64, 1, 4)),
    f("fmod", torch.fmod, ((3, 5), torch.float32, -9.0, 9.0), POS, tol=ROUNDED),
    f(
        "log1p_expm1_tiny",
        lambda a: (torch.log1p(a * 1e-6) + torch.expm1(a * 1e-6)) * 1e6,
        X,
        tol=TRANSCENDENTAL,
    ),
    f("neg", torch.neg, X),
    f("abs", torch.abs, X),
    f("reciprocal", torch.reciprocal, POS, tol=ROUNDED),
    f("add", torch.add, X, (5,)),
    f("add_alpha", lambda a, b: torch.add(a, b, alpha=0.5), X, X, tol=ROUNDED),
    f("add_scalar", lambda a: a + 1.5, X),
    f("sub", torch.sub, X, (1, 5)),
    f("rsub_scalar", lambda a: 2.0 - a, X),
    f("mul", torch.mul, X, ()),
    f("mul_scalar", lambda a: a * 3, X),
    f("div", torch.div, X, POS, tol=ROUNDED),
    f("div_scalar", lambda a: a / 7.0, X, tol=ROUNDED),
    f("pow_2", lambda a: a**2, X),
    f("pow_3", lambda a: a**3, X, tol=TRANSCENDENTAL),
    f("pow_half", lambda a: a**0.5, POS, tol=ROUNDED),
    f("pow_tensor", torch.pow, POS, X, tol=TRANSCENDENTAL),
    f("maximum", torch.maximum, X, X),
    f("minimum", torch.minimum, X, (5,)),
    f("clamp", lambda a: a.clamp(-0.5, 0.75), X),
    f("where", lambda c, a, b: torch.where(c > 0, a, b), X, X, (5,)),
    f("masked_fill", lambda a, b: a.masked_fill(b > 0, -1.0), X, (5,)),
    f("lt", torch.lt, X, (5,)),
    f("ge_scalar", lambda a: a >= 0.25, X),
    f("eq_int", torch.eq, ((3, 5), torch.int64, 0, 3), ((5,), torch.int64, 0, 3)),
    f("logical_not", lambda a: ~(a > 0), X),
    f("int_plus_float", lambda a: a + 0.5, ((3, 5), torch.int64, -5, 5)),
    f("to_float64", lambda a: a.to(torch.float64) * 2, X),
    f("int_to_float", lambda a: a.float() / 2, ((3, 5), torch.int32, -5, 5), tol=ROUNDED),
    f("elu", F.elu, X, tol=TRANSCENDENTAL),
    f("selu", F.selu, X, tol=TRANSCENDENTAL),
    f("softplus", F.softplus, X, tol=TRANSCENDENTAL),
    f("mish", F.mish, X, tol=TRANSCENDENTAL),
    f("log1p_expm1", lambda a: torch.log1p(a) + torch.expm1(a), POS, tol=TRANSCENDENTAL),
    f("sign", torch.sign, ((3, 5), torch.int64, -2, 2)),
    f("clamp_tensor", lambda a, b: a.clamp(min=b, max=b + 1.0), X, (5,)),
    m("prelu", lambda: nn.PReLU(4), NCHW),
    # reductions and normalizations
    f("var", lambda a: a.var(dim=1), (4, 6, 5), tol=REDUCTION),
    f("std_all", torch.std, (4, 6), tol=REDUCTION),
    f("argmax", lambda a: a.argmax(dim=1), (4, 6)),
    f("argmin_all", torch.argmin, (4, 6)),
    f("max_dim", lambda a: a.max(dim=0), (4, 6)),
    f("logsumexp", lambda a: torch.logsumexp(a, 1), (4, 6), tol=TRANSCENDENTAL),
    m("group_norm", lambda: nn.GroupNorm(2, 4), NCHW, tol=NORMALIZATION),
    m("instance_norm", lambda: nn.InstanceNorm2d(4, affine=True), NCHW, tol=NORMALIZATION),
    f("sum_dim", lambda a: a.sum(dim=1), (4, 6, 5), tol=REDUCTION),
    f("sum_all", torch.sum, (4, 6), tol=REDUCTION),
    f("mean_keepdim", lambda a: a.mean(dim=(0, 2), keepdim=True), (4, 6, 5), tol=REDUCTION),
    f("amax", lambda a: a.amax(dim=-1), (4, 6)),
    f("amin_keepdim", lambda a: a.amin(dim=0, keepdim=True), (4, 6)),
    f("any", lambda a: (a > 1.5).any(dim=1), (4, 6)),
    f("softmax", lambda a: F.softmax(a, dim=-1), (4, 6), tol=TRANSCENDENTAL),
    f("softmax_dim0", lambda a: F.softmax(a, dim=0), (4, 6), tol=TRANSCENDENTAL),
    f("log_softmax", lambda a: F.log_softmax(a, dim=1), (4, 6), tol=TRANSCENDENTAL),
    m("layer_norm", lambda: nn.LayerNorm(6), (2, 4, 6), tol=NORMALIZATION),
    m(
        "layer_norm_2d",
        lambda: nn.LayerNorm((4, 6), elementwise_affine=False),
        (2, 4, 6),
        tol=NORMALIZATION,
    ),
    m("batch_norm2d", lambda: _bn(nn.BatchNorm2d(4)), NCHW, tol=NORMALIZATION),
    m("batch_norm1d", lambda: _bn(nn.BatchNorm1d(4)), (3, 4), tol=NORMALIZATION),
    m("batch_norm1d_seq", lambda: _bn(nn.BatchNorm1d(4)), (3, 4, 7), tol=NORMALIZATION),
    # convolution and pooling
    m("conv2d", lambda: nn.Conv2d(4, 6, 3), NCHW),
    m("conv2d_stride_pad", lambda: nn.Conv2d(4, 6, 3, stride=2, padding=1), NCHW),
    m("conv2d_groups", lambda: nn.Conv2d(4, 8, 3, padding=1, groups=2), NCHW),
    m("conv2d_depthwise", lambda: nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False), NCHW),
    m("conv2d_dilation", lambda: nn.Conv2d(4, 6, 3, padding=2, dilation=2), NCHW),
    m("conv2d_rect", lambda: nn.Conv2d(4, 6, (1, 3), stride=(2, 1), padding=(0, 1)), NCHW),
    m("conv1d", lambda: nn.Conv1d(4, 6, 3, padding=1, stride=2), (2, 4, 11)),
    m("conv_transpose2d", lambda: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1), NCHW),
    m("conv_transpose2d_outpad", lambda: nn.ConvTranspose2d(4, 4, 3, 2, 1, 1, groups=2), NCHW),
    m("max_pool2d", lambda: nn.MaxPool2d(3, 2, 1), NCHW),
    m("max_pool2d_k2", lambda: nn.MaxPool2d(2), NCHW),
    m("avg_pool2d", lambda: nn.AvgPool2d(3, 2, 1), NCHW, tol=ROUNDED),
    m(
        "avg_pool2d_exclude_pad",
        lambda: nn.AvgPool2d(3, 2, 1, count_include_pad=False),
        NCHW,
        tol=ROUNDED,
    ),
    m("adaptive_avg_pool2d_1", lambda: nn.AdaptiveAvgPool2d(1), NCHW, tol=REDUCTION),
    m("adaptive_avg_pool2d_3", lambda: nn.AdaptiveAvgPool2d(3), NCHW, tol=REDUCTION),
    m("adaptive_avg_pool2d_uneven", lambda: nn.AdaptiveAvgPool2d((2, 4)), NCHW, tol=REDUCTION),
    m("adaptive_max_pool2d", lambda: nn.AdaptiveMaxPool2d((2, 3)), NCHW),
    f("mean_hw", lambda a: a.mean(dim=(2, 3)), NCHW, tol=REDUCTION),
    f("pad", lambda a: F.pad(a, (1, 2, 0, 1), value=0.5), NCHW),
    # contractions
    m("linear", lambda: nn.Linear(5, 7), X),
    m("linear_3d", lambda: nn.Linear(5, 7), (2, 3, 5)),
    m("linear_no_bias", lambda: nn.Linear(5, 7, bias=False), (2, 3, 5)),
    f("mm", torch.mm, (3, 5), (5, 4), tol=CONTRACTION),
    f("bmm", torch.bmm, (2, 3, 5), (2, 5, 4), tol=CONTRACTION),
    f("matmul_broadcast", torch.matmul, (2, 2, 3, 5), (5, 4), tol=CONTRACTION),
    f("matmul_vector", torch.matmul, (3, 5), (5,), tol=CONTRACTION),
    f(
        "addmm_scaled",
        lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0),
        (4,),
        (3, 5),
        (5, 4),
        tol=CONTRACTION,
    ),
    # shapes and data movement
    m("upsample_nearest", lambda: nn.Upsample(scale_factor=2), NCHW),
    m("pixel_shuffle", lambda: nn.PixelShuffle(2), NCHW),
    f(
        "interpolate_bilinear",
        lambda a: F.interpolate(a, (13, 7), mode="bilinear"),
        NCHW,
        tol=INTERPOLATION,
    ),
    f(
        "interpolate_bilinear_align_corners",
        lambda a: F.interpolate(a, scale_factor=1.5, mode="bilinear", align_corners=True),
        NCHW,
        tol=INTERPOLATION,
    ),
    f(
        "interpolate_bilinear_scale",
        lambda a: F.interpolate(a, scale_factor=(1.7, 0.5), mode="bilinear"),
        NCHW,
        tol=INTERPOLATION,
    ),
    f(
        "interpolate_bicubic",
        lambda a: F.interpolate(a, (11, 5), mode="bicubic"),
        NCHW,
        tol=INTERPOLATION,
    ),
    f(
        "interpolate_bicubic_align_corners",
        lambda a: F.interpolate(a, scale_factor=1.5, mode="bicubic", align_corners=True),
        NCHW,
        tol=INTERPOLATION,
    ),
    f(
        "interpolate_linear_1d",
        lambda a: F.interpolate(a, 17, mode="linear"),
        (2, 3, 8),
        tol=INTERPOLATION,
    ),
    f("interpolate_nearest_scale", lambda a: F.interpolate(a, scale_factor=1.5), NCHW),
    f("interpolate_nearest_exact", lambda a: F.interpolate(a, (5, 12), mode="nearest-exact"), NCHW),
    f("cumsum", lambda a: torch.cumsum(a, 1), (3, 7, 2), tol=REDUCTION),
    f("cumsum_int", lambda a: torch.cumsum(a, 0), ((9, 4), torch.int64, -5, 5)),
    f("cumsum_long_scan", lambda a: torch.cumsum(a, -1), (2, 700), tol=Tol(1e-4, 1e-4)),
    f("flip", lambda a: torch.flip(a, (0, 2)), (3, 4, 5)),
    f("erfinv", torch.erfinv, ((4, 6), torch.float32, -0.999, 0.999), tol=Tol(2e-5, 2e-6)),
    f("repeat", lambda a: a.repeat(2, 1, 3), (3, 2)),
    f("glu", lambda a: F.glu(a, dim=1), (3, 4), tol=TRANSCENDENTAL),
    f("view", lambda a: a.view(6, 5) + 0, (2, 3, 5)),
    f("reshape_infer", lambda a: a.reshape(-1, 3) * 1, (2, 3, 5)),
    f("flatten", lambda a: torch.flatten(a, 1), (2, 3, 5)),
    f("permute", lambda a: a.permute(2, 0, 1) * 1, (2, 3, 5)),
    f("transpose", lambda a: a.transpose(-1, -2) * 1, (2, 3, 5)),
    f("t", lambda a: a.t() * 1, X),
    f("squeeze_unsqueeze", lambda a: a.squeeze(1).unsqueeze(0) * 1, (3, 1, 5)),
    f("cat", lambda a, b: torch.cat([a, b], dim=1), (2, 3), (2, 4)),
    f("stack", lambda a, b: torch.stack([a, b], dim=1), (2, 3), (2, 3)),
    f("split", lambda a: torch.split(a, 2, dim=1)[2] * 1, (3, 5)),
    f("chunk", lambda a: torch.cat(a.chunk(3, dim=0)[::-1], 0), (6, 4)),
    f("slice_step", lambda a: a[:, 1::2] * 1, (3, 7)),
    f("slice_negative", lambda a: a[-2:, :-1] * 1, (4, 5)),
    f("select", lambda a: a[:, 2] * 1, (3, 5)),
    f("narrow", lambda a: a.narrow(0, 1, 2) * 1, (4, 5)),
    f("expand", lambda a: a.expand(4, 3, 5) * 1, (3, 1)),
    f("unbind", lambda a: a.unbind(1)[1] * 1, (3, 2)),
    f("clone_contiguous", lambda a: a.transpose(0, 1).contiguous().clone(), X),
    # constants export folds
    f("arange", lambda a: a + torch.arange(5, dtype=torch.float32), X),
    f("full_like", lambda a: torch.full_like(a, 2.5) * a, X),
    f("zeros_ones", lambda a: a + torch.ones(5) - torch.zeros(3, 5), X),
    f(
        "tril_mask",
        lambda a: a.masked_fill(~torch.tril(torch.ones(4, 4, dtype=torch.bool)), 0.0),
        (2, 4, 4),
    ),
    # attention
    f(
        "sdpa",
        F.scaled_dot_product_attention,
        (2, 2, 4, 8),
        (2, 2, 6, 8),
        (2, 2, 6, 8),
        tol=CONTRACTION,
    ),
    f(
        "sdpa_causal",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        (1, 2, 5, 8),
        (1, 2, 5, 8),
        (1, 2, 5, 8),
        tol=CONTRACTION,
    ),
    f(
        "sdpa_scale",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
        (1, 2, 5, 8),
        (1, 2, 5, 8),
        (1, 2, 5, 8),
        tol=CONTRACTION,
    ),
    f(
        "sdpa_float_mask",
        lambda q, k, v: F.scaled_dot_product_attention(
            q, k, v, k[..., 0:1] @ q[..., 0:1].transpose(-1, -2)
        ),
        (1, 2, 5, 8),
        (1, 2, 5, 8),
        (1, 2, 5, 8),
        tol=CONTRACTION,
    ),
    m("multihead_attention", lambda: _MHA(), (2, 5, 16), tol=CONTRACTION),
    f(
        "sdpa_grouped_query",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
        (1, 6, 5, 8),
        (1, 2, 5, 8),
        (1, 2, 5, 8),
        tol=CONTRACTION,
    ),
]


def _bn(module):
    with torch.no_grad():
        module.running_mean.uniform_(-0.5, 0.5)
        module.running_var.uniform_(0.5, 2.0)
        module.weight.uniform_(0.5, 1.5)
        module.bias.uniform_(-0.5, 0.5)
    return module


class _MHA(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


def _input(case: Case, index: int, shape, dtype, low, high) -> torch.Tensor:
    g = torch.Generator().manual_seed(zlib.crc32(f"{case.name}/{index}".encode()))
    if dtype.is_floating_point:
        return torch.rand(shape, generator=g, dtype=dtype) * (high - low) + low
    return torch.randint(int(low), int(high) + 1, shape, generator=g, dtype=dtype)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_compiled_matches_pytorch(case: Case):
    torch.manual_seed(zlib.crc32(case.name.encode()))
    model = case.model().eval()
    inputs = [_input(case, i, *spec) for i, spec in enumerate(case.inputs)]
    with torch.no_grad():
        expected = model(*inputs)
    module = build_ir(model, inputs)
    results = module.compile()(*[t.numpy() for t in inputs])
    expected = expected if isinstance(expected, tuple) else (expected,)
    results = results if isinstance(results, tuple) else (results,)
    assert len(results) == len(expected)
    for result, reference in zip(results, expected):
        result, reference = np.asarray(result), reference.numpy()
        assert result.dtype == reference.dtype
        np.testing.assert_allclose(result, reference, rtol=case.tol.rtol, atol=case.tol.atol)


def test_table_lowers_the_core_aten_ops_of_cnns_and_transformers():
    ops = set(aten.supported_ops())
    expected = {
        "aten.convolution",
        "aten._native_batch_norm_legit_no_training",
        "aten.max_pool2d_with_indices",
        "aten.avg_pool2d",
        "aten._adaptive_avg_pool2d",
        "aten.addmm",
        "aten.mm",
        "aten.bmm",
        "aten._softmax",
        "aten._log_softmax",
        "aten.native_layer_norm",
        "aten.view",
        "aten._unsafe_view",
        "aten.permute",
        "aten.cat",
        "aten.split_with_sizes",
        "aten.slice",
        "aten.select",
        "aten.expand",
        "aten.where",
        "aten._to_copy",
        "aten.sum",
        "aten.mean",
        "aten.amax",
        "aten.embedding",
        "aten.sym_size",
        "aten.scaled_dot_product_attention",
        "aten.upsample_bilinear2d",
        "aten.upsample_bicubic2d",
        "aten.upsample_nearest2d",
        "aten.cumsum",
        "aten.flip",
        "aten.erfinv",
    }
    assert expected <= ops, expected - ops


# ----- float16: computed in float32 inside, converted at the boundary ---------------------------

FLOAT16 = Tol(1e-2, 1e-2)  # PyTorch rounds every float16 intermediate


class _HalfInside(nn.Module):
    """float32 in and out; a float16 linear layer and activation inside."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 6).half()

    def forward(self, x):
        return torch.relu(self.proj(x.half())).float() * 2


def test_float16_inside_a_module_is_computed_in_float32():
    torch.manual_seed(0)
    model = _HalfInside().eval()
    x = torch.randn(3, 8)
    with torch.no_grad():
        expected = model(x).numpy()
    module = build_ir(model, [x])
    assert "f16" not in module.text
    result = module.compile()(x.numpy())
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, expected, rtol=FLOAT16.rtol, atol=FLOAT16.atol)


class _HalfBlock(nn.Module):
    """A transformer-style block run entirely in float16 (``model.half()``)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        h = self.norm(F.gelu(self.fc(x)))
        return torch.softmax(h, dim=-1), h.sum(dim=-1)


def _assert_float16_close(got, expected):
    assert_outputs_match_in_their_dtypes(got, [e.numpy() for e in expected])


def test_a_half_module_takes_and_returns_float16():
    import cuvil
    from cuvil.frontend import to_ir_with_dynamic_shape

    torch.manual_seed(0)
    model = _HalfBlock().half().eval()
    module = build_ir(model, [torch.randn(3, 8).half()])
    assert module.input_spec == {"x": cuvil.TensorSpec((3, 8), "float16")}
    assert [s.dtype for s in module.output_spec] == ["float16", "float16"]
    assert "f16" not in module.text
    x = torch.randn(3, 8).half()
    with torch.no_grad():  # PyTorch's own float16 on the CPU
        _assert_float16_close(module.compile()(x.numpy()), model(x))
    symbolic = to_ir_with_dynamic_shape(model, [cuvil.TensorSpec(("N", 8), "float16")]).compile()
    for n in (1, 4, 9):
        x = torch.randn(n, 8).half()
        with torch.no_grad():
            _assert_float16_close(symbolic(x.numpy()), model(x))
    with pytest.raises(TypeError, match=r"has dtype float32, but the IR was built for float16"):
        symbolic(torch.randn(2, 8).numpy())


def test_torch_compile_of_a_half_module_returns_float16():
    import cuvil

    torch.manual_seed(0)
    model = _HalfBlock().half().eval()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="cuvil")
    x = torch.randn(5, 8).half()
    before = len(cuvil.compilations())
    with torch.no_grad():
        got = compiled(x)
        _assert_float16_close([g.numpy() for g in got], model(x))
    torch._dynamo.reset()
    (record,) = cuvil.compilations()[before:]  # compiled, not run eagerly
    assert ("float32", (5, 8)) in record.input_types  # computed in float32
