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

from .builder import IRBuilder, TensorType, Value

__all__ = [
    "scalar",
    "normalize_axis",
    "reshape",
    "transpose",
    "broadcast_to",
    "cast",
    "slice_axis",
    "concat",
    "pad",
    "gelu",
    "silu",
    "hardsigmoid",
    "hardswish",
    "leaky_relu",
    "prelu",
    "elu",
    "softplus",
    "mish",
    "clip",
    "log_softmax",
    "layer_norm",
    "rms_norm",
    "batch_norm",
    "matmul",
    "linear",
    "gemm",
    "conv2d",
    "conv_transpose2d",
    "global_pool2d",
    "adaptive_pool2d",
    "upsample_nearest",
    "scaled_dot_product_attention",
    "gather",
    "compare",
    "floor_divide",
    "truncate_divide",
    "remainder",
]


# ----- building blocks --------------------------------------------------------------


def scalar(b: IRBuilder, value, like: Value | str) -> Value:
    """A rank-0 constant ``value`` of ``like``'s dtype (a Value or a dtype-table name)."""
    dtype = like if isinstance(like, str) else like.type.dtype
    return b.constant(np.asarray(value, dtype=dtype))


def normalize_axis(axis: int, rank: int) -> int:
    """``axis`` in ``[0, rank)`` (negative counts from the end); ``ValueError`` if out of range."""
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"axis {axis} is out of range for rank {rank}")
    return axis % max(rank, 1)


def _dynamic_dims(shape) -> tuple:
    """``shape`` with each dynamic dim (a symbol name or ``None``) as ``None``."""
    return tuple(None if d is None or isinstance(d, str) else int(d) for d in shape)


def reshape(b: IRBuilder, x: Value, shape: Sequence[int]) -> Value:
    """``x`` with ``shape`` (at most one ``-1``); no op when the shape is unchanged.

    With dynamic dims (``None`` or a symbol name, in ``shape`` or in ``x``),
    a ``-1`` and the dynamic dims stay ``?``: the compiler derives their sizes.
    """
    dims, current = _dynamic_dims(shape), _dynamic_dims(x.type.shape)
    if None not in current and dims.count(None) == 1:
        dims = tuple(-1 if d is None else d for d in dims)  # static input: its size is known
    if None in dims or None in current:
        dims = tuple(None if d == -1 else d for d in dims)
        if dims == current:
            return x
        return b.op("cuvil.reshape", [x], result_type=TensorType(dims, x.type.dtype))
    shape = list(dims)
    size = int(np.prod(x.type.shape, dtype=np.int64))
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        shape[shape.index(-1)] = size // known if known else 0
    if tuple(shape) == x.type.shape:
        return x
    return b.op("cuvil.reshape", [x], result_type=TensorType(tuple(shape), x.type.dtype))


def transpose(b: IRBuilder, x: Value, perm: Sequence[int]) -> Value:
    """``x`` with its dimensions permuted; no op for the identity permutation."""
    perm = tuple(normalize_axis(int(p), len(x.type.shape)) for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    return b.op("cuvil.transpose", [x], {"permutation": perm})


def broadcast_to(b: IRBuilder, x: Value, shape: Sequence[int]) -> Value:
    """``x`` broadcast to ``shape`` with NumPy rules; no op when already that shape.

    A dynamic dim of ``shape`` (``None`` or a symbol name) is ``x``'s size there.
    """
    shape = _dynamic_dims(shape)
    if shape == _dynamic_dims(x.type.shape):
        return x
    return b.op("cuvil.broadcast_to", [x], result_type=TensorType(shape, x.type.dtype))


def cast(b: IRBuilder, x: Value, dtype: str) -> Value:
    """``x`` converted to dtype ``dtype`` (a table name), NumPy ``astype`` semantics."""
    if x.type.dtype == dtype:
        return x
    return b.op("cuvil.cast", [x], result_type=TensorType(x.type.shape, dtype))


def slice_axis(b: IRBuilder, x: Value, axis: int, start: int, limit: int, step: int = 1) -> Value:
    """``x[..., start:limit:step, ...]`` along ``axis`` (positive step, in-range bounds)."""
    shape = x.type.shape
    if not x.type.is_static:
        raise ValueError(
            f"cannot slice axis {axis} of a tensor of shape {shape}: cuvil.slice needs every "
            "dim static; fix: give the symbolic dims static sizes (a static input_spec)"
        )
    starts, limits, steps = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], steps[axis] = start, limit, step
    if (start, limit, step) == (0, shape[axis], 1):
        return x
    return b.op("cuvil.slice", [x], {"start": starts, "limit": limits, "step": steps})


def concat(b: IRBuilder, values: Sequence[Value], axis: int) -> Value:
    """``values`` concatenated along ``axis``; a single value is returned as is."""
    values = list(values)
    if len(values) == 1:
        return values[0]
    return b.op("cuvil.concat", values, {"axis": normalize_axis(axis, len(values[0].type.shape))})


def pad(b: IRBuilder, x: Value, pads: Sequence[tuple[int, int]], value: float = 0.0) -> Value:
    """``x`` padded with constant ``value``: ``pads[i] = (before, after)`` for each dimension."""
    for axis, (before, after) in enumerate(pads):
        parts = []
        for count in (before, None, after):
            if count is None:
                parts.append(x)
            elif count > 0:
                shape = list(x.type.shape)
                shape[axis] = count
                parts.append(b.constant(np.full(shape, value, dtype=x.type.dtype)))
        x = concat(b, parts, axis)
    return x


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
    positive = b.op("cuvil.compare", [x, zero], {"predicate": _predicate("ge")})
    return b.op("cuvil.where", [positive, x, b.op("cuvil.mul", [x, scalar(b, alpha, x)])])


def prelu(b: IRBuilder, x: Value, slope: Value) -> Value:
    """``x`` where ``x >= 0``, else ``slope * x`` (``slope`` broadcasts, e.g. per channel)."""
    positive = b.op("cuvil.compare", [x, scalar(b, 0.0, x)], {"predicate": _predicate("ge")})
    return b.op("cuvil.where", [positive, x, b.op("cuvil.mul", [x, slope])])


def elu(b: IRBuilder, x: Value, alpha: float = 1.0, scale: float = 1.0) -> Value:
    """``scale * (x if x > 0 else alpha * (exp(x) - 1))``; SELU is ELU with its alpha and scale."""
    positive = b.op("cuvil.compare", [x, scalar(b, 0.0, x)], {"predicate": _predicate("gt")})
    # exp of the negative part only, so large positive inputs do not overflow.
    negative_part = b.op("cuvil.min", [x, scalar(b, 0.0, x)])
    expm1 = b.op("cuvil.sub", [b.op("cuvil.exp", [negative_part]), scalar(b, 1.0, x)])
    y = b.op("cuvil.where", [positive, x, b.op("cuvil.mul", [expm1, scalar(b, alpha, x)])])
    return y if scale == 1.0 else b.op("cuvil.mul", [y, scalar(b, scale, x)])


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


# ----- contractions ---------------------------------------------------------------------


def matmul(b: IRBuilder, x: Value, y: Value) -> Value:
    """NumPy ``x @ y``: a 1-D operand is a row (left) or column (right), removed afterwards."""
    rx, ry = len(x.type.shape), len(y.type.shape)
    x2 = reshape(b, x, (1, -1)) if rx == 1 else x
    y2 = reshape(b, y, (-1, 1)) if ry == 1 else y
    result = b.op("cuvil.matmul", [x2, y2])
    shape = list(result.type.shape)
    if ry == 1:
        shape.pop(-1)
    if rx == 1:
        shape.pop(-2 if ry >= 2 else -1)
    return reshape(b, result, shape)


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


def _bias_nchw(b: IRBuilder, y: Value, bias: Value | None) -> Value:
    if bias is None:
        return y
    return b.op("cuvil.add", [y, reshape(b, bias, (1, -1, 1, 1))])


def conv2d(
    b: IRBuilder,
    x: Value,
    weight: Value,
    bias: Value | None = None,
    *,
    strides=(1, 1),
    padding=(0, 0, 0, 0),
    dilations=(1, 1),
    groups: int = 1,
) -> Value:
    """NCHW convolution with (F, C/groups, KH, KW) weights; ``padding`` (top, left, bottom, right).

    Padding larger than the op accepts is not special-cased: the op's rule decides.
    """
    attrs = {
        "strides": tuple(strides),
        "padding": tuple(padding),
        "dilations": tuple(dilations),
        "groups": int(groups),
    }
    return _bias_nchw(b, b.op("cuvil.conv2d", [x, weight], attrs), bias)


def conv_transpose2d(
    b: IRBuilder,
    x: Value,
    weight: np.ndarray,
    bias: Value | None = None,
    *,
    strides=(1, 1),
    padding=(0, 0, 0, 0),
    output_padding=(0, 0),
    dilations=(1, 1),
    groups: int = 1,
) -> Value:
    """Transposed convolution as zero insertion, padding and a convolution.

    ``weight`` is a constant NumPy array of shape (C_in, C_out/groups, KH, KW)
    (PyTorch and ONNX layout); ``padding`` (top, left, bottom, right) is the
    amount removed from the full output, ``output_padding`` what is added at
    the bottom/right. The input gets ``stride - 1`` zeros between elements,
    ``dilation * (k - 1) - pad`` zeros around it, and is convolved with the
    spatially flipped weight whose in/out channels are swapped per group.
    """
    weight = np.asarray(weight)
    cin, cout_g, kh, kw = weight.shape
    w = weight.reshape(groups, cin // groups, cout_g, kh, kw).transpose(0, 2, 1, 3, 4)
    w = np.ascontiguousarray(w.reshape(groups * cout_g, cin // groups, kh, kw)[:, :, ::-1, ::-1])
    x = _insert_zeros(b, x, strides)
    top, left, bottom, right = padding
    full = [d * (k - 1) for d, k in zip(dilations, (kh, kw))]
    before = (full[0] - top, full[1] - left)
    after = (full[0] - bottom + output_padding[0], full[1] - right + output_padding[1])
    # Negative amounts crop: slice them off, pad the rest.
    n, c, h, wd = x.type.shape
    x = slice_axis(b, x, 2, max(-before[0], 0), h - max(-after[0], 0))
    x = slice_axis(b, x, 3, max(-before[1], 0), wd - max(-after[1], 0))
    pads = [(0, 0), (0, 0)] + [(max(p, 0), max(q, 0)) for p, q in zip(before, after)]
    x = pad(b, x, pads)
    y = b.op(
        "cuvil.conv2d",
        [x, b.constant(w.astype(x.type.dtype))],
        {
            "strides": (1, 1),
            "padding": (0, 0, 0, 0),
            "dilations": tuple(dilations),
            "groups": groups,
        },
    )
    return _bias_nchw(b, y, bias)


def _insert_zeros(b: IRBuilder, x: Value, strides) -> Value:
    """``stride - 1`` zeros between neighbouring elements of the two trailing dimensions."""
    for axis, stride in ((2, strides[0]), (3, strides[1])):
        if stride == 1:
            continue
        shape = list(x.type.shape)
        # (..., H, ...) -> (..., H, 1, ...) ++ zeros (..., H, s-1, ...) -> (..., H*s, ...), crop.
        expanded = reshape(b, x, shape[: axis + 1] + [1] + shape[axis + 1 :])
        zeros_shape = shape[: axis + 1] + [stride - 1] + shape[axis + 1 :]
        zeros = b.constant(np.zeros(zeros_shape, dtype=x.type.dtype))
        joined = concat(b, [expanded, zeros], axis + 1)
        shape[axis] *= stride
        x = slice_axis(b, reshape(b, joined, shape), axis, 0, shape[axis] - stride + 1)
    return x


# ----- pooling --------------------------------------------------------------------------


def global_pool2d(b: IRBuilder, x: Value, kind: str = "avg") -> Value:
    """Mean (``"avg"``) or max (``"max"``) over H and W of NCHW, keeping them as 1x1."""
    op = {"avg": "cuvil.reduce_mean", "max": "cuvil.reduce_max"}[kind]
    rank = len(x.type.shape)
    return b.op(op, [x], {"axes": tuple(range(2, rank)), "keepdims": True})


def adaptive_pool2d(b: IRBuilder, x: Value, output_size, kind: str = "avg") -> Value:
    """PyTorch's adaptive pooling: output cell i covers ``[floor(i*H/o), ceil((i+1)*H/o))``.

    Sizes that divide evenly become one pooling op; others are pooled cell by
    cell and concatenated.
    """
    (h, w), (oh, ow) = x.type.shape[2:], tuple(output_size)
    if (oh, ow) == (1, 1):
        return global_pool2d(b, x, kind)
    if h % oh == 0 and w % ow == 0:
        kernel = (h // oh, w // ow)
        attrs = {"kernel": kernel, "strides": kernel, "padding": (0, 0, 0, 0)}
        return b.op(f"cuvil.{kind}_pool2d", [x], attrs)
    op = {"avg": "cuvil.reduce_mean", "max": "cuvil.reduce_max"}[kind]
    rows = []
    for i in range(oh):
        band = slice_axis(b, x, 2, (i * h) // oh, -((-(i + 1) * h) // oh))
        cells = [
            b.op(
                op,
                [slice_axis(b, band, 3, (j * w) // ow, -((-(j + 1) * w) // ow))],
                {"axes": (2, 3), "keepdims": True},
            )
            for j in range(ow)
        ]
        rows.append(concat(b, cells, 3))
    return concat(b, rows, 2)


def upsample_nearest(b: IRBuilder, x: Value, factors: Sequence[int]) -> Value:
    """Nearest-neighbour upsampling by an integer factor per dimension (each value repeated).

    ``factors`` has one positive int per dimension of ``x``; this is what
    ``F.interpolate(mode="nearest")`` and ONNX ``Resize``/``Upsample`` in
    nearest mode compute for integer scales.
    """
    shape = x.type.shape
    expanded, repeated, final = [], [], []
    for size, factor in zip(shape, factors):
        expanded += [size, 1]
        repeated += [size, int(factor)]
        final.append(size * int(factor))
    y = broadcast_to(b, reshape(b, x, expanded), repeated)
    return reshape(b, y, final)


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
    """
    rank = len(q.type.shape)
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


# ----- indexing -------------------------------------------------------------------------


def gather(b: IRBuilder, data: Value, indices, axis: int = 0) -> Value:
    """NumPy ``take(data, indices, axis)`` as ``cuvil.gather``: ONNX Gather, embedding lookup.

    ``indices`` is an integer :class:`Value` computed at run time or a NumPy
    integer array known now. Negative indices count from the end of ``axis``.
    Known indices are checked (``IndexError`` when out of range); run-time
    ones out of range are clamped by the op, so compiled code never reads out
    of bounds.
    """
    axis = normalize_axis(axis, len(data.type.shape))
    if not isinstance(indices, Value):
        size = data.type.shape[axis]
        known = np.asarray(indices)
        if known.dtype.kind not in "iu":
            raise TypeError(f"gather indices must be integers, got {known.dtype}")
        if np.any((known < -size) | (known >= size)):
            raise IndexError(
                f"gather indices {known.reshape(-1).tolist()} out of range for an axis of "
                f"size {size}"
            )
        if known.size == 0:
            raise ValueError(
                "gather with no indices gives an empty tensor, which Cuvil cannot compile"
            )
        indices = b.constant(known.astype(np.int64))
    elif indices.type.dtype not in ("int32", "int64"):
        indices = cast(b, indices, "int64")
    return b.op("cuvil.gather", [data, indices], {"axis": axis})


# ----- division ------------------------------------------------------------------------


def compare(b: IRBuilder, x: Value, y: Value, predicate: str) -> Value:
    """``x <predicate> y`` (``"lt"``, ``"ne"``, ...) as a boolean tensor."""
    return b.op("cuvil.compare", [x, y], {"predicate": _predicate(predicate)})


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


def _predicate(name: str) -> int:
    from .numpy_tracer.ops import compare_predicate_value

    return compare_predicate_value(name)
