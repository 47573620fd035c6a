"""TensorFlow's neural-network ops (contractions, convolutions, pooling, batch norm) onto cuvil ops.

TensorFlow's default layout is NHWC with HWIO filters; cuvil's convolution
and pooling are NCHW, so these handlers transpose around them (passes may
fold the transposes). ``padding="SAME"`` follows TensorFlow's rule: the
extra cell, if any, goes after (bottom/right).
"""

from __future__ import annotations

import numpy as np

from .. import composites as cc
from .ops import OPS, op_type

__all__ = ["OPS"]


def _swap_last(b, x):
    rank = len(x.type.shape)
    return cc.transpose(b, x, list(range(rank - 2)) + [rank - 1, rank - 2])


@op_type("MatMul")
def _matmul(imp, op, ins):
    a, w = (imp.value(v) for v in ins)
    a = _swap_last(imp.b, a) if imp.attr("transpose_a") else a
    w = _swap_last(imp.b, w) if imp.attr("transpose_b") else w
    return imp.b.op("cuvil.matmul", [a, w])


@op_type("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
def _batch_matmul(imp, op, ins):
    a, w = (imp.value(v) for v in ins)
    a = _swap_last(imp.b, a) if imp.attr("adj_x") else a
    w = _swap_last(imp.b, w) if imp.attr("adj_y") else w
    return imp.b.op("cuvil.matmul", [a, w])


@op_type("Einsum")
def _einsum(imp, op, ins):
    equation = imp.attr("equation")
    if len(ins) != 2:
        raise imp.unsupported(f"Einsum {equation!r} with {len(ins)} operands")
    try:
        return cc.einsum(imp.b, equation, *(imp.value(v) for v in ins))
    except ValueError as error:
        raise imp.unsupported(f"Einsum {equation!r} ({error})") from None


def _channels_first(imp) -> bool:
    return imp.attr("data_format", "NHWC").startswith("NC")


@op_type("BiasAdd")
def _bias_add(imp, op, ins):
    x, bias = (imp.value(v) for v in ins)
    if _channels_first(imp):
        bias = cc.reshape(imp.b, bias, [-1] + [1] * (len(x.type.shape) - 2))
    return imp.b.op("cuvil.add", [x, bias])


def _layout(imp):
    """(batch, channel, H, W) dims of the input and its spatial dims, from ``data_format``."""
    return ((0, 1, 2, 3), (2, 3)) if _channels_first(imp) else ((0, 3, 1, 2), (1, 2))


def _padding(imp, sizes, kernel, strides, dilations, spatial):
    """(top, left, bottom, right) for the node's ``padding`` (SAME, VALID or EXPLICIT)."""
    mode = imp.attr("padding")
    if mode == "VALID":
        return (0, 0, 0, 0)
    if mode == "EXPLICIT":
        pads = imp.attr("explicit_paddings")
        (top, bottom), (left, right) = (pads[2 * d : 2 * d + 2] for d in spatial)
        return (top, left, bottom, right)
    before, after = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        before.append(total // 2)
        after.append(total - total // 2)
    return (before[0], before[1], after[0], after[1])


def _conv(imp, x, weight, groups: int):
    layout, spatial = _layout(imp)
    strides = [imp.attr("strides")[d] for d in spatial]
    dilations = [imp.attr("dilations", [1, 1, 1, 1])[d] for d in spatial]
    kernel = weight.type.shape[:2]
    sizes = [x.type.shape[d] for d in spatial]
    return cc.conv2d_layout(
        imp.b,
        x,
        weight,
        input_layout=layout,
        weight_layout=(3, 2, 0, 1),
        output_layout=layout,
        strides=strides,
        padding=_padding(imp, sizes, kernel, strides, dilations, spatial),
        dilations=dilations,
        groups=groups,
    )


@op_type("Conv2D")
def _conv2d(imp, op, ins):
    x, weight = (imp.value(v) for v in ins)
    channels = x.type.shape[_layout(imp)[0][1]]
    return _conv(imp, x, weight, channels // weight.type.shape[2])


@op_type("DepthwiseConv2dNative")
def _depthwise(imp, op, ins):
    x, weight = (imp.value(v) for v in ins)
    kh, kw, channels, multiplier = weight.type.shape
    # (KH, KW, C, M) -> (KH, KW, 1, C*M): C groups of one input channel, output c*M + m.
    weight = cc.reshape(imp.b, weight, (kh, kw, 1, channels * multiplier))
    return _conv(imp, x, weight, channels)


@op_type("Conv2DBackpropInput")
def _conv_transpose(imp, op, ins):
    """The gradient of a convolution for its input: a transposed convolution (Keras
    ``Conv2DTranspose``), whose output size ``input_sizes`` fixes the padding."""
    out_sizes = [int(s) for s in imp.known(ins[0], "the input_sizes of Conv2DBackpropInput")]
    weight = np.asarray(imp.known(ins[1], "the filter of Conv2DBackpropInput"))
    x = imp.value(ins[2])
    layout, spatial = _layout(imp)
    strides = [imp.attr("strides")[d] for d in spatial]
    dilations = [imp.attr("dilations", [1, 1, 1, 1])[d] for d in spatial]
    kernel = weight.shape[:2]
    targets = [out_sizes[d] for d in spatial]
    top, left, bottom, right = _padding(imp, targets, kernel, strides, dilations, spatial)
    # The forward convolution's output size for each target, then what transposing it lacks.
    sizes = [x.type.shape[d] for d in spatial]
    full = [(n - 1) * s + d * (k - 1) + 1 for n, s, d, k in zip(sizes, strides, dilations, kernel)]
    extra = [t - (f - lo - hi) for t, f, lo, hi in zip(targets, full, (top, left), (bottom, right))]
    y = cc.conv_transpose2d(
        imp.b,
        cc.transpose(imp.b, x, layout),
        weight.transpose(3, 2, 0, 1).astype(x.type.dtype),  # HWIO of the forward conv
        strides=strides,
        padding=(top, left, bottom, right),
        output_padding=extra,
        dilations=dilations,
    )
    return cc.transpose(imp.b, y, np.argsort(layout))


# tf.image.resize's ops: (mode, coordinate mapping, nearest rounding) for
# (align_corners, half_pixel_centers).
_RESIZE = {
    "ResizeBilinear": ("linear", {(True, False): "align_corners", (False, True): "half_pixel"}),
    "ResizeBicubic": ("cubic", {(True, False): "align_corners", (False, True): "half_pixel"}),
    "ResizeNearestNeighbor": (
        "nearest",
        {(True, False): "align_corners", (False, True): "tf_half_pixel_for_nn"},
    ),
}


@op_type(*_RESIZE)
def _resize(imp, op, ins):
    x = imp.value(ins[0])
    height, width = (int(s) for s in imp.known(ins[1], f"the size of {op.type}"))
    mode, mappings = _RESIZE[op.type]
    if mode != "nearest":  # interpolating ops return float32 whatever the input
        x = cc.cast(imp.b, x, "float32")
    corners = (bool(imp.attr("align_corners", False)), bool(imp.attr("half_pixel_centers", False)))
    coordinates = mappings.get(corners, "asymmetric")
    options = {}
    if mode == "nearest":
        options["nearest"] = "round_prefer_ceil" if corners[0] else "floor"
    elif mode == "cubic":
        # TensorFlow's half-pixel bicubic uses Keys' a = -0.5 and in-image taps only; both
        # variants read their weights from a table of 1024 fractions.
        half = coordinates == "half_pixel"
        options = {"cubic_a": -0.5 if half else -0.75, "exclude_outside": half, "cubic_steps": 1024}
    n, _, _, c = x.type.shape
    return cc.resize(imp.b, x, (n, height, width, c), mode, coordinates, **options)


@op_type("MaxPool", "AvgPool")
def _pool(imp, op, ins):
    x = imp.value(ins[0])
    _, spatial = _layout(imp)
    kernel = [imp.attr("ksize")[d] for d in spatial]
    strides = [imp.attr("strides")[d] for d in spatial]
    sizes = [x.type.shape[d] for d in spatial]
    padding = _padding(imp, sizes, kernel, strides, (1, 1), spatial)
    kind = "max" if op.type == "MaxPool" else "avg"
    # TensorFlow averages over the cells inside the input only.
    return cc.pool2d_layout(
        imp.b, x, kind, spatial, kernel, strides, padding, count_include_pad=False
    )


@op_type("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
def _batch_norm(imp, op, ins):
    if imp.attr("is_training", False):
        raise imp.unsupported("a batch norm in training mode (is_training=True)")
    x, params = imp.value(ins[0]), ins[1:5]
    b, eps = imp.b, imp.attr("epsilon")
    if all(isinstance(p, np.ndarray) for p in params):  # the usual case: folded here
        scale, offset, mean, variance = (p.astype(np.float64) for p in params)
        factor = scale / np.sqrt(variance + eps)
        dtype = x.type.dtype
        factor, shift = (imp.value(t.astype(dtype)) for t in (factor, offset - mean * factor))
    else:
        scale, offset, mean, variance = (imp.value(p) for p in params)
        inv = b.op("cuvil.rsqrt", [b.op("cuvil.add", [variance, cc.scalar(b, eps, x)])])
        factor = b.op("cuvil.mul", [scale, inv])
        shift = b.op("cuvil.sub", [offset, b.op("cuvil.mul", [mean, factor])])
    if _channels_first(imp):
        factor, shift = (cc.reshape(b, t, (-1, 1, 1)) for t in (factor, shift))
    y = b.op("cuvil.add", [b.op("cuvil.mul", [x, factor]), shift])
    return [y, ins[3], ins[4]]
