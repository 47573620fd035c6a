"""Indexing composites the importers share: gathers, arg-reductions, reversal, running sums.

Part of :mod:`cuvil.frontends.composites`, which re-exports every name here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .builder import IRBuilder, Value
from .composites_base import (
    cast,
    compare,
    matmul,
    normalize_axis,
    pad,
    reshape,
    scalar,
    slice_axis,
    transpose,
)

__all__ = ["gather", "gather_batched", "arg_reduce", "flip", "cumsum", "CUMSUM_MATMUL_LIMIT"]


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
        if not isinstance(size, int):
            # A symbolic axis: the indices hold for sizes that reach them, which calls check.
            if known.size and isinstance(size, str):
                b.assume(size, lowest=max(int(-known.min()), int(known.max()) + 1, 1))
        elif np.any((known < -size) | (known >= size)):
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


def arg_reduce(b: IRBuilder, x: Value, axis: int, kind: str, dtype: str) -> Value:
    """The first index of the maximum (``kind="max"``) or minimum along ``axis``, as ``dtype``."""
    rank = len(x.type.shape)
    axis = normalize_axis(axis, rank)
    size = x.type.shape[axis]
    extreme = b.op(f"cuvil.reduce_{kind}", [x], {"axes": (axis,), "keepdims": True})
    hit = compare(b, x, extreme, "eq")
    positions = np.arange(size, dtype=np.int64).reshape(
        [-1 if d == axis else 1 for d in range(rank)]
    )
    index = b.op("cuvil.where", [hit, b.constant(positions), scalar(b, size, "int64")])
    first = b.op("cuvil.reduce_min", [index], {"axes": (axis,)})
    return cast(b, first, dtype)


def gather_batched(b: IRBuilder, data: Value, indices, axis: int, batch_dims: int) -> Value:
    """TensorFlow ``gather(data, indices, axis, batch_dims)``: per batch element, a take.

    The leading ``batch_dims`` dimensions of ``data`` and ``indices`` are
    paired; the result is ``data.shape[:axis] + indices.shape[batch_dims:] +
    data.shape[axis + 1:]``. Done as one ``cuvil.gather`` along a flattened
    (batch x axis) dimension with each batch's offset added to its indices.
    """
    shape = data.type.shape
    rank = len(shape)
    axis = normalize_axis(axis, rank)
    if batch_dims == 0:
        return gather(b, data, indices, axis)
    if not isinstance(indices, Value):
        indices = b.constant(np.asarray(indices, dtype=np.int64))
    indices = cast(b, indices, "int64")
    batch, size = shape[:batch_dims], shape[axis]
    between = list(range(batch_dims, axis))
    # (batch..., axis, between..., after...) with batch and axis flattened into one.
    moved = transpose(b, data, [*range(batch_dims), axis, *between, *range(axis + 1, rank)])
    flat = reshape(b, moved, (-1, *moved.type.shape[batch_dims + 1 :]))
    index_shape = indices.type.shape
    wrapped = b.op(
        "cuvil.where",
        [
            compare(b, indices, scalar(b, 0, indices), "lt"),
            b.op("cuvil.add", [indices, scalar(b, size, indices)]),
            indices,
        ],
    )
    count = int(np.prod(batch, dtype=np.int64))
    offsets = (np.arange(count, dtype=np.int64) * size).reshape(
        (*batch, *[1] * (len(index_shape) - batch_dims))
    )
    picked = gather(b, flat, b.op("cuvil.add", [wrapped, b.constant(offsets)]), 0)
    # picked: (batch..., index..., between..., after...) -> between before index.
    n_index, n_between = len(index_shape) - batch_dims, len(between)
    lead = list(range(batch_dims))
    index_axes = list(range(batch_dims, batch_dims + n_index))
    between_axes = list(range(batch_dims + n_index, batch_dims + n_index + n_between))
    rest = list(range(batch_dims + n_index + n_between, len(picked.type.shape)))
    return transpose(b, picked, lead + between_axes + index_axes + rest)


def flip(b: IRBuilder, x: Value, axes: Sequence[int]) -> Value:
    """``x`` reversed along each of ``axes`` (``torch.flip``, JAX ``rev``, TF ``ReverseV2``)."""
    rank = len(x.type.shape)
    for axis in sorted({normalize_axis(a, rank) for a in axes}):
        size = x.type.shape[axis]
        if size > 1:
            x = gather(b, x, np.arange(size - 1, -1, -1, dtype=np.int64), axis)
    return x


# Longest axis summed as one triangular-matrix product; longer ones, and integers, use the
# log-step scan (its cost grows as n log n, the matrix's as n^2; integers stay exact).
CUMSUM_MATMUL_LIMIT = 512


def cumsum(
    b: IRBuilder, x: Value, axis: int, *, exclusive: bool = False, reverse: bool = False
) -> Value:
    """Running sums along ``axis`` (``torch.cumsum``, ONNX ``CumSum``, TF ``Cumsum``, JAX).

    ``exclusive`` leaves each element out of its own sum; ``reverse`` sums from
    the end. Floating axes up to :data:`CUMSUM_MATMUL_LIMIT` long are one
    ``cuvil.matmul`` with an upper-triangular matrix of ones; others are a
    Hillis-Steele scan: ``log2(n)`` steps of adding a copy shifted by 1, 2, 4...
    """
    rank = len(x.type.shape)
    axis = normalize_axis(axis, rank)
    size = x.type.shape[axis]
    if reverse:
        x = flip(b, x, [axis])
    if exclusive:
        x = _shift(b, x, axis, 1)
    if np.dtype(x.type.dtype).kind == "f" and size <= CUMSUM_MATMUL_LIMIT:
        perm = list(range(rank))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        upper = b.constant(np.triu(np.ones((size, size), dtype=x.type.dtype)))
        y = transpose(b, matmul(b, transpose(b, x, perm), upper), perm)
    else:
        y, step = x, 1
        while step < size:
            y = b.op("cuvil.add", [y, _shift(b, y, axis, step)])
            step *= 2
    return flip(b, y, [axis]) if reverse else y


def _shift(b: IRBuilder, x: Value, axis: int, count: int) -> Value:
    """``x`` moved ``count`` places towards the end of ``axis``, zeros coming in at the start."""
    size = x.type.shape[axis]
    if count >= size:
        return b.constant(np.zeros(x.type.shape, dtype=x.type.dtype))
    kept = slice_axis(b, x, axis, 0, size - count)
    return pad(b, kept, [(count, 0) if d == axis else (0, 0) for d in range(len(x.type.shape))])
