"""ONNX elementwise, comparison, shape, indexing and reduction operators, folded when static.

Each handler computes with NumPy when all its inputs are known at import
time (the shape arithmetic exporters emit: Shape, ConstantOfShape, Range,
Gather/Concat/Unsqueeze/Slice on shape tensors, Cast...) and emits cuvil ops
otherwise.
"""

from __future__ import annotations

import numpy as np

from .. import composites as C
from ..base import compute_dtype
from ..builder import Value
from ..symbolic_dims import SymDim, is_shape_value, shape_value
from . import symbolic_ops as S
from .importer import NodeContext, op
from .model import np_dtype

_BINARY = {
    "Add": ("cuvil.add", np.add),
    "Sub": ("cuvil.sub", np.subtract),
    "Mul": ("cuvil.mul", np.multiply),
    "Div": ("cuvil.div", None),
    "Pow": ("cuvil.pow", None),
    "Max": ("cuvil.max", np.maximum),
    "Min": ("cuvil.min", np.minimum),
}
_COMPARE = {
    "Equal": ("eq", np.equal),
    "Less": ("lt", np.less),
    "LessOrEqual": ("le", np.less_equal),
    "Greater": ("gt", np.greater),
    "GreaterOrEqual": ("ge", np.greater_equal),
}
_UNARY = {
    "Neg": ("cuvil.neg", np.negative),
    "Abs": ("cuvil.abs", np.abs),
    "Sqrt": ("cuvil.sqrt", np.sqrt),
    "Exp": ("cuvil.exp", np.exp),
    "Log": ("cuvil.log", np.log),
    "Tanh": ("cuvil.tanh", np.tanh),
    "Relu": ("cuvil.relu", lambda x: np.maximum(x, 0).astype(x.dtype)),
    "Sigmoid": ("cuvil.sigmoid", lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype)),
    "Erf": ("cuvil.erf", None),
    "Identity": (None, lambda x: x),
    "Floor": ("cuvil.floor", np.floor),
    "Ceil": ("cuvil.ceil", np.ceil),
    "Round": ("cuvil.round", np.rint),
    "Sin": ("cuvil.sin", np.sin),
    "Cos": ("cuvil.cos", np.cos),
    "Not": (None, np.logical_not),
    "Reciprocal": (None, lambda x: (1 / x).astype(x.dtype)),
}


def _fold_div(a, b):
    if is_shape_value(a) or is_shape_value(b):
        return np.floor_divide(a, b)  # sizes: positive, so truncation is floor division
    if np.issubdtype(a.dtype, np.integer):
        return np.trunc(a / b).astype(a.dtype)
    return (a / b).astype(a.dtype)


# ----- elementwise ---------------------------------------------------------------------------


@op(*_BINARY)
def binary(ctx: NodeContext):
    name, fold = _BINARY[ctx.op_type]
    if ctx.all_constant():
        a, *rest = (np.asarray(v) for v in ctx.inputs)
        if ctx.op_type == "Div":
            return [_fold_div(a, rest[0])]
        if ctx.op_type == "Pow":
            return [np.power(a, rest[0].astype(a.dtype)).astype(a.dtype)]
        for b in rest:  # Max and Min are variadic
            result = fold(a, b)
            a = result if is_shape_value(result) else result.astype(a.dtype)
        return [a]
    if len(ctx.inputs) != 2:
        return [_variadic(ctx, name)]
    lhs, rhs = ctx.value(0), ctx.value(1)
    if ctx.op_type == "Div":
        return [C.truncate_divide(ctx.b, lhs, rhs)]
    if ctx.op_type == "Pow" and rhs.type.dtype != lhs.type.dtype:
        rhs = C.cast(ctx.b, rhs, lhs.type.dtype)
    return [ctx.b.op(name, [lhs, rhs])]


def _variadic(ctx: NodeContext, name: str) -> Value:
    result = ctx.value(0)
    for index in range(1, len(ctx.inputs)):
        result = ctx.b.op(name, [result, ctx.value(index)])
    return result


@op("Mod")
def mod(ctx: NodeContext):
    """``fmod=1``: C's fmod (the dividend's sign); ``fmod=0`` (integers): Python's ``%``."""
    fmod = bool(ctx.attr("fmod", 0))
    if not fmod and np.dtype(ctx.dtype(0)).kind == "f":
        raise ctx.unsupported("Mod with fmod=0 on floats (the ONNX spec requires fmod=1)")
    if ctx.all_constant():
        a, b = (np.asarray(v) for v in ctx.inputs)
        return [(np.fmod(a, b) if fmod else np.mod(a, b)).astype(a.dtype)]
    lhs, rhs = ctx.value(0), ctx.value(1)
    if fmod:
        return [ctx.b.op("cuvil.rem", [lhs, rhs])]
    return [C.remainder(ctx.b, lhs, rhs)]


@op("Sum")
def sum_(ctx: NodeContext):
    if ctx.all_constant():
        return [np.sum(np.broadcast_arrays(*ctx.inputs), axis=0).astype(ctx.dtype(0))]
    return [_variadic(ctx, "cuvil.add")]


@op(*_COMPARE)
def compare(ctx: NodeContext):
    predicate, fold = _COMPARE[ctx.op_type]
    if ctx.all_constant():
        return [np.asarray(fold(ctx.inputs[0], ctx.inputs[1])).astype(bool)]
    return [C.compare(ctx.b, ctx.value(0), ctx.value(1), predicate)]


@op(*_UNARY)
def unary(ctx: NodeContext):
    name, fold = _UNARY[ctx.op_type]
    if ctx.all_constant() and fold is not None:
        return [np.asarray(fold(np.asarray(ctx.inputs[0])))]
    if ctx.op_type == "Identity":
        return [ctx.inputs[0]]
    if ctx.op_type == "Not":
        false = C.scalar(ctx.b, False, "bool")
        return [C.compare(ctx.b, ctx.value(0), false, "eq")]
    if ctx.op_type == "Reciprocal":
        x = ctx.value(0)
        return [ctx.b.op("cuvil.div", [C.scalar(ctx.b, 1.0, x), x])]
    if name is None:
        raise ctx.unsupported("this operator on a tensor computed at run time")
    return [ctx.b.op(name, [ctx.value(0)])]


@op("Where")
def where(ctx: NodeContext):
    if ctx.all_constant():
        return [np.where(*ctx.inputs)]
    return [ctx.b.op("cuvil.where", [ctx.value(0), ctx.value(1), ctx.value(2)])]


@op("Cast")
def cast(ctx: NodeContext):
    dtype = np_dtype(ctx.attr("to"), f"Cast node '{ctx.name}'")
    if ctx.all_constant():
        if is_shape_value(ctx.inputs[0]) and dtype.kind in "iu":
            return [ctx.inputs[0]]  # symbolic sizes stay sizes
        return [np.asarray(ctx.inputs[0]).astype(dtype)]
    # A cast to float16 at run time computes on in float32 (see FLOAT16_POLICY).
    return [C.cast(ctx.b, ctx.value(0), compute_dtype(dtype.name))]


# ----- constants and shapes ------------------------------------------------------------------


@op("Constant")
def constant(ctx: NodeContext):
    for name, dtype in (
        ("value", None),
        ("value_float", np.float32),
        ("value_floats", np.float32),
        ("value_int", np.int64),
        ("value_ints", np.int64),
    ):
        if name in ctx.attrs:
            return [np.asarray(ctx.attr(name), dtype=dtype)]
    raise ctx.unsupported(f"a Constant given by {', '.join(ctx.attrs) or 'nothing'}")


@op("Shape")
def shape(ctx: NodeContext):
    start, end = ctx.attr("start", 0), ctx.attr("end", None)
    return [shape_value(ctx.shape(0)[start:end])]


@op("Size")
def size(ctx: NodeContext):
    return [_product(ctx.shape(0))]


def _product(dims):
    """The product of sizes (ints and symbolic ones), an int when all are static."""
    total = 1
    for d in dims:
        total = total * d
    return total


@op("ConstantOfShape")
def constant_of_shape(ctx: NodeContext):
    value = ctx.attr("value")
    value = np.zeros(1, np.float32) if value is None else np.asarray(value)
    dims = list(ctx.constant(0, "the shape"))
    fill = value.reshape(-1)[0]
    if not any(isinstance(d, SymDim) for d in dims):
        return [np.full([int(d) for d in dims], fill, dtype=value.dtype)]
    filler = ctx.b.constant(np.full((1,) * len(dims), fill, dtype=value.dtype))
    return [S.broadcast(ctx, filler, dims)]


@op("Range")
def range_(ctx: NodeContext):
    start, limit, delta = (ctx.constant(i, n) for i, n in enumerate(("start", "limit", "delta")))
    limit = np.asarray(limit, dtype=object).reshape(-1)[0]
    if not isinstance(limit, SymDim):
        S.require_static(start)
        S.require_static(delta)
        return [np.arange(start, limit, delta, dtype=np.asarray(start).dtype)]
    return [S.arange(ctx, start, limit, delta)]


@op("Reshape")
def reshape(ctx: NodeContext):
    dims = list(ctx.constant(1, "the target shape"))
    old = ctx.shape(0)
    if not ctx.attr("allowzero", 0):
        dims = [old[i] if _is_int(d, 0) else d for i, d in enumerate(dims)]
    if ctx.all_constant():
        return [np.reshape(ctx.inputs[0], [int(d) for d in dims])]
    return [S.reshape(ctx, ctx.value(0), dims)]


def _is_int(d, value: int) -> bool:
    return not isinstance(d, SymDim) and int(d) == value


@op("Flatten")
def flatten(ctx: NodeContext):
    shape = ctx.shape(0)
    axis = C.normalize_axis(ctx.attr("axis", 1), len(shape) + 1)
    dims = (_product(shape[:axis]), _product(shape[axis:]))
    if ctx.all_constant():
        return [np.reshape(ctx.inputs[0], dims)]
    return [S.reshape(ctx, ctx.value(0), dims)]


def _squeeze_axes(ctx: NodeContext, rank: int) -> list[int] | None:
    axes = ctx.ints("axes", 1)
    return None if axes is None else sorted(C.normalize_axis(a, rank) for a in axes)


@op("Squeeze")
def squeeze(ctx: NodeContext):
    shape = ctx.shape(0)
    axes = _squeeze_axes(ctx, len(shape))
    if axes is None:
        axes = [i for i, d in enumerate(shape) if _is_int(d, 1)]
    dims = [d for i, d in enumerate(shape) if i not in axes]
    if ctx.is_constant(0):
        return [np.reshape(ctx.inputs[0], dims)]
    return [S.reshape(ctx, ctx.value(0), dims)]


@op("Unsqueeze")
def unsqueeze(ctx: NodeContext):
    shape = ctx.shape(0)
    rank = len(shape) + len(ctx.ints("axes", 1, []))
    axes = _squeeze_axes(ctx, rank)
    rest = iter(shape)
    dims = [1 if i in axes else next(rest) for i in range(rank)]
    if ctx.is_constant(0):
        return [np.reshape(ctx.inputs[0], dims)]
    return [S.reshape(ctx, ctx.value(0), dims)]


@op("Transpose")
def transpose(ctx: NodeContext):
    perm = ctx.attr("perm") or list(reversed(range(ctx.rank(0))))
    if ctx.all_constant():
        return [np.transpose(ctx.inputs[0], perm)]
    return [C.transpose(ctx.b, ctx.value(0), perm)]


@op("Concat")
def concat(ctx: NodeContext):
    axis = C.normalize_axis(ctx.attr("axis"), ctx.rank(0))
    if ctx.all_constant():
        return [np.concatenate([np.asarray(v) for v in ctx.inputs], axis)]
    values = [ctx.value(i) for i in range(len(ctx.inputs)) if 0 not in ctx.shape(i)]
    return [C.concat(ctx.b, values, axis)]


@op("Expand")
def expand(ctx: NodeContext):
    target = list(ctx.constant(1, "the target shape"))
    if any(isinstance(d, SymDim) for d in target) or not ctx.is_constant(0):
        return [S.broadcast(ctx, ctx.value(0), target)]
    shape = np.broadcast_shapes(tuple(ctx.shape(0)), tuple(int(d) for d in target))
    return [np.broadcast_to(ctx.inputs[0], shape).copy()]


@op("Split")
def split(ctx: NodeContext):
    shape = ctx.shape(0)
    axis = C.normalize_axis(ctx.attr("axis", 0), len(shape))
    sizes = ctx.ints("split", 1)
    count = len(ctx.node.output)
    if sizes is None:
        count = ctx.attr("num_outputs", count)
        step = -(-shape[axis] // count)
        sizes = [min(step, shape[axis] - i * step) for i in range(count)]
    bounds = np.cumsum([0] + sizes)
    if ctx.is_constant(0):
        return np.split(ctx.inputs[0], bounds[1:-1], axis)
    x = ctx.value(0)
    return [C.slice_axis(ctx.b, x, axis, int(s), int(e)) for s, e in zip(bounds, bounds[1:])]


def _bounds(ctx: NodeContext, index: int, name: str):
    """Slice bounds from input ``index``: ints, a SymDim where a bound is a run-time size."""
    if not ctx.has(index):
        return None
    entries = np.asarray(ctx.constant(index, name), dtype=object).reshape(-1)
    return [e if isinstance(e, SymDim) else int(e) for e in entries]


@op("Slice")
def slice_(ctx: NodeContext):
    shape = ctx.shape(0)
    if ctx.opset < 10:
        starts, ends, axes = ctx.attr("starts"), ctx.attr("ends"), ctx.attr("axes")
        steps = None
    else:
        starts, ends = ctx.ints("", 1), _bounds(ctx, 2, "ends")
        axes, steps = ctx.ints("", 3), ctx.ints("", 4)
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * len(shape)
    for axis, start, end, step in zip(axes, starts, ends, steps):
        axis = C.normalize_axis(axis, len(shape))
        # Python slicing clamps like ONNX does (INT64_MAX/INT64_MIN ends included).
        index[axis] = slice(start, end, step)
    run_time_end = any(isinstance(item.stop, SymDim) for item in index)
    if ctx.is_constant(0) and not run_time_end:
        return [np.asarray(ctx.inputs[0])[tuple(index)]]
    x = ctx.value(0)
    for axis, item in enumerate(index):
        if isinstance(item.stop, SymDim):
            x = S.slice_to_run_time_end(ctx, x, axis, item)
            continue
        if item == slice(None) or (
            isinstance(shape[axis], SymDim) and S.whole_axis(item.start, item.stop, item.step)
        ):
            continue
        if isinstance(shape[axis], SymDim):
            x = _slice_symbolic_axis(ctx, x, axis, item)
            continue
        picked = range(shape[axis])[item]
        if len(picked) == 0:
            raise ctx.unsupported(f"a slice that leaves axis {axis} empty")
        if picked.step > 0:
            x = C.slice_axis(ctx.b, x, axis, picked.start, picked.stop, picked.step)
        else:
            x = C.gather(ctx.b, x, np.asarray(picked), axis)
    return [x]


def _slice_symbolic_axis(ctx: NodeContext, x, axis: int, item: slice):
    """A Slice of a symbolic axis with static bounds (``x[:, -1:]``, ``x[:, 1:]``): limits read
    at run time, the sizes they assume checked on each call."""
    try:
        return C.slice_symbolic_axis(ctx.b, x, axis, item)
    except ValueError as error:
        raise ctx.unsupported(str(error)) from None


@op("Gather")
def gather(ctx: NodeContext):
    axis = C.normalize_axis(ctx.attr("axis", 0), ctx.rank(0))
    if ctx.all_constant():
        return [np.take(ctx.inputs[0], np.asarray(ctx.inputs[1]), axis=axis)]
    indices = ctx.inputs[1] if ctx.is_constant(1) else ctx.value(1)
    return [C.gather(ctx.b, ctx.value(0), indices, axis)]


# ----- reductions -----------------------------------------------------------------------------

_REDUCE = {
    "ReduceMean": ("cuvil.reduce_mean", np.mean),
    "ReduceSum": ("cuvil.reduce_sum", np.sum),
    "ReduceMax": ("cuvil.reduce_max", np.max),
    "ReduceMin": ("cuvil.reduce_min", np.min),
}


@op(*_REDUCE)
def reduce(ctx: NodeContext):
    name, fold = _REDUCE[ctx.op_type]
    rank = ctx.rank(0)
    axes = ctx.ints("axes", 1)
    keepdims = bool(ctx.attr("keepdims", 1))
    if not axes:
        if ctx.attr("noop_with_empty_axes", 0):
            return [ctx.inputs[0]]
        axes = list(range(rank))
    axes = sorted({C.normalize_axis(a, rank) for a in axes})
    if ctx.all_constant():
        x = np.asarray(ctx.inputs[0])
        return [np.asarray(fold(x, axis=tuple(axes), keepdims=keepdims)).astype(x.dtype)]
    return [ctx.b.op(name, [ctx.value(0)], {"axes": axes, "keepdims": keepdims})]


@op("CumSum")
def cumsum(ctx: NodeContext):
    axis = C.normalize_axis(int(np.asarray(ctx.constant(1, "the axis")).reshape(-1)[0]), ctx.rank())
    exclusive, reverse = bool(ctx.attr("exclusive", 0)), bool(ctx.attr("reverse", 0))
    if ctx.is_constant(0):
        x = np.asarray(ctx.inputs[0])
        x = np.flip(x, axis) if reverse else x
        y = np.cumsum(x, axis=axis, dtype=x.dtype)
        if exclusive:
            y = y - x
        return [np.flip(y, axis) if reverse else y]
    return [C.cumsum(ctx.b, ctx.value(0), axis, exclusive=exclusive, reverse=reverse)]
