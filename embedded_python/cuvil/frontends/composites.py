"""Framework-neutral compositions of cuvil ops that model importers share (ONNX, PyTorch, JAX/TF).

Each function takes the :class:`~cuvil.frontends.IRBuilder` and its
:class:`~cuvil.frontends.Value` operands, appends cuvil ops (at the builder's
current location: call them inside ``builder.node(...)``) and returns the
result :class:`Value`. Result shapes still come from the ops' shape rules; a
function here decides only which ops a framework operator means. Scalars are
Python numbers, turned into constants of the operand's dtype.

Semantics follow the frameworks' definitions (ONNX operator specs, which
PyTorch and JAX agree with for these): ``gelu(approximate="tanh")`` is
GPT-2's formula, ``hardswish`` is ``x * relu6(x + 3) / 6``, ``conv_transpose2d``
takes PyTorch/ONNX ``(C_in, C_out/groups, KH, KW)`` weights, and so on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .builder import IRBuilder, Value
from .composites_base import *  # noqa: F403  (re-exported)
from .composites_base import __all__ as _base_all
from .composites_base import broadcast_to, compare, normalize_axis, reshape, scalar, transpose
from .composites_conv import *  # noqa: F403  (re-exported)
from .composites_conv import __all__ as _conv_all
from .composites_index import *  # noqa: F403  (re-exported)
from .composites_index import __all__ as _index_all
from .composites_resize import *  # noqa: F403  (re-exported)
from .composites_resize import __all__ as _resize_all

__all__ = [
    *_base_all,
    *_conv_all,
    *_index_all,
    *_resize_all,
    "gelu",
    "silu",
    "hardsigmoid",
    "hardswish",
    "leaky_relu",
    "prelu",
    "elu",
    "softplus",
    "log1p",
    "expm1",
    "mish",
    "clip",
    "log_softmax",
    "erf_inv",
    "layer_norm",
    "rms_norm",
    "batch_norm",
    "batch_statistics_norm",
    "group_norm",
    "channel_affine",
    "linear",
    "gemm",
    "dot_general",
    "einsum",
    "scaled_dot_product_attention",
    "repeat_heads",
    "floor_divide",
    "truncate_divide",
    "round_decimals",
    "remainder",
]


# ----- activations --------------------------------------------------------------------


def gelu(b: IRBuilder, x: Value, approximate: str = "none") -> Value:
    """GELU: exact ``0.5 x (1 + erf(x / sqrt 2))`` or ``approximate="tanh"`` (GPT-2's form)."""
    if approximate == "none":
        return b.op("cuvil.gelu", [x])
    if approximate != "tanh":
        raise ValueError(f"gelu approximate must be 'none' or 'tanh', got {approximate!r}")
    cube = b.op("cuvil.mul", [b.op("cuvil.mul", [x, x]), x])
    inner = b.op("cuvil.add", [x, b.op("cuvil.mul", [cube, scalar(b, 0.044715, x)])])
    t = b.op("cuvil.tanh", [b.op("cuvil.mul", [inner, scalar(b, math.sqrt(2 / math.pi), x)])])
    half_x = b.op("cuvil.mul", [x, scalar(b, 0.5, x)])
    return b.op("cuvil.mul", [half_x, b.op("cuvil.add", [t, scalar(b, 1.0, x)])])


def silu(b: IRBuilder, x: Value, alpha: float = 1.0) -> Value:
    """SiLU / swish: ``x * sigmoid(alpha * x)`` (``alpha`` is ONNX Swish's; SiLU has 1)."""
    scaled = x if alpha == 1.0 else b.op("cuvil.mul", [x, scalar(b, alpha, x)])
    return b.op("cuvil.mul", [x, b.op("cuvil.sigmoid", [scaled])])


def clip(b: IRBuilder, x: Value, lo: float | None = None, hi: float | None = None) -> Value:
    """``min(max(x, lo), hi)``; either bound may be ``None``."""
    if lo is not None:
        x = b.op("cuvil.max", [x, scalar(b, lo, x)])
    if hi is not None:
        x = b.op("cuvil.min", [x, scalar(b, hi, x)])
    return x


def hardsigmoid(b: IRBuilder, x: Value, alpha: float = 1 / 6, beta: float = 0.5) -> Value:
    """``clip(alpha * x + beta, 0, 1)`` (ONNX defaults are alpha=0.2; PyTorch's 1/6)."""
    y = b.op("cuvil.add", [b.op("cuvil.mul", [x, scalar(b, alpha, x)]), scalar(b, beta, x)])
    return clip(b, y, 0.0, 1.0)


def hardswish(b: IRBuilder, x: Value) -> Value:
    """``x * hardsigmoid(x)`` with alpha 1/6, beta 1/2, i.e. ``x * relu6(x + 3) / 6``."""
    return b.op("cuvil.mul", [x, hardsigmoid(b, x)])


def leaky_relu(b: IRBuilder, x: Value, alpha: float = 0.01) -> Value:
    """``x`` where ``x >= 0``, else ``alpha * x``."""
    zero = scalar(b, 0.0, x)
    positive = compare(b, x, zero, "ge")
    return b.op("cuvil.where", [positive, x, b.op("cuvil.mul", [x, scalar(b, alpha, x)])])


def prelu(b: IRBuilder, x: Value, slope: Value) -> Value:
    """``x`` where ``x >= 0``, else ``slope * x`` (``slope`` broadcasts, e.g. per channel)."""
    positive = compare(b, x, scalar(b, 0.0, x), "ge")
    return b.op("cuvil.where", [positive, x, b.op("cuvil.mul", [x, slope])])


def elu(b: IRBuilder, x: Value, alpha: float = 1.0, scale: float = 1.0) -> Value:
    """``scale * (x if x > 0 else alpha * (exp(x) - 1))``; SELU is ELU with its alpha and scale."""
    positive = compare(b, x, scalar(b, 0.0, x), "gt")
    # exp of the negative part only, so large positive inputs do not overflow.
    negative_part = b.op("cuvil.min", [x, scalar(b, 0.0, x)])
    tail = expm1(b, negative_part)
    y = b.op("cuvil.where", [positive, x, b.op("cuvil.mul", [tail, scalar(b, alpha, x)])])
    return y if scale == 1.0 else b.op("cuvil.mul", [y, scalar(b, scale, x)])


def log1p(b: IRBuilder, x: Value) -> Value:
    """``log(1 + x)`` accurate for tiny ``x``: ``log(u) * x / (u - 1)`` with ``u = 1 + x``.

    The factor ``x / (u - 1)`` undoes the rounding of ``1 + x`` (Goldberg); where
    ``u`` rounds to 1 the answer is ``x``, where ``u - 1`` is ``u`` (huge or inf)
    it is ``log(u)``.
    """
    u = b.op("cuvil.add", [x, scalar(b, 1.0, x)])
    d = b.op("cuvil.sub", [u, scalar(b, 1.0, x)])
    log = b.op("cuvil.log", [u])
    corrected = b.op("cuvil.mul", [log, b.op("cuvil.div", [x, d])])
    big = b.op("cuvil.where", [compare(b, u, d, "eq"), log, corrected])
    return b.op("cuvil.where", [compare(b, d, scalar(b, 0.0, x), "eq"), x, big])


def expm1(b: IRBuilder, x: Value) -> Value:
    """``exp(x) - 1`` accurate for tiny ``x``: ``(u - 1) * x / log(u)`` with ``u = exp(x)``
    (Kahan); ``x`` where ``u`` rounds to 1, ``-1`` where ``u - 1`` does, ``u`` where it is inf.
    """
    one = scalar(b, 1.0, x)
    u = b.op("cuvil.exp", [x])
    um1 = b.op("cuvil.sub", [u, one])
    corrected = b.op("cuvil.div", [b.op("cuvil.mul", [um1, x]), b.op("cuvil.log", [u])])
    result = b.op("cuvil.where", [compare(b, um1, scalar(b, -1.0, x), "eq"), um1, corrected])
    result = b.op("cuvil.where", [compare(b, u, scalar(b, np.inf, x), "eq"), u, result])
    return b.op("cuvil.where", [compare(b, u, one, "eq"), x, result])


def softplus(b: IRBuilder, x: Value) -> Value:
    """``log(1 + exp(x))`` computed as ``max(x, 0) + log(1 + exp(-|x|))`` (no overflow)."""
    tail = b.op("cuvil.exp", [b.op("cuvil.neg", [b.op("cuvil.abs", [x])])])
    log1p = b.op("cuvil.log", [b.op("cuvil.add", [tail, scalar(b, 1.0, x)])])
    return b.op("cuvil.add", [b.op("cuvil.relu", [x]), log1p])


def mish(b: IRBuilder, x: Value) -> Value:
    """``x * tanh(softplus(x))``."""
    return b.op("cuvil.mul", [x, b.op("cuvil.tanh", [softplus(b, x)])])


def log_softmax(b: IRBuilder, x: Value, axis: int = -1) -> Value:
    """``x - max - log(sum(exp(x - max)))`` along ``axis`` (stable for large inputs)."""
    axis = normalize_axis(axis, len(x.type.shape))
    attrs = {"axes": (axis,), "keepdims": True}
    shifted = b.op("cuvil.sub", [x, b.op("cuvil.reduce_max", [x], attrs)])
    total = b.op("cuvil.reduce_sum", [b.op("cuvil.exp", [shifted])], attrs)
    return b.op("cuvil.sub", [shifted, b.op("cuvil.log", [total])])


# Giles' single-precision inverse-error-function polynomials (what XLA evaluates for
# ``erf_inv``): one for w = -log(1 - x^2) < 5, one in sqrt(w) for the tails.
_ERF_INV_CENTRAL = (
    2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
    -0.00125372503, -0.00417768164, 0.246640727, 1.50140941,
)  # fmt: skip
_ERF_INV_TAIL = (
    -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
    -0.0076224613, 0.00943887047, 1.00167406, 2.83297682,
)  # fmt: skip


def erf_inv(b: IRBuilder, x: Value) -> Value:
    """The inverse error function on (-1, 1), +-inf at +-1 (float32 accuracy, as XLA's)."""

    def horner(w: Value, coefficients) -> Value:
        p = scalar(b, coefficients[0], w)
        for c in coefficients[1:]:
            p = b.op("cuvil.add", [b.op("cuvil.mul", [p, w]), scalar(b, c, w)])
        return p

    one = scalar(b, 1.0, x)
    product = b.op("cuvil.mul", [b.op("cuvil.sub", [one, x]), b.op("cuvil.add", [one, x])])
    w = b.op("cuvil.neg", [b.op("cuvil.log", [product])])
    central = horner(b.op("cuvil.sub", [w, scalar(b, 2.5, x)]), _ERF_INV_CENTRAL)
    tail = horner(b.op("cuvil.sub", [b.op("cuvil.sqrt", [w]), scalar(b, 3.0, x)]), _ERF_INV_TAIL)
    p = b.op("cuvil.where", [compare(b, w, scalar(b, 5.0, x), "lt"), central, tail])
    edge = compare(b, b.op("cuvil.abs", [x]), one, "eq")
    infinite = b.op("cuvil.mul", [x, scalar(b, np.inf, x)])
    return b.op("cuvil.where", [edge, infinite, b.op("cuvil.mul", [p, x])])


# ----- normalizations ---------------------------------------------------------------------


def layer_norm(
    b: IRBuilder,
    x: Value,
    gamma: Value | None = None,
    beta: Value | None = None,
    *,
    axis: int = -1,
    epsilon: float = 1e-5,
) -> Value:
    """Normalize over dimensions ``[axis, rank)``; ``gamma``/``beta`` broadcast to them (or 1/0)."""
    axis = normalize_axis(axis, len(x.type.shape))
    norm_shape = x.type.shape[axis:]
    dtype = x.type.dtype
    gamma = b.constant(np.ones(norm_shape, dtype)) if gamma is None else gamma
    beta = b.constant(np.zeros(norm_shape, dtype)) if beta is None else beta
    params = [broadcast_to(b, p, norm_shape) for p in (gamma, beta)]
    return b.op("cuvil.layer_norm", [x, *params], {"axis": axis, "epsilon": float(epsilon)})


def rms_norm(
    b: IRBuilder, x: Value, scale: Value | None = None, *, axis: int = -1, epsilon: float = 1e-5
) -> Value:
    """``x / sqrt(mean(x^2 over [axis, rank)) + epsilon) * scale`` (RMSNorm, LLaMA-style)."""
    rank = len(x.type.shape)
    axes = tuple(range(normalize_axis(axis, rank), rank))
    mean_square = b.op(
        "cuvil.reduce_mean", [b.op("cuvil.mul", [x, x])], {"axes": axes, "keepdims": True}
    )
    inverse = b.op("cuvil.rsqrt", [b.op("cuvil.add", [mean_square, scalar(b, epsilon, x)])])
    y = b.op("cuvil.mul", [x, inverse])
    return y if scale is None else b.op("cuvil.mul", [y, scale])


def batch_norm(
    b: IRBuilder, x: Value, scale: Value, bias: Value, mean: Value, var: Value, epsilon=1e-5
) -> Value:
    """Inference batch norm over channel axis 1 of an (N, C, ...) tensor of any rank >= 2."""
    shape = x.type.shape
    # cuvil.batch_norm takes NCHW: view other ranks as (N, C, L, 1).
    x4 = x if len(shape) == 4 else reshape(b, x, (shape[0], shape[1], -1, 1))
    attrs = {"epsilon": float(epsilon)}
    y = b.op("cuvil.batch_norm", [x4, scale, bias, mean, var], attrs)
    return reshape(b, y, shape)


def batch_statistics_norm(b: IRBuilder, x: Value, epsilon: float = 1e-5) -> Value:
    """``(x - mean) / sqrt(var + epsilon)`` with statistics over every axis but channel axis 1.

    What an instance norm, or a batch norm without running statistics,
    computes in inference; no affine (see :func:`channel_affine`).
    """
    attrs = {"axes": tuple(d for d in range(len(x.type.shape)) if d != 1), "keepdims": True}
    centered = b.op("cuvil.sub", [x, b.op("cuvil.reduce_mean", [x], attrs)])
    var = b.op("cuvil.reduce_mean", [b.op("cuvil.mul", [centered, centered])], attrs)
    inverse = b.op("cuvil.rsqrt", [b.op("cuvil.add", [var, scalar(b, epsilon, x)])])
    return b.op("cuvil.mul", [centered, inverse])


def group_norm(b: IRBuilder, x: Value, groups: int, epsilon: float = 1e-5) -> Value:
    """Normalize each of ``groups`` channel groups of (N, C, ...) over its channels and positions.

    Each group is a layer norm of its flattened values; no affine (see :func:`channel_affine`).
    """
    shape = x.type.shape
    grouped = reshape(b, x, (shape[0], int(groups), -1))
    return reshape(b, layer_norm(b, grouped, epsilon=epsilon), shape)


def channel_affine(
    b: IRBuilder, y: Value, weight: Value | None = None, bias: Value | None = None
) -> Value:
    """``y * weight + bias`` with per-channel (axis 1) parameters, either of them optional."""
    per_channel = (1, y.type.shape[1]) + (1,) * (len(y.type.shape) - 2)
    for op, param in (("cuvil.mul", weight), ("cuvil.add", bias)):
        if param is not None:
            y = b.op(op, [y, reshape(b, param, per_channel)])
    return y


# ----- contractions ---------------------------------------------------------------------


def linear(b: IRBuilder, x: Value, weight: Value, bias: Value | None = None) -> Value:
    """PyTorch ``F.linear``: ``x @ weight.T + bias`` with ``weight`` of shape (out, in)."""
    y = b.op("cuvil.matmul", [x, transpose(b, weight, (1, 0))])
    return y if bias is None else b.op("cuvil.add", [y, bias])


def gemm(
    b: IRBuilder,
    a: Value,
    w: Value,
    c: Value | None = None,
    *,
    alpha: float = 1.0,
    beta: float = 1.0,
    trans_a: bool = False,
    trans_b: bool = False,
) -> Value:
    """ONNX Gemm: ``alpha * op(a) @ op(w) + beta * c`` on matrices, ``c`` broadcast."""
    a = transpose(b, a, (1, 0)) if trans_a else a
    w = transpose(b, w, (1, 0)) if trans_b else w
    y = b.op("cuvil.matmul", [a, w])
    if alpha != 1.0:
        y = b.op("cuvil.mul", [y, scalar(b, alpha, y)])
    if c is None or beta == 0.0:
        return y
    if beta != 1.0:
        c = b.op("cuvil.mul", [c, scalar(b, beta, c)])
    return b.op("cuvil.add", [y, c])


def dot_general(
    b: IRBuilder, lhs: Value, rhs: Value, contract: Sequence[Sequence[int]], batch=((), ())
) -> Value:
    """XLA's DotGeneral: contract ``contract[0]`` of ``lhs`` with ``contract[1]`` of ``rhs``.

    The result is (batch dims, lhs free dims, rhs free dims), computed as one
    ``cuvil.matmul`` of (B, M, K) by (B, K, N) after transposes and reshapes.
    """
    (lc, rc), (lb, rb) = [list(map(int, c)) for c in contract], [list(map(int, c)) for c in batch]
    ls, rs = lhs.type.shape, rhs.type.shape
    lf = [d for d in range(len(ls)) if d not in lc and d not in lb]
    rf = [d for d in range(len(rs)) if d not in rc and d not in rb]

    def merged(x: Value, groups: list) -> Value:
        """``x`` transposed to the order of ``groups`` (lists of its dims), each merged into one."""
        order = [d for group in groups for d in group]
        target = [_extent(b, x, group, run_time=False) for group in groups]
        sizes = []
        if target.count(None) > 1:  # several merged dynamic sizes: give them, not derive them
            sizes = [_extent(b, x, g) for g, t in zip(groups, target) if t is None]
        return reshape(b, transpose(b, x, order), target, sizes)

    lhs2 = merged(lhs, ([lb] if lb else []) + [lf, lc])
    rhs2 = merged(rhs, ([rb] if rb else []) + [rc, rf])
    product = b.op("cuvil.matmul", [lhs2, rhs2])
    # Each dynamic result size is a dim of an operand, read before the reshapes merged it.
    result_dims = [(lhs, d) for d in lb + lf] + [(rhs, d) for d in rf]
    sizes = [b.dim(v, d) for v, d in result_dims if not isinstance(v.type.shape[d], int)]
    shape = [v.type.shape[d] for v, d in result_dims]
    return reshape(b, product, shape, sizes if len(sizes) > 1 else ())


def _extent(b: IRBuilder, x: Value, dims: Sequence[int], run_time: bool = True):
    """The product of ``x``'s sizes in ``dims``: an int when static, else ``None`` or, with
    ``run_time``, an index value computed from ``cuvil.dim``."""
    static, dynamic = 1, []
    for d in dims:
        size = x.type.shape[d]
        if isinstance(size, int):
            static *= size
        else:
            dynamic.append(d)
    if not dynamic:
        return static
    if not run_time:
        return None
    total = b.dim(x, dynamic[0])
    for d in dynamic[1:]:
        total = b.index_op("arith.muli", total, b.dim(x, d))
    return total if static == 1 else b.index_op("arith.muli", total, b.index_constant(static))


def einsum(b: IRBuilder, equation: str, lhs: Value, rhs: Value) -> Value:
    """A two-operand ``einsum`` (``"btnh,bsnh->bnts"``) as one :func:`dot_general`.

    Letters in both operands and the output are batch dimensions, in both but
    not the output contracted; a letter only in one operand and not in the
    output is summed first. Repeated letters within one operand are not
    supported (``ValueError``).
    """
    inputs, output = equation.replace(" ", "").split("->")
    left, right = inputs.split(",")
    for term in (left, right, output):
        if len(set(term)) != len(term) or "." in term:
            raise ValueError(f"einsum {equation!r}: repeated or ellipsis indices are not supported")

    def drop_unused(x: Value, term: str, other: str) -> tuple[Value, str]:
        unused = [i for i, c in enumerate(term) if c not in other and c not in output]
        if not unused:
            return x, term
        x = b.op("cuvil.reduce_sum", [x], {"axes": tuple(unused)})
        return x, "".join(c for i, c in enumerate(term) if i not in unused)

    lhs, left = drop_unused(lhs, left, right)
    rhs, right = drop_unused(rhs, right, left)
    batch = [c for c in left if c in right and c in output]
    contract = [c for c in left if c in right and c not in output]
    y = dot_general(
        b,
        lhs,
        rhs,
        ([left.index(c) for c in contract], [right.index(c) for c in contract]),
        ([left.index(c) for c in batch], [right.index(c) for c in batch]),
    )
    order = batch + [c for c in left if c not in batch + contract]
    order += [c for c in right if c not in batch + contract]
    return transpose(b, y, [order.index(c) for c in output])


# ----- attention ------------------------------------------------------------------------


def scaled_dot_product_attention(
    b: IRBuilder,
    q: Value,
    k: Value,
    v: Value,
    mask: Value | None = None,
    *,
    is_causal: bool = False,
    scale: float | None = None,
) -> Value:
    """``softmax(q @ k^T * scale + mask) @ v`` over (..., L, E) queries and (..., S, E) keys.

    ``mask`` is boolean (``True`` = attend) or additive float, broadcast to
    (..., L, S); ``is_causal`` masks keys after each query (PyTorch's
    ``scaled_dot_product_attention``). ``scale`` defaults to ``1/sqrt(E)``.
    Grouped-query attention: when ``k``/``v`` have fewer heads (dimension -3)
    than ``q``, each key/value head serves ``q_heads / kv_heads`` consecutive
    query heads.
    """
    rank = len(q.type.shape)
    if rank >= 3 and k.type.shape[-3] != q.type.shape[-3]:
        k, v = (repeat_heads(b, t, q.type.shape[-3]) for t in (k, v))
    length, embed = q.type.shape[-2], q.type.shape[-1]
    keys = k.type.shape[-2]
    scale = 1.0 / math.sqrt(embed) if scale is None else scale
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    scores = b.op("cuvil.matmul", [q, transpose(b, k, perm)])
    scores = b.op("cuvil.mul", [scores, scalar(b, scale, scores)])
    if is_causal:
        causal = np.tril(np.ones((length, keys), dtype=bool))
        scores = b.op("cuvil.where", [b.constant(causal), scores, scalar(b, -np.inf, scores)])
    if mask is not None:
        if mask.type.dtype == "bool":
            scores = b.op("cuvil.where", [mask, scores, scalar(b, -np.inf, scores)])
        else:
            scores = b.op("cuvil.add", [scores, mask])
    weights = b.op("cuvil.softmax", [scores], {"axis": rank - 1})
    return b.op("cuvil.matmul", [weights, v])


def repeat_heads(b: IRBuilder, x: Value, heads: int) -> Value:
    """(..., H, S, E) key/value heads repeated to ``heads`` (each ``heads / H`` times in a row)."""
    *lead, kv_heads, length, embed = x.type.shape
    if heads % kv_heads:
        raise ValueError(f"{heads} query heads cannot share {kv_heads} key/value heads evenly")
    group = heads // kv_heads
    x = reshape(b, x, (*lead, kv_heads, 1, length, embed))
    x = broadcast_to(b, x, (*lead, kv_heads, group, length, embed))
    return reshape(b, x, (*lead, heads, length, embed))


# ----- division ------------------------------------------------------------------------


def _both(b: IRBuilder, p: Value, q: Value) -> Value:
    """Elementwise ``p and q`` of two boolean tensors."""
    return b.op("cuvil.where", [p, q, p])


def _sign_differs(b: IRBuilder, mod: Value, y: Value) -> Value:
    """Where a nonzero remainder ``mod`` and the divisor ``y`` have opposite signs."""
    zero = scalar(b, 0, mod)
    nonzero = compare(b, mod, zero, "ne")
    opposite = compare(b, compare(b, mod, zero, "lt"), compare(b, y, zero, "lt"), "ne")
    return _both(b, nonzero, opposite)


def remainder(b: IRBuilder, x: Value, y: Value) -> Value:
    """Python's / NumPy's ``x % y``: the remainder with the divisor's sign.

    ``cuvil.rem`` is C's ``fmod`` (the dividend's sign); a nonzero result of
    the other sign moves by one ``y``. Integer ``x % 0`` is 0, as in NumPy.
    """
    mod = b.op("cuvil.rem", [x, y])
    return b.op("cuvil.where", [_sign_differs(b, mod, y), b.op("cuvil.add", [mod, y]), mod])


def floor_divide(b: IRBuilder, x: Value, y: Value) -> Value:
    """Python's / NumPy's ``x // y``.

    Integers: ``cuvil.div`` is floor division already (``x // 0`` is 0). Floats
    follow NumPy's ``divmod``: ``(x - fmod(x, y)) / y``, one less where the
    remainder's sign differs from ``y``'s, then rounded to the nearest integer
    (the quotient of an exact difference is within rounding of one); ``x / 0``
    where ``y`` is 0 (inf or nan, as NumPy).
    """
    if not y.type.dtype.startswith("float"):
        return b.op("cuvil.div", [x, y])
    mod = b.op("cuvil.rem", [x, y])
    div = b.op("cuvil.div", [b.op("cuvil.sub", [x, mod]), y])
    div = b.op(
        "cuvil.where",
        [_sign_differs(b, mod, y), b.op("cuvil.sub", [div, scalar(b, 1, div)]), div],
    )
    floor = b.op("cuvil.floor", [div])
    above_half = compare(b, b.op("cuvil.sub", [div, floor]), scalar(b, 0.5, div), "gt")
    rounded = b.op(
        "cuvil.where", [above_half, b.op("cuvil.add", [floor, scalar(b, 1, div)]), floor]
    )
    by_zero = compare(b, y, scalar(b, 0, y), "eq")
    return b.op("cuvil.where", [by_zero, b.op("cuvil.div", [x, y]), rounded])


def round_decimals(b: IRBuilder, x: Value, decimals: int = 0, op: str = "cuvil.round") -> Value:
    """``op`` (ties-to-even rounding by default) at ``decimals`` digits, as NumPy and PyTorch
    compute it: ``op(x * 10^d) / 10^d``, or ``op(x / 10^-d) * 10^-d`` for negative ``d``."""
    if not decimals:
        return b.op(op, [x])
    scale = scalar(b, 10.0 ** abs(decimals), x)
    if decimals > 0:
        return b.op("cuvil.div", [b.op(op, [b.op("cuvil.mul", [x, scale])]), scale])
    return b.op("cuvil.mul", [b.op(op, [b.op("cuvil.div", [x, scale])]), scale])


def truncate_divide(b: IRBuilder, x: Value, y: Value) -> Value:
    """C's ``x / y``: an integer quotient rounds toward zero (ONNX ``Div`` on integers).

    Floats stay a true division (ONNX's meaning); a caller that wants the
    quotient truncated (``torch.div(rounding_mode="trunc")``) adds ``cuvil.trunc``.
    """
    if y.type.dtype.startswith("float"):
        return b.op("cuvil.div", [x, y])
    # Floor division is one below the truncated quotient where an inexact
    # quotient is negative, i.e. where the remainder's sign differs from y's.
    floor = b.op("cuvil.div", [x, y])
    mod = b.op("cuvil.rem", [x, y])
    return b.op(
        "cuvil.where",
        [_sign_differs(b, mod, y), b.op("cuvil.add", [floor, scalar(b, 1, floor)]), floor],
    )
