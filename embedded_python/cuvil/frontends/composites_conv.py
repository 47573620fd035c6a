"""Convolution, pooling and upsampling composites (NCHW and any other layout) the importers share.

Part of :mod:`cuvil.frontends.composites`, which re-exports every name here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .builder import IRBuilder, Value
from .composites_base import broadcast_to, concat, pad, reshape, slice_axis, transpose

__all__ = [
    "conv2d",
    "conv_transpose2d",
    "conv2d_layout",
    "pool2d_layout",
    "global_pool2d",
    "adaptive_pool2d",
    "upsample_nearest",
]


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


def conv2d_layout(
    b: IRBuilder,
    x: Value,
    weight: Value,
    *,
    input_layout: Sequence[int],
    weight_layout: Sequence[int],
    output_layout: Sequence[int],
    strides=(1, 1),
    padding=(0, 0, 0, 0),
    dilations=(1, 1),
    groups: int = 1,
    lhs_dilation=(1, 1),
) -> Value:
    """A convolution in any layout through NCHW ``cuvil.conv2d``.

    ``input_layout`` lists the input's (batch, channel, H, W) dimensions,
    ``weight_layout`` the weight's (out, in, KH, KW) ones, ``output_layout`` the
    output's (batch, channel, H, W) ones: NHWC is ``(0, 3, 1, 2)``, HWIO
    ``(3, 2, 0, 1)``. ``padding`` is (top, left, bottom, right); negative
    amounts crop. ``lhs_dilation`` puts ``d - 1`` zeros between input
    elements first: XLA's transposed convolution (``lax.conv_transpose``).
    """
    x = transpose(b, x, input_layout)
    x = _insert_zeros(b, x, [int(d) for d in lhs_dilation])
    top, left, bottom, right = (int(p) for p in padding)
    _, _, h, w = x.type.shape
    x = slice_axis(b, x, 2, max(-top, 0), h - max(-bottom, 0))
    x = slice_axis(b, x, 3, max(-left, 0), w - max(-right, 0))
    attrs = {
        "strides": tuple(int(s) for s in strides),
        "padding": tuple(max(p, 0) for p in (top, left, bottom, right)),
        "dilations": tuple(int(d) for d in dilations),
        "groups": int(groups),
    }
    weight = transpose(b, weight, weight_layout)
    y = b.op("cuvil.conv2d", [x, weight], attrs)
    return transpose(b, y, np.argsort(output_layout))


def pool2d_layout(
    b: IRBuilder,
    x: Value,
    kind: str,
    spatial: Sequence[int],
    kernel,
    strides,
    padding,
    count_include_pad: bool = True,
) -> Value:
    """Max (``kind="max"``) or average pooling over the two ``spatial`` dims of ``x``.

    The other dimensions are moved first and folded into one channel axis of an
    NCHW ``cuvil.<kind>_pool2d``; ``padding`` is (top, left, bottom, right);
    average pooling counts padded cells unless ``count_include_pad=False``.
    """
    rank, spatial = len(x.type.shape), [int(d) for d in spatial]
    others = [d for d in range(rank) if d not in spatial]
    moved = transpose(b, x, others + spatial)
    kept = [moved.type.shape[i] for i in range(len(others))]
    nchw = reshape(b, moved, [1, -1, *moved.type.shape[-2:]])
    attrs = {"kernel": tuple(kernel), "strides": tuple(strides), "padding": tuple(padding)}
    if kind == "avg" and not count_include_pad:
        attrs["count_include_pad"] = False
    y = b.op(f"cuvil.{kind}_pool2d", [nchw], attrs)
    y = reshape(b, y, kept + list(y.type.shape[-2:]))
    return transpose(b, y, np.argsort(others + spatial))


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
    expanded, repeated, final, sizes = [], [], [], []
    for axis, (size, factor) in enumerate(zip(shape, factors)):
        expanded += [size, 1]
        repeated += [size, int(factor)]
        if isinstance(size, int):
            final.append(size * int(factor))
            continue
        # A symbolic size: the merged (size, factor) pairs are given, not left to be guessed.
        final.append(None)
        dim = b.dim(x, axis)
        sizes.append(
            dim if factor == 1 else b.index_op("arith.muli", dim, b.index_constant(factor))
        )
    y = broadcast_to(b, reshape(b, x, expanded), repeated)
    return reshape(b, y, final, sizes if len(sizes) > 1 else ())
