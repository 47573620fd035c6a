"""Resizing composites: ONNX ``Resize``, ``F.interpolate`` and ``tf.image.resize`` as matmuls.

Part of :mod:`cuvil.frontends.composites`, which re-exports every name here.
Each resized axis is one constant interpolation matrix built with NumPy
(:func:`resize_matrix`), so every mode, coordinate mapping and filter is a
few lines of index arithmetic here and one ``cuvil.matmul`` (or a gather for
nearest neighbours) in the IR.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .builder import IRBuilder, Value
from .composites_base import matmul, transpose
from .composites_conv import upsample_nearest
from .composites_index import gather

__all__ = [
    "resize",
    "resize_matrix",
    "resize_outside",
    "RESIZE_COORDINATES",
    "RESIZE_NEAREST_MODES",
]


# How an output index ``o`` maps to an input coordinate (ONNX Resize's
# coordinate_transformation_mode), ``scale`` being output size / input size.
_COORDINATES = {
    "half_pixel": lambda o, scale, size, out: (o + 0.5) / scale - 0.5,
    "pytorch_half_pixel": lambda o, scale, size, out: (
        (o + 0.5) / scale - 0.5 if out > 1 else 0.0 * o
    ),
    "align_corners": lambda o, scale, size, out: o * (size - 1) / (out - 1) if out > 1 else 0.0 * o,
    "asymmetric": lambda o, scale, size, out: o / scale,
    "tf_half_pixel_for_nn": lambda o, scale, size, out: (o + 0.5) / scale,
    # The output spans [start, end] of the input (fractions of its last index): the roi.
    "tf_crop_and_resize": lambda o, scale, size, out, roi=(0.0, 1.0): (
        roi[0] * (size - 1)
        + (o * (roi[1] - roi[0]) * (size - 1) / (out - 1) if out > 1 else 0.0 * o)
        + (0.0 if out > 1 else (roi[1] - roi[0]) * (size - 1) / 2)
    ),
}
_NEAREST = {
    "round_prefer_floor": lambda x: np.ceil(x - 0.5),
    "round_prefer_ceil": lambda x: np.floor(x + 0.5),
    "floor": np.floor,
    "ceil": np.ceil,
}
RESIZE_COORDINATES = tuple(_COORDINATES)
RESIZE_NEAREST_MODES = tuple(_NEAREST)


def _cubic_weights(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution weights of the taps at -1, 0, 1, 2 for fractions ``t``."""
    d = np.stack([t + 1, t, 1 - t, 2 - t], axis=-1)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, far)


#: The most entries of one interpolation matrix (16 Mi: 128 MiB of float64 while it is built,
#: an axis of 4096 resized to 4096).
MAX_RESIZE_MATRIX = 1 << 24

# Mappings under which a scale of 1 maps every output to its own input, whatever the mode.
_IDENTITY_AT_SCALE_1 = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric")


def resize_matrix(
    size: int,
    out: int,
    mode: str,
    coordinates: str = "half_pixel",
    scale: float | None = None,
    *,
    nearest: str = "round_prefer_floor",
    cubic_a: float = -0.75,
    exclude_outside: bool = False,
    cubic_steps: int | None = None,
    antialias: bool = False,
    roi: tuple[float, float] = (0.0, 1.0),
) -> np.ndarray:
    """The (out, size) float64 matrix that resizes one axis: row ``o`` holds the weights of the
    input elements that output ``o`` interpolates (a single 1 for ``mode="nearest"``).

    ``scale`` is the output/input ratio the coordinate mapping divides by
    (ONNX ``scales``, PyTorch ``scale_factor``); ``None`` means ``out / size``.
    ``cubic_steps`` rounds each cubic tap's fraction to a multiple of
    ``1 / cubic_steps``, as TensorFlow's table of 1024 cubic weights does.
    ``antialias`` (linear and cubic) widens the filter by the downscaling
    ratio, as ONNX Resize's ``antialias`` and Pillow do. ``roi`` is the span
    of ``"tf_crop_and_resize"``: its rows that fall outside the input are
    zero (:func:`resize_outside` names them for the extrapolation value).
    """
    if coordinates not in _COORDINATES:
        raise ValueError(
            f"coordinate transformation {coordinates!r} is not one of {RESIZE_COORDINATES}"
        )
    if out < 1 or size < 1 or out * size > MAX_RESIZE_MATRIX:
        raise ValueError(
            f"resizing an axis of {size} to {out} takes a {out} x {size} interpolation matrix; "
            f"Cuvil builds them up to {MAX_RESIZE_MATRIX:,} entries and of sizes of at least 1"
        )
    scale = out / size if scale is None else float(scale)
    x = _coordinates(coordinates, out, scale, size, roi)
    if antialias and mode in ("linear", "cubic"):
        matrix = _antialiased(x, size, scale, mode, cubic_a, exclude_outside)
        return _without_outside(matrix, coordinates, x, size)
    matrix = np.zeros((out, size))
    rows = np.arange(out)
    if mode == "nearest":
        index = np.clip(_NEAREST[nearest](x), 0, size - 1).astype(np.int64)
        matrix[rows, index] = 1.0
    elif mode == "linear":
        inside = np.clip(x, 0, size - 1)
        low = np.floor(inside).astype(np.int64)
        high = np.minimum(low + 1, size - 1)
        np.add.at(matrix, (rows, low), 1 - (inside - low))
        np.add.at(matrix, (rows, high), inside - low)
    elif mode == "cubic":
        low = np.floor(x).astype(np.int64)
        fraction = x - low
        if cubic_steps:
            fraction = np.rint(fraction * cubic_steps) / cubic_steps
        weights = _cubic_weights(fraction, cubic_a)
        taps = low[:, None] + np.arange(-1, 3)
        if exclude_outside:
            weights = np.where((taps >= 0) & (taps < size), weights, 0.0)
            weights /= weights.sum(axis=1, keepdims=True)
        np.add.at(matrix, (rows[:, None], np.clip(taps, 0, size - 1)), weights)
    else:
        raise ValueError(f"resize mode {mode!r} is not 'nearest', 'linear' or 'cubic'")
    return _without_outside(matrix, coordinates, x, size)


def _coordinates(coordinates: str, out: int, scale: float, size: int, roi) -> np.ndarray:
    """The input coordinate of each output index under the mapping ``coordinates``."""
    o = np.arange(out, dtype=np.float64)
    if coordinates == "tf_crop_and_resize":
        return _COORDINATES[coordinates](o, scale, size, out, tuple(map(float, roi)))
    return _COORDINATES[coordinates](o, scale, size, out)


def resize_outside(size: int, out: int, roi: tuple[float, float]) -> np.ndarray:
    """The output rows of a ``"tf_crop_and_resize"`` that fall outside the input (a bool mask):
    they take the extrapolation value, not an interpolation."""
    return _outside(_coordinates("tf_crop_and_resize", out, out / size, size, roi), size)


def _outside(x: np.ndarray, size: int) -> np.ndarray:
    # A coordinate within float32 rounding of an edge (a float32 roi of 0.4 scaled to the last
    # index 4.0000001) is on it, as in frameworks computing it in float32.
    slack = 4 * np.finfo(np.float32).eps * max(size, 1)
    return (x < -slack) | (x > size - 1 + slack)


def _without_outside(matrix: np.ndarray, coordinates: str, x: np.ndarray, size: int):
    if coordinates == "tf_crop_and_resize":
        matrix[_outside(x, size)] = 0.0
    return matrix


def _antialiased(x, size: int, scale: float, mode: str, cubic_a: float, exclude_outside: bool):
    """Interpolation rows whose filter is stretched by the downscaling ratio (none upscaling).

    Output ``o`` weighs the inputs within ``support`` of its centre ``x + 0.5``
    by the tent (linear) or Keys cubic filter at ``(i - centre + 0.5) * min(scale, 1)``,
    normalized to sum 1; taps beyond an edge count as the edge element, or are
    left out with ``exclude_outside``.
    """
    shrink = min(scale, 1.0)
    support = (1.0 if mode == "linear" else 2.0) / shrink
    matrix = np.zeros((len(x), size))
    for row, centre in enumerate(np.asarray(x) + 0.5):
        taps = np.arange(np.floor(centre - support + 0.5), np.floor(centre + support + 0.5))
        if exclude_outside:
            taps = taps[(taps >= 0) & (taps < size)]
        t = np.abs((taps - centre + 0.5) * shrink)
        if mode == "linear":
            weights = np.clip(1.0 - t, 0.0, None)
        else:
            near = ((cubic_a + 2) * t - (cubic_a + 3)) * t * t + 1
            far = ((t - 5) * t + 8) * t * cubic_a - 4 * cubic_a
            weights = np.where(t < 1, near, np.where(t < 2, far, 0.0))
        total = weights.sum()
        np.add.at(
            matrix[row], np.clip(taps, 0, size - 1).astype(np.int64), weights / (total or 1.0)
        )
    return matrix


def resize(
    b: IRBuilder,
    x: Value,
    out_shape: Sequence[int],
    mode: str = "linear",
    coordinates: str = "half_pixel",
    scales: Sequence[float | None] | None = None,
    rois: Sequence[tuple[float, float]] | None = None,
    extrapolation: float = 0.0,
    **options,
) -> Value:
    """``x`` resized to ``out_shape`` (ONNX Resize, ``F.interpolate``, ``tf.image.resize``).

    Each axis whose size or mapping changes is resized on its own with
    :func:`resize_matrix` (``options``: ``nearest``, ``cubic_a``,
    ``exclude_outside``, ``antialias``): nearest neighbours are a
    ``cuvil.gather`` of constant indices (a broadcast for integer
    upsampling), linear and cubic interpolation a ``cuvil.matmul`` with the
    interpolation matrix, built now with NumPy; an axis whose ``out_shape``
    entry is ``None`` is kept (a symbolic one). ``scales`` gives each axis's
    output/input ratio where the framework uses one other than the ratio of
    sizes; ``rois`` each axis's span for ``"tf_crop_and_resize"``, whose
    outputs outside the input are ``extrapolation``.
    """
    rank = len(x.type.shape)
    scales = [None] * rank if scales is None else list(scales)
    rois = [(0.0, 1.0)] * rank if rois is None else [tuple(r) for r in rois]
    for axis in range(rank):
        size = x.type.shape[axis]
        if not isinstance(size, int) or out_shape[axis] is None:
            if out_shape[axis] is None:
                continue  # a symbolic axis the caller keeps (or resized another way)
            raise ValueError(f"cannot interpolate the symbolic axis {axis} of shape {x.type.shape}")
        out = int(out_shape[axis])
        unit = scales[axis] is None or float(scales[axis]) == 1.0
        if out == size and unit and coordinates in _IDENTITY_AT_SCALE_1:
            continue  # an axis left as it is: no matrix to build
        matrix = resize_matrix(
            size, out, mode, coordinates, scales[axis], roi=rois[axis], **options
        )
        outside = np.zeros(out, bool)
        if coordinates == "tf_crop_and_resize":
            outside = resize_outside(size, out, rois[axis])
        if matrix.shape == (size, size) and np.array_equal(matrix, np.eye(size)):
            continue
        if mode == "nearest" and not outside.any():
            x = _nearest(b, x, axis, matrix)
            continue
        x = _interpolate(b, x, axis, matrix)
        if outside.any() and extrapolation != 0:
            placed = [1] * rank
            placed[axis] = out
            offset = np.where(outside, extrapolation, 0.0).reshape(placed)
            x = b.op("cuvil.add", [x, b.constant(offset.astype(x.type.dtype))])
    return x


def _nearest(b: IRBuilder, x: Value, axis: int, matrix: np.ndarray) -> Value:
    """Nearest neighbours along ``axis``: a repeat for integer upsampling, else a gather."""
    (out, size), rank = matrix.shape, len(x.type.shape)
    index = matrix.argmax(axis=1)
    factor = out // size
    if out == factor * size and np.array_equal(index, np.arange(out) // factor):
        return upsample_nearest(b, x, [factor if d == axis else 1 for d in range(rank)])
    return gather(b, x, index, axis)


def _interpolate(b: IRBuilder, x: Value, axis: int, matrix: np.ndarray) -> Value:
    """``x`` with ``axis`` replaced by ``matrix`` (out, size) times it."""
    rank = len(x.type.shape)
    weights = b.constant(matrix.astype(x.type.dtype))
    if axis == rank - 2:  # (out, size) @ (..., size, W)
        return b.op("cuvil.matmul", [weights, x])
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = transpose(b, x, perm)
    return transpose(b, matmul(b, moved, transpose(b, weights, (1, 0))), perm)
