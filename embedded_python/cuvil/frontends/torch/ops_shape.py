"""Lowerings of ATen's views and data movement, and of the shape queries export emits.

Views become copies (Cuvil IR is value semantics); their result shapes are
read from the node's ``meta["val"]``, so ``-1`` and symbolic sizes need no
arithmetic here. A symbolic size read by ``sym_size`` remembers the tensor it
came from, so a slice end, an ``arange`` limit or several reshape sizes read it
there at run time (``cuvil.dim``).
"""

from __future__ import annotations

import numpy as np

from .. import composites
from ..builder import TensorType, Value
from ..symbolic_dims import SymDim, reshape_sizes, run_time_size
from . import merged_dims
from .aten import lowers
from .ops_math import operand, result_dims, result_dtype, result_shape


@lowers(
    "aten.view",
    "aten._unsafe_view",
    "aten.reshape",
    "aten.view_copy",
    "aten.flatten",
    "aten.squeeze",
    "aten.unsqueeze",
    "aten.unflatten",
)
def _reshape(c, self, size=None, shape=None, **_):
    target = merged_dims.dims_of(c.node)
    known = merged_dims.unmerged(c, self)
    if known is not None and known.dims == target:
        return known.value  # a view back to merged dims: no split of a dynamic size
    if isinstance(self, merged_dims.LeadingBroadcast) and self.dims == target:
        return self
    if isinstance(self, merged_dims.Deferred):
        raise c.unsupported(self.reason)
    # A symbolic size is a dynamic dim the compiler derives (from the element count), or,
    # for several (view(N, T, C) of an [N*T, C] matmul), the sizes sym_size read: given
    # explicitly, the compiler has no regrouping to guess.
    x = operand(c, self, result_dtype(c))
    source, dims = merged_dims.dims_of(c.node.args[0]), result_dims(c)
    entries = size if size is not None else shape
    sizes = reshape_sizes(c.b, list(entries)) if entries is not None else None
    if (
        not sizes
        and dims.count(None) > 1
        and not merged_dims.compiler_regroups_exactly(source, target)
    ):
        reason = merged_dims.reshape_refusal(source, target)
        merge = merged_dims.merge_of(x, source, target)
        if merge is None:
            raise c.unsupported(reason)
        return merged_dims.MergeOnly(merge, reason)  # fine if only a matmul or a view reads it
    result = composites.reshape(c.b, x, dims, sizes or ())
    merged_dims.record_merge(c, result, x, source, target)
    return result


@lowers("aten.permute")
def _permute(c, self, dims, **_):
    return composites.transpose(c.b, operand(c, self, result_dtype(c)), [int(d) for d in dims])


@lowers("aten.transpose")
def _transpose(c, self, dim0, dim1, **_):
    x = operand(c, self, result_dtype(c))
    rank = len(x.type.shape)
    perm = list(range(rank))
    a, b = composites.normalize_axis(int(dim0), rank), composites.normalize_axis(int(dim1), rank)
    perm[a], perm[b] = perm[b], perm[a]
    return composites.transpose(c.b, x, perm)


@lowers("aten.t", "aten.numpy_T")
def _t(c, self, **_):
    x = operand(c, self, result_dtype(c))
    return composites.transpose(c.b, x, list(range(len(x.type.shape)))[::-1])


@lowers("aten.expand", "aten.expand_as", "aten.broadcast_to")
def _expand(c, self, **_):
    x = operand(c, self, result_dtype(c))
    dims = result_dims(c)
    rank = len(x.type.shape)
    new = len(dims) - rank
    if new > 0 and None in dims[:new] and tuple(dims[new:]) == x.type.shape:
        target = merged_dims.dims_of(c.node)
        reason = f"expanding {x.type.shape} over new leading dims of symbolic sizes {target}"
        return merged_dims.LeadingBroadcast(x, target, reason)
    if any(d is None and x.type.shape[i - len(dims) + rank] == 1 for i, d in enumerate(dims)):
        raise c.unsupported(f"expanding a size-1 dim of {x.type.shape} to a symbolic size")
    return composites.broadcast_to(c.b, x, dims)


@lowers("aten.cat", "aten.concat")
def _cat(c, tensors, dim=0, **_):
    dtype = result_dtype(c)
    # PyTorch skips 1-D empty tensors in cat (a legacy rule).
    values = [operand(c, t, dtype) for t in tensors if _size(t) != 0 or _rank(t) != 1]
    return composites.concat(c.b, values, int(dim))


@lowers("aten.stack")
def _stack(c, tensors, dim=0, **_):
    dtype = result_dtype(c)
    values = [operand(c, t, dtype) for t in tensors]
    axis = composites.normalize_axis(int(dim), len(values[0].type.shape) + 1)
    expanded = []
    for v in values:
        shape = list(v.type.shape)
        expanded.append(composites.reshape(c.b, v, shape[:axis] + [1] + shape[axis:]))
    return composites.concat(c.b, expanded, axis)


def _size(x) -> int:
    return int(np.prod(x.type.shape)) if isinstance(x, Value) else np.asarray(x).size


def _rank(x) -> int:
    return len(x.type.shape) if isinstance(x, Value) else np.asarray(x).ndim


@lowers("aten.repeat")
def _repeat(c, self, repeats, **_):
    x = operand(c, self, result_dtype(c))
    repeats = [int(r) for r in repeats]
    # Leading repeats add dimensions; each dim d becomes (r, d), broadcast, then merged.
    shape = [1] * (len(repeats) - len(x.type.shape)) + list(x.type.shape)
    x = composites.reshape(c.b, x, [v for d in shape for v in (1, d)])
    x = composites.broadcast_to(c.b, x, [v for r, d in zip(repeats, shape) for v in (r, d)])
    return composites.reshape(c.b, x, result_shape(c))


@lowers("aten.split", "aten.split_with_sizes")
def _split(c, self, split_size=None, split_sizes=None, dim=0, **_):
    x = operand(c, self, result_dtype(c))
    axis = composites.normalize_axis(int(dim), len(x.type.shape))
    length = x.type.shape[axis]
    if split_sizes is None:
        step = int(split_size)
        split_sizes = [min(step, length - s) for s in range(0, length, step)]
    parts, start = [], 0
    for size in split_sizes:
        parts.append(composites.slice_axis(c.b, x, axis, start, start + int(size)))
        start += int(size)
    return tuple(parts)


@lowers("aten.unbind")
def _unbind(c, self, dim=0, **_):
    x = operand(c, self, result_dtype(c))
    axis = composites.normalize_axis(int(dim), len(x.type.shape))
    shape = x.type.shape[:axis] + x.type.shape[axis + 1 :]
    return tuple(
        composites.reshape(c.b, composites.slice_axis(c.b, x, axis, i, i + 1), shape)
        for i in range(x.type.shape[axis])
    )


@lowers("aten.slice", "aten.slice_copy")
def _slice(c, self, dim=0, start=None, end=None, step=1, **_):
    x = operand(c, self, result_dtype(c))
    axis = composites.normalize_axis(int(dim), len(x.type.shape))
    if isinstance(end, SymDim) or not isinstance(x.type.shape[axis], int):
        return _slice_to_run_time_end(c, x, axis, start, end, step)
    begin, limit, stride = slice(start, end, int(step)).indices(x.type.shape[axis])
    if limit <= begin:
        raise c.unsupported(f"a slice [{start}:{end}:{step}] with no elements")
    return composites.slice_axis(c.b, x, axis, begin, limit, stride)


def _slice_to_run_time_end(c, x: Value, axis: int, start, end, step):
    """``x[start:end:step]`` along ``axis`` where the end or the axis size is symbolic."""
    start = 0 if start is None else start
    whole = end is None or (isinstance(end, int) and end >= 2**62)
    if start == 0 and step == 1 and whole:
        return x
    if isinstance(start, SymDim) or start < 0 or step < 1 or not isinstance(end, SymDim):
        raise c.unsupported(
            f"a slice [{start}:{end}:{step}] of axis {axis} of symbolic shape {x.type.shape}: "
            "Cuvil slices a symbolic size only from a static start >= 0 with a step >= 1 up "
            "to a size read from a tensor (x[:, :t] with t = y.shape[1]); fix: give that dim "
            "a static size"
        )
    return composites.slice_axis(c.b, x, axis, int(start), run_time_size(c.b, end), int(step))


@lowers("aten.select", "aten.select_copy")
def _select(c, self, dim, index, **_):
    x = operand(c, self, result_dtype(c))
    axis = composites.normalize_axis(int(dim), len(x.type.shape))
    i = int(index) % x.type.shape[axis]
    picked = composites.slice_axis(c.b, x, axis, i, i + 1)
    return composites.reshape(c.b, picked, result_shape(c))


# ----- shapes and shape-only constructors ---------------------------------------------------


@lowers("aten.sym_size")
def _sym_size(c, self, dim=None, **_):
    shape = self.type.shape if isinstance(self, Value) else np.shape(self)
    if dim is None:
        return tuple(shape)
    size = _symbolic_size(c, shape[int(dim)])
    if isinstance(size, SymDim) and isinstance(self, Value):
        size.origin = (self, composites.normalize_axis(int(dim), len(shape)))
    return size


@lowers("aten.sym_numel")
def _sym_numel(c, self, **_):
    if isinstance(self, Value) and not self.type.is_static:
        return _symbolic_size(c, None)
    return _size(self)


def _symbolic_size(c, size):
    """A size read from a shape: an int, or a SymDim named after the graph's SymInt."""
    if isinstance(size, int):
        return size
    val = c.node.meta.get("val")
    return SymDim(str(size) if isinstance(size, str) else str(val))


@lowers("aten.arange")
def _arange(c, end, start=0, step=1, **_):
    # Only reached with a symbolic bound: arange of static sizes is folded.
    if isinstance(start, SymDim) or isinstance(step, SymDim) or not isinstance(end, SymDim):
        raise c.unsupported(
            f"arange({start}, {end}, {step}) with a symbolic start or step; only the end may "
            "be a symbolic size; fix: give that dim a static size"
        )
    if int(start) != start or int(step) != step or step < 1:
        raise c.unsupported(
            f"arange({start}, {end}, {step}) up to a symbolic size needs an integer start and "
            "a positive integer step"
        )
    return c.b.op(
        "cuvil.range",
        [run_time_size(c.b, end)],
        {"start": int(start), "step": int(step)},
        result_type=TensorType(result_dims(c), result_dtype(c)),
    )


@lowers(
    "aten.full_like",
    "aten.zeros_like",
    "aten.ones_like",
    "aten.empty_like",
    "aten.new_zeros",
    "aten.new_ones",
    "aten.new_full",
    "aten.new_empty",
)
def _like(c, self=None, fill_value=None, **_):
    # Only the input's shape matters: the result is a constant, or, for a symbolic
    # shape, a constant broadcast like the input.
    name = c.op
    value = 1 if "ones" in name else 0 if fill_value is None else fill_value
    if isinstance(value, Value):
        raise c.unsupported(f"{name} with a fill value computed at run time")
    dims, dtype = result_dims(c), result_dtype(c)
    if None not in dims:
        return np.full(dims, value, dtype=dtype)
    if not (
        name.endswith("_like") and isinstance(self, Value) and len(dims) == len(self.type.shape)
    ):
        raise c.unsupported(f"{name} of the symbolic shape {dims}")
    filler = c.b.constant(np.full((1,) * len(dims), value, dtype=dtype))
    return c.b.op("cuvil.broadcast_to", [filler, self], result_type=TensorType(dims, dtype))


@lowers("aten.flip")
def _flip(c, self, dims, **_):
    return composites.flip(c.b, operand(c, self, result_dtype(c)), [int(d) for d in dims])


@lowers("aten.cumsum")
def _cumsum(c, self, dim, **_):
    return composites.cumsum(c.b, operand(c, self, result_dtype(c)), int(dim))
