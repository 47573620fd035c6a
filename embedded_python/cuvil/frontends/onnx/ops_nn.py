"""ONNX neural-network operators: convolution, pooling, normalization, Gemm/MatMul, activations."""

from __future__ import annotations

import numpy as np

from .. import composites as C
from ..symbolic_dims import SymDim, same_size
from .importer import NodeContext, op

# ----- windows: Conv, ConvTranspose, pooling ----------------------------------------------


def _pairs(ctx: NodeContext, name: str, default: int, spatial: int) -> list[int]:
    values = ctx.attr(name)
    return [default] * spatial if values is None else [int(v) for v in values]


def _window_padding(ctx: NodeContext, sizes, kernel, strides, dilations) -> tuple[int, ...]:
    """(top, left, bottom, right) from ``pads`` or ``auto_pad`` (SAME_UPPER/LOWER, VALID)."""
    spatial = len(sizes)
    auto = ctx.attr("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        pads = _pairs(ctx, "pads", 0, 2 * spatial)
        return tuple(pads)
    if auto == "VALID":
        return (0,) * (2 * spatial)
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.unsupported(f"auto_pad={auto!r}")
    begin, end = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begin.append(small if auto == "SAME_UPPER" else large)
        end.append(large if auto == "SAME_UPPER" else small)
    return tuple(begin + end)


def _as_2d(ctx: NodeContext, x):
    """Lift a 1-D window op's (N, C, L) input to (N, C, 1, L); returns the value and an undo."""
    rank = len(x.type.shape)
    if rank == 4:
        return x, lambda y: y
    if rank != 3:
        raise ctx.unsupported(f"a {rank - 2}-D window (Cuvil has 1-D and 2-D convolution/pooling)")
    n, c, length = x.type.shape
    x = C.reshape(ctx.b, x, (n, c, 1, length))
    return x, lambda y: C.reshape(ctx.b, y, (y.type.shape[0], y.type.shape[1], y.type.shape[3]))


def _lift_params(values, rank: int, fill: int) -> list[int]:
    """1-D window parameters as 2-D ones (height 1)."""
    return list(values) if rank == 4 else [fill] + list(values)


def _lift_pads(pads, rank: int) -> tuple[int, ...]:
    return tuple(pads) if rank == 4 else (0, pads[0], 0, pads[1])


@op("Conv")
def conv(ctx: NodeContext):
    ctx.require_float(0)
    x0 = ctx.value(0)
    rank, weight = len(x0.type.shape), ctx.value(1)
    kernel = list(weight.type.shape[2:])
    spatial = len(kernel)
    strides = _pairs(ctx, "strides", 1, spatial)
    dilations = _pairs(ctx, "dilations", 1, spatial)
    pads = _window_padding(ctx, x0.type.shape[2:], kernel, strides, dilations)
    x, undo = _as_2d(ctx, x0)
    if rank == 3:
        f, cg, k = weight.type.shape
        weight = C.reshape(ctx.b, weight, (f, cg, 1, k))
    bias = ctx.value(2) if ctx.has(2) else None
    y = C.conv2d(
        ctx.b,
        x,
        weight,
        bias,
        strides=_lift_params(strides, rank, 1),
        padding=_lift_pads(pads, rank),
        dilations=_lift_params(dilations, rank, 1),
        groups=ctx.attr("group", 1),
    )
    return [undo(y)]


@op("ConvTranspose")
def conv_transpose(ctx: NodeContext):
    ctx.require_float(0)
    x0 = ctx.value(0)
    weight = np.asarray(ctx.constant(1, "the weight"))
    rank = len(x0.type.shape)
    kernel = list(weight.shape[2:])
    spatial = len(kernel)
    strides = _pairs(ctx, "strides", 1, spatial)
    dilations = _pairs(ctx, "dilations", 1, spatial)
    out_pad = _pairs(ctx, "output_padding", 0, spatial)
    sizes = x0.type.shape[2:]
    pads = _pairs(ctx, "pads", 0, 2 * spatial)
    output_shape = ctx.attr("output_shape")
    auto = ctx.attr("auto_pad", "NOTSET")
    if output_shape is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
        wanted = (
            output_shape[-spatial:] if output_shape else [n * s for n, s in zip(sizes, strides)]
        )
        begin, end = [], []
        for n, k, s, d, op_, want in zip(sizes, kernel, strides, dilations, out_pad, wanted):
            total = s * (n - 1) + op_ + (k - 1) * d + 1 - want
            half = total // 2
            # The spec puts the odd pixel at the start unless auto_pad is SAME_UPPER.
            lower = auto != "SAME_UPPER"
            begin.append(total - half if lower else half)
            end.append(half if lower else total - half)
        pads = begin + end
    elif auto == "VALID":
        pads = [0] * (2 * spatial)
    x, undo = _as_2d(ctx, x0)
    if rank == 3:
        weight = weight.reshape(weight.shape[0], weight.shape[1], 1, weight.shape[2])
    y = C.conv_transpose2d(
        ctx.b,
        x,
        weight,
        ctx.value(2) if ctx.has(2) else None,
        strides=_lift_params(strides, rank, 1),
        padding=_lift_pads(pads, rank),
        output_padding=_lift_params(out_pad, rank, 0),
        dilations=_lift_params(dilations, rank, 1),
        groups=ctx.attr("group", 1),
    )
    return [undo(y)]


@op("MaxPool", "AveragePool")
def pool(ctx: NodeContext):
    ctx.require_float(0)
    x0 = ctx.value(0)
    rank = len(x0.type.shape)
    kernel = [int(k) for k in ctx.attr("kernel_shape")]
    spatial = len(kernel)
    strides = _pairs(ctx, "strides", 1, spatial)
    dilations = _pairs(ctx, "dilations", 1, spatial)
    if any(d != 1 for d in dilations):
        raise ctx.unsupported(f"dilations {dilations} (Cuvil pools without dilation)")
    pads = list(_window_padding(ctx, x0.type.shape[2:], kernel, strides, dilations))
    include_pad = bool(ctx.attr("count_include_pad", 0))
    if ctx.attr("ceil_mode", 0):
        _ceil_mode_padding(ctx, x0.type.shape[2:], kernel, strides, pads, include_pad)
    x, undo = _as_2d(ctx, x0)
    kind = "max" if ctx.op_type == "MaxPool" else "avg"
    attrs = {
        "kernel": _lift_params(kernel, rank, 1),
        "strides": _lift_params(strides, rank, 1),
        "padding": _lift_pads(pads, rank),
    }
    if kind == "avg":
        attrs["count_include_pad"] = include_pad
    return [undo(ctx.b.op(f"cuvil.{kind}_pool2d", [x], attrs))]


def _ceil_mode_padding(ctx, sizes, kernel, strides, pads, include_pad) -> None:
    """Extend the end padding so floor division gives ceil_mode's output size."""
    spatial = len(sizes)
    for i, (n, k, s) in enumerate(zip(sizes, kernel, strides)):
        span = n + pads[i] + pads[i + spatial] - k
        out = -(-span // s) + 1
        # ONNX drops a last window that would start inside the end padding.
        if (out - 1) * s >= n + pads[i]:
            out -= 1
        extra = (out - 1) * s + k - (n + pads[i] + pads[i + spatial])
        if extra > 0:
            if include_pad and ctx.op_type == "AveragePool":
                raise ctx.unsupported("ceil_mode=1 with count_include_pad=1")
            pads[i + spatial] += extra


@op("GlobalAveragePool", "GlobalMaxPool")
def global_pool(ctx: NodeContext):
    kind = "avg" if ctx.op_type == "GlobalAveragePool" else "max"
    return [C.global_pool2d(ctx.b, ctx.value(0), kind)]


# ----- normalizations ----------------------------------------------------------------------


@op("BatchNormalization")
def batch_norm(ctx: NodeContext):
    if ctx.attr("training_mode", 0):
        raise ctx.unsupported("training_mode=1 (batch statistics); Cuvil imports inference graphs")
    ctx.require_float(0)
    operands = [ctx.value(i) for i in range(5)]
    return [C.batch_norm(ctx.b, *operands, epsilon=ctx.attr("epsilon", 1e-5))]


@op("LayerNormalization")
def layer_norm(ctx: NodeContext):
    ctx.require_float(0)
    beta = ctx.value(2) if ctx.has(2) else None
    axis, epsilon = ctx.attr("axis", -1), ctx.attr("epsilon", 1e-5)
    return [C.layer_norm(ctx.b, ctx.value(0), ctx.value(1), beta, axis=axis, epsilon=epsilon)]


@op("RMSNormalization")
def rms_norm(ctx: NodeContext):
    ctx.require_float(0)
    axis, epsilon = ctx.attr("axis", -1), ctx.attr("epsilon", 1e-5)
    return [C.rms_norm(ctx.b, ctx.value(0), ctx.value(1), axis=axis, epsilon=epsilon)]


# ----- contractions ------------------------------------------------------------------------


@op("MatMul")
def matmul(ctx: NodeContext):
    if ctx.all_constant():
        return [np.matmul(ctx.inputs[0], ctx.inputs[1])]
    return [C.matmul(ctx.b, ctx.value(0), ctx.value(1))]


@op("Gemm")
def gemm(ctx: NodeContext):
    return [
        C.gemm(
            ctx.b,
            ctx.value(0),
            ctx.value(1),
            ctx.value(2) if ctx.has(2) else None,
            alpha=float(ctx.attr("alpha", 1.0)),
            beta=float(ctx.attr("beta", 1.0)),
            trans_a=bool(ctx.attr("transA", 0)),
            trans_b=bool(ctx.attr("transB", 0)),
        )
    ]


# ----- activations and softmax ----------------------------------------------------------------


@op("Gelu")
def gelu(ctx: NodeContext):
    return [C.gelu(ctx.b, ctx.value(0), ctx.attr("approximate", "none"))]


@op("LeakyRelu")
def leaky_relu(ctx: NodeContext):
    return [C.leaky_relu(ctx.b, ctx.value(0), float(ctx.attr("alpha", 0.01)))]


@op("Swish")
def swish(ctx: NodeContext):
    return [C.silu(ctx.b, ctx.value(0), float(ctx.attr("alpha", 1.0)))]


@op("PRelu")
def prelu(ctx: NodeContext):
    return [C.prelu(ctx.b, ctx.value(0), ctx.value(1))]


@op("Elu", "Selu")
def elu(ctx: NodeContext):
    if ctx.op_type == "Elu":
        return [C.elu(ctx.b, ctx.value(0), float(ctx.attr("alpha", 1.0)))]
    alpha = float(ctx.attr("alpha", 1.67326319217681884765625))
    gamma = float(ctx.attr("gamma", 1.05070102214813232421875))
    return [C.elu(ctx.b, ctx.value(0), alpha, gamma)]


@op("Softplus", "Mish")
def softplus(ctx: NodeContext):
    compose = C.softplus if ctx.op_type == "Softplus" else C.mish
    return [compose(ctx.b, ctx.value(0))]


@op("HardSigmoid")
def hard_sigmoid(ctx: NodeContext):
    alpha, beta = float(ctx.attr("alpha", 0.2)), float(ctx.attr("beta", 0.5))
    return [C.hardsigmoid(ctx.b, ctx.value(0), alpha, beta)]


@op("HardSwish")
def hard_swish(ctx: NodeContext):
    return [C.hardswish(ctx.b, ctx.value(0))]


@op("Clip")
def clip(ctx: NodeContext):
    if ctx.opset < 11:
        lo, hi = ctx.attr("min"), ctx.attr("max")
    else:
        lo = float(ctx.constant(1, "min")) if ctx.has(1) else None
        hi = float(ctx.constant(2, "max")) if ctx.has(2) else None
    if ctx.all_constant():
        return [np.clip(ctx.inputs[0], lo, hi)]
    return [C.clip(ctx.b, ctx.value(0), lo, hi)]


@op("Softmax", "LogSoftmax")
def softmax(ctx: NodeContext):
    ctx.require_float(0)
    x = ctx.value(0)
    shape = x.type.shape
    log = ctx.op_type == "LogSoftmax"
    if ctx.opset >= 13:
        axis = C.normalize_axis(ctx.attr("axis", -1), len(shape))
        if log:
            return [C.log_softmax(ctx.b, x, axis)]
        return [ctx.b.op("cuvil.softmax", [x], {"axis": axis})]
    # Before opset 13 the input is flattened to 2-D at ``axis`` (default 1) first.
    axis = C.normalize_axis(ctx.attr("axis", 1), len(shape))
    rows = int(np.prod(shape[:axis], dtype=np.int64))
    flat = C.reshape(ctx.b, x, (rows, -1))
    y = C.log_softmax(ctx.b, flat, 1) if log else ctx.b.op("cuvil.softmax", [flat], {"axis": 1})
    return [C.reshape(ctx.b, y, shape)]


@op("Dropout")
def dropout(ctx: NodeContext):
    # Inference: the identity (the importer refuses mode="training").
    if len(ctx.node.output) > 1 and ctx.node.output[1]:
        raise ctx.unsupported("Dropout's mask output")
    return [ctx.inputs[0]]


@op("Pad")
def pad(ctx: NodeContext):
    mode = ctx.attr("mode", "constant")
    if mode != "constant":
        raise ctx.unsupported(f"mode={mode!r} (constant padding only)")
    rank = ctx.rank(0)
    pads = ctx.ints("pads", 1)
    value = ctx.attr("value", 0.0) if ctx.opset < 11 else 0.0
    if ctx.opset >= 11 and ctx.has(2):
        value = float(np.asarray(ctx.constant(2, "the constant value")).reshape(-1)[0])
    axes = ctx.ints("", 3) if ctx.opset >= 18 else None
    axes = list(range(rank)) if axes is None else [C.normalize_axis(a, rank) for a in axes]
    pairs = [(0, 0)] * rank
    for i, axis in enumerate(axes):
        pairs[axis] = (pads[i], pads[i + len(axes)])
    if any(p < 0 for pair in pairs for p in pair):
        raise ctx.unsupported(f"negative pads {pads} (cropping)")
    return [C.pad(ctx.b, ctx.value(0), pairs, value)]


@op("Attention")
def attention(ctx: NodeContext):
    """Opset 23 Attention: 4-D (batch, heads, length, head size) or 3-D (batch, length, hidden)
    inputs, grouped key/value heads, a boolean or additive mask, causal masking, and a key/value
    cache (past keys/values concatenated before the new ones, returned as the present ones)."""
    if ctx.has(6) or ctx.attr("softcap", 0.0):
        raise ctx.unsupported("softcap or nonpad_kv_seqlen")
    if len(ctx.node.output) > 3 and ctx.node.output[3]:
        raise ctx.unsupported("the qk_matmul_output output")
    b = ctx.b
    q, k, v = (_attention_heads(ctx, i) for i in range(3))
    if ctx.has(4) != ctx.has(5):
        raise ctx.unsupported("a past key without a past value (or the reverse)")
    if ctx.has(4):
        k = C.concat(b, [ctx.value(4), k], -2)
        v = C.concat(b, [ctx.value(5), v], -2)
    mask = ctx.value(3) if ctx.has(3) else None
    scale = ctx.attr("scale")
    try:
        y = C.scaled_dot_product_attention(
            b,
            q,
            k,
            v,
            mask,
            is_causal=bool(ctx.attr("is_causal", 0)),
            scale=None if scale is None else float(scale),
        )
    except ValueError as error:
        raise ctx.unsupported(str(error)) from None
    if ctx.rank(0) == 3:  # back to (batch, length, heads * head size)
        batch, heads, length, size = y.type.shape
        y = C.reshape(b, C.transpose(b, y, (0, 2, 1, 3)), (batch, length, heads * size))
    return [y, k, v][: max(len(ctx.node.output), 1)]


def _attention_heads(ctx: NodeContext, index: int):
    """Input ``index`` (Q, K or V) as (batch, heads, length, head size)."""
    x = ctx.value(index)
    if len(x.type.shape) == 4:
        return x
    heads = ctx.attr("q_num_heads" if index == 0 else "kv_num_heads")
    if heads is None:
        raise ctx.unsupported("3-D inputs without the q_num_heads and kv_num_heads attributes")
    batch, length, hidden = x.type.shape
    x = C.reshape(ctx.b, x, (batch, length, int(heads), hidden // int(heads)))
    return C.transpose(ctx.b, x, (0, 2, 1, 3))


@op("Resize", "Upsample")
def resize(ctx: NodeContext):
    """Resize in nearest, linear and cubic modes, with every coordinate mapping exporters use."""
    shape = ctx.shape(0)
    rank = len(shape)
    mode = ctx.attr("mode", "nearest")
    if mode == "bilinear":  # Upsample before opset 9
        mode = "linear"
    coordinates = ctx.attr("coordinate_transformation_mode", "half_pixel")
    if ctx.op_type == "Upsample" or ctx.opset < 11:
        coordinates = "asymmetric"
    if ctx.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise ctx.unsupported("keep_aspect_ratio_policy other than 'stretch'")
    axes = [C.normalize_axis(a, rank) for a in (ctx.attr("axes") or range(rank))]
    scales, sizes = _resize_targets(ctx)
    rois = _resize_rois(ctx, axes, rank) if coordinates == "tf_crop_and_resize" else None
    full_scales, out, factors = [1.0] * rank, list(shape), [1] * rank
    for axis, dim in enumerate(shape):
        if isinstance(dim, SymDim):
            out[axis] = None  # resized on its own below, or kept
    for i, axis in enumerate(axes):
        if isinstance(shape[axis], SymDim):
            factors[axis] = _symbolic_factor(ctx, axis, shape[axis], scales, sizes, i)
            continue
        if shape[axis] < 1:
            raise ctx.unsupported(f"a Resize of the empty axis {axis} (shape {tuple(shape)})")
        if sizes is not None:
            out[axis] = int(sizes[i])
            full_scales[axis] = out[axis] / shape[axis]
        else:
            full_scales[axis] = float(scales[i])
            out[axis] = int(np.floor(shape[axis] * full_scales[axis]))
    options = {
        "nearest": ctx.attr("nearest_mode", "round_prefer_floor"),
        "cubic_a": float(ctx.attr("cubic_coeff_a", -0.75)),
        "exclude_outside": bool(ctx.attr("exclude_outside", 0)),
        "antialias": bool(ctx.attr("antialias", 0)),
    }
    if ctx.op_type == "Upsample" or ctx.opset < 11:
        options["nearest"] = "floor"
    if rois is not None:
        options["rois"] = rois
        options["extrapolation"] = float(ctx.attr("extrapolation_value", 0.0))
    x = ctx.value(0)
    if any(f != 1 for f in factors):
        _check_repeats(ctx, mode, coordinates, factors, options)
        x = C.upsample_nearest(ctx.b, x, factors)
    try:
        return [C.resize(ctx.b, x, out, mode, coordinates, full_scales, **options)]
    except (ValueError, KeyError) as error:
        raise ctx.unsupported(f"{error}") from None


def _symbolic_factor(ctx: NodeContext, axis: int, dim, scales, sizes, i: int) -> int:
    """The integer upsampling factor of a symbolic axis (1: the axis is kept)."""
    if sizes is not None:
        if isinstance(sizes[i], SymDim) and same_size(sizes[i], dim):
            return 1
        raise ctx.unsupported(
            f"a Resize of the symbolic axis {axis} (size {dim}) to the size {sizes[i]}; "
            "fix: resize a symbolic axis by an integer scale (nearest), or give that dim a "
            "static size (a static input_spec)",
        )
    scale = float(scales[i])
    if scale != int(scale) or scale < 1:
        raise ctx.unsupported(
            f"a Resize of the symbolic axis {axis} (size {dim}) by the scale {scale}; "
            "fix: a symbolic axis is resized by a whole scale (2, 3...) in nearest mode; give "
            "that dim a static size (a static input_spec) for other scales",
        )
    return int(scale)


def _check_repeats(ctx: NodeContext, mode: str, coordinates: str, factors, options) -> None:
    """Refuse an upsampling of a symbolic axis that is not each element repeated ``factor``
    times (what nearest neighbours give for whole scales under the usual mappings)."""
    for axis, factor in enumerate(factors):
        if factor == 1:
            continue
        probe = 7  # the mapping's pattern does not depend on the size for these modes
        index = np.arange(probe * factor) // factor
        matrix = None
        if mode == "nearest":
            matrix = C.resize_matrix(
                probe, probe * factor, mode, coordinates, float(factor), nearest=options["nearest"]
            )
        if matrix is None or not np.array_equal(matrix.argmax(axis=1), index):
            raise ctx.unsupported(
                f"a {mode} Resize by {factor} of the symbolic axis {axis} with "
                f"coordinate_transformation_mode={coordinates!r}; "
                "fix: Cuvil resizes a symbolic axis by repeating elements (nearest mode); give "
                "that dim a static size (a static input_spec) for interpolation",
            )


def _resize_rois(ctx: NodeContext, axes: list, rank: int) -> list:
    """Each axis's (start, end) of the ``roi`` input (starts of the resized axes, then ends)."""
    roi = np.asarray(ctx.constant(1, "the roi") if ctx.has(1) else [], np.float64).reshape(-1)
    if roi.size != 2 * len(axes):
        raise ctx.unsupported(
            f"tf_crop_and_resize with a roi of {roi.size} values for {len(axes)} axes (it takes "
            "a start and an end per axis)"
        )
    rois = [(0.0, 1.0)] * rank
    for i, axis in enumerate(axes):
        rois[axis] = (float(roi[i]), float(roi[len(axes) + i]))
    return rois


def _resize_targets(ctx: NodeContext):
    """(scales, sizes): one of them given, as lists over the resized axes."""
    if ctx.op_type == "Upsample" or ctx.opset < 11:
        scales = ctx.attr("scales") or ctx.constant(1, "the scales")
        return [float(s) for s in np.asarray(scales).reshape(-1)], None
    if ctx.has(3) and np.size(ctx.constant(3, "the sizes")):
        return None, [int(s) for s in np.asarray(ctx.constant(3, "the sizes")).reshape(-1)]
    scales = np.asarray(ctx.constant(2, "the scales")).reshape(-1)
    return [float(s) for s in scales], None
