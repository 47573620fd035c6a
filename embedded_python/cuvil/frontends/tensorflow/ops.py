"""TensorFlow ops onto cuvil ops: one handler per op type, registered in ``OPS``.

A handler receives the :class:`~.importer.GraphImporter`, the ``tf.Operation``
and its inputs (IR Values, or NumPy arrays for tensors known at import time)
and returns the result (a list for several outputs). Layout parameters such
as ``data_format="NHWC"`` become transposes around cuvil's NCHW ops.
"""

from __future__ import annotations

import numpy as np

from .. import composites as cc
from ..base import compute_dtype, op_registrar
from ..symbolic_dims import (
    SymDim,
    folded_sizes,
    is_shape_value,
    missing_size,
    reshape_sizes,
    shape_value,
    type_dims,
    value_dims,
)

__all__ = ["OPS"]

OPS: dict = {}


op_type = op_registrar(OPS)


# ----- elementwise ----------------------------------------------------------------------

_BINARY = {
    "Add": "add",
    "AddV2": "add",
    "Sub": "sub",
    "Mul": "mul",
    "RealDiv": "div",
    "Div": "div",
    "Maximum": "max",
    "Minimum": "min",
    "Pow": "pow",
}
_UNARY = {
    "Neg": "neg",
    "Abs": "abs",
    "Exp": "exp",
    "Log": "log",
    "Tanh": "tanh",
    "Sigmoid": "sigmoid",
    "Sqrt": "sqrt",
    "Rsqrt": "rsqrt",
    "Erf": "erf",
    "Relu": "relu",
    "Sin": "sin",
    "Cos": "cos",
    "Floor": "floor",
    "Ceil": "ceil",
    "Round": "round",
    "Rint": "round",
}
_COMPARE = {
    "Equal": "eq",
    "NotEqual": "ne",
    "Less": "lt",
    "LessEqual": "le",
    "Greater": "gt",
    "GreaterEqual": "ge",
}
_IDENTITY = ("Identity", "StopGradient", "PreventGradient", "Snapshot", "EnsureShape")


def _binary(imp, op, ins):
    a, b = (imp.value(x) for x in ins)
    if op.type in ("RealDiv", "Div") and not np.issubdtype(np.dtype(a.type.dtype), np.floating):
        raise imp.unsupported("integer division")
    return imp.b.op(f"cuvil.{_BINARY[op.type]}", [a, b])


def _unary(imp, op, ins):
    return imp.b.op(f"cuvil.{_UNARY[op.type]}", [imp.value(ins[0])])


def _compare(imp, op, ins):
    a, b = (imp.value(x) for x in ins)
    return cc.compare(imp.b, a, b, _COMPARE[op.type])


def _identity(imp, op, ins):
    return ins[0]


for _table, _handler in ((_BINARY, _binary), (_UNARY, _unary), (_COMPARE, _compare)):
    for _name in _table:
        OPS[_name] = _handler
for _name in _IDENTITY:
    OPS[_name] = _identity


@op_type("FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod")
def _integer_division(imp, op, ins):
    """TensorFlow's floor/truncate division and modulo (floats: ``floor(x / y)``, as TF does)."""
    b = imp.b
    x, y = (imp.value(v) for v in ins)
    is_float = x.type.dtype.startswith("float")
    if op.type == "FloorMod":
        return cc.remainder(b, x, y)
    if op.type == "TruncateMod":
        return b.op("cuvil.rem", [x, y])
    if op.type == "FloorDiv":
        return (
            b.op("cuvil.floor", [b.op("cuvil.div", [x, y])])
            if is_float
            else b.op("cuvil.div", [x, y])
        )
    return (
        b.op("cuvil.trunc", [b.op("cuvil.div", [x, y])])
        if is_float
        else cc.truncate_divide(b, x, y)
    )


@op_type("IdentityN")
def _identity_n(imp, op, ins):
    return list(ins)


@op_type("Square")
def _square(imp, op, ins):
    x = imp.value(ins[0])
    return imp.b.op("cuvil.mul", [x, x])


@op_type("SquaredDifference")
def _squared_difference(imp, op, ins):
    d = imp.b.op("cuvil.sub", [imp.value(ins[0]), imp.value(ins[1])])
    return imp.b.op("cuvil.mul", [d, d])


@op_type("Reciprocal", "Inv")
def _reciprocal(imp, op, ins):
    x = imp.value(ins[0])
    return imp.b.op("cuvil.div", [cc.scalar(imp.b, 1, x), x])


@op_type("Log1p", "Expm1")
def _log1p_expm1(imp, op, ins):
    return (cc.log1p if op.type == "Log1p" else cc.expm1)(imp.b, imp.value(ins[0]))


@op_type("Erfc")
def _erfc(imp, op, ins):
    x = imp.value(ins[0])
    return imp.b.op("cuvil.sub", [cc.scalar(imp.b, 1, x), imp.b.op("cuvil.erf", [x])])


@op_type("Relu6")
def _relu6(imp, op, ins):
    return cc.clip(imp.b, imp.value(ins[0]), 0.0, 6.0)


@op_type("LeakyRelu")
def _leaky_relu(imp, op, ins):
    return cc.leaky_relu(imp.b, imp.value(ins[0]), imp.attr("alpha", 0.2))


@op_type("Elu", "Selu")
def _elu(imp, op, ins):
    if op.type == "Elu":
        return cc.elu(imp.b, imp.value(ins[0]))
    return cc.elu(imp.b, imp.value(ins[0]), 1.6732632423543772, 1.0507009873554805)


@op_type("Softplus")
def _softplus(imp, op, ins):
    return cc.softplus(imp.b, imp.value(ins[0]))


@op_type("Softmax")
def _softmax(imp, op, ins):
    x = imp.value(ins[0])
    return imp.b.op("cuvil.softmax", [x], {"axis": len(x.type.shape) - 1})


@op_type("LogSoftmax")
def _log_softmax(imp, op, ins):
    return cc.log_softmax(imp.b, imp.value(ins[0]), -1)


@op_type("SelectV2", "Select")
def _select(imp, op, ins):
    cond, x, y = (imp.value(v) for v in ins)
    if op.type == "Select" and len(cond.type.shape) == 1 and len(x.type.shape) > 1:
        cond = cc.reshape(imp.b, cond, [-1] + [1] * (len(x.type.shape) - 1))
    return imp.b.op("cuvil.where", [cond, x, y])


@op_type("LogicalNot", "LogicalAnd", "LogicalOr")
def _logical(imp, op, ins):
    b = imp.b
    values = [imp.value(v) for v in ins]
    false, true = cc.scalar(b, False, "bool"), cc.scalar(b, True, "bool")
    if op.type == "LogicalNot":
        return cc.compare(b, values[0], false, "eq")
    x, y = values
    if op.type == "LogicalAnd":
        return b.op("cuvil.where", [x, y, false])
    return b.op("cuvil.where", [x, true, y])


@op_type("Cast")
def _cast(imp, op, ins):
    dtype = compute_dtype(np.dtype(imp.attr("DstT").as_numpy_dtype).name)
    return cc.cast(imp.b, imp.value(ins[0]), dtype)


@op_type("ZerosLike", "OnesLike")
def _fill_like(imp, op, ins):
    x = imp.value(ins[0])
    one = 1 if op.type == "OnesLike" else 0
    return cc.broadcast_to(imp.b, cc.scalar(imp.b, one, x), x.type.shape)


@op_type("Fill")
def _fill(imp, op, ins):
    dims = imp.known(ins[0], "the shape of Fill")
    return cc.broadcast_to(imp.b, imp.value(ins[1]), [int(d) for d in dims])


# ----- shapes -----------------------------------------------------------------------------


def _axis(imp, x, what: str) -> int:
    return int(imp.known(x, what))


@op_type("Shape")
def _shape(imp, op, ins):
    # From the imported value's static type: TF's graph may not know the dims. A
    # symbolic dim is a SymDim: the shape arithmetic on it folds, a reshape keeps it.
    x = ins[0]
    if hasattr(x, "type") and not x.type.is_static:
        return shape_value(value_dims(x))
    shape = x.type.shape if hasattr(x, "type") else np.shape(x)
    return np.asarray(shape, dtype=np.dtype(imp.attr("out_type").as_numpy_dtype))


@op_type("Size", "Rank")
def _size(imp, op, ins):
    shape = ins[0].type.shape
    value = len(shape) if op.type == "Rank" else int(np.prod(shape, dtype=np.int64))
    dtype = imp.attr("out_type")
    return np.asarray(value, dtype=np.int32 if dtype is None else dtype.as_numpy_dtype)


@op_type("Reshape")
def _reshape(imp, op, ins):
    entries = list(imp.known(ins[1], "the shape of Reshape"))
    x = imp.value(ins[0])
    if not any(isinstance(e, SymDim) for e in entries) and x.type.is_static:
        return cc.reshape(imp.b, x, [int(d) for d in entries])
    if -1 in entries:
        entries[entries.index(-1)] = missing_size(value_dims(x), entries)
    # A symbolic entry is a dynamic dim: several are given at run time (read where the shape
    # came from), one the compiler derives.
    dims = [-1 if d is None else d for d in type_dims(entries)]
    return cc.reshape(imp.b, x, dims, reshape_sizes(imp.b, entries) or ())


@op_type("Transpose")
def _transpose(imp, op, ins):
    perm = imp.known(ins[1], "the permutation of Transpose")
    return cc.transpose(imp.b, imp.value(ins[0]), [int(p) for p in perm])


@op_type("ExpandDims")
def _expand_dims(imp, op, ins):
    x = imp.value(ins[0])
    shape = list(x.type.shape)
    axis = cc.normalize_axis(_axis(imp, ins[1], "the axis of ExpandDims"), len(shape) + 1)
    shape.insert(axis, 1)
    return cc.reshape(imp.b, x, shape)


@op_type("Squeeze")
def _squeeze(imp, op, ins):
    x = imp.value(ins[0])
    rank = len(x.type.shape)
    dims = {cc.normalize_axis(d, rank) for d in imp.attr("squeeze_dims", [])}
    shape = [d for i, d in enumerate(x.type.shape) if not (d == 1 and (not dims or i in dims))]
    return cc.reshape(imp.b, x, shape)


@op_type("ConcatV2")
def _concat(imp, op, ins):
    *values, axis = ins
    return cc.concat(imp.b, [imp.value(v) for v in values], _axis(imp, axis, "the concat axis"))


@op_type("Pack")
def _pack(imp, op, ins):
    if any(is_shape_value(v) for v in ins):  # sizes, some symbolic: [tf.shape(x)[0], -1]
        return shape_value([v.item() for v in ins])
    values = [imp.value(v) for v in ins]
    shape = list(values[0].type.shape)
    axis = cc.normalize_axis(imp.attr("axis", 0), len(shape) + 1)
    shape.insert(axis, 1)
    return cc.concat(imp.b, [cc.reshape(imp.b, v, shape) for v in values], axis)


@op_type("Unpack")
def _unpack(imp, op, ins):
    x = imp.value(ins[0])
    axis = cc.normalize_axis(imp.attr("axis", 0), len(x.type.shape))
    shape = [d for i, d in enumerate(x.type.shape) if i != axis]
    return [
        cc.reshape(imp.b, cc.slice_axis(imp.b, x, axis, i, i + 1), shape)
        for i in range(x.type.shape[axis])
    ]


@op_type("Split", "SplitV")
def _split(imp, op, ins):
    if op.type == "Split":
        axis_input, x = ins
        x = imp.value(x)
        axis = cc.normalize_axis(_axis(imp, axis_input, "the split axis"), len(x.type.shape))
        sizes = [x.type.shape[axis] // imp.attr("num_split")] * imp.attr("num_split")
    else:
        x, sizes, axis_input = ins
        x = imp.value(x)
        axis = cc.normalize_axis(_axis(imp, axis_input, "the split axis"), len(x.type.shape))
        sizes = [int(s) for s in imp.known(sizes, "the split sizes")]
        if -1 in sizes:
            sizes[sizes.index(-1)] = x.type.shape[axis] - (sum(sizes) + 1)
    parts, start = [], 0
    for size in sizes:
        parts.append(cc.slice_axis(imp.b, x, axis, start, start + size))
        start += size
    return parts


@op_type("Slice")
def _slice(imp, op, ins):
    x = imp.value(ins[0])
    begin = [int(v) for v in imp.known(ins[1], "the begin of Slice")]
    size = [int(v) for v in imp.known(ins[2], "the size of Slice")]
    limit = [d if s == -1 else b + s for b, s, d in zip(begin, size, x.type.shape)]
    return imp.b.op("cuvil.slice", [x], {"start": begin, "limit": limit, "step": [1] * len(begin)})


@op_type("StridedSlice")
def _strided_slice(imp, op, ins):
    begin, end, strides = (
        [int(v) for v in imp.known(t, f"the {w} of StridedSlice")]
        for t, w in zip(ins[1:], ("begin", "end", "strides"))
    )
    masks = {m: imp.attr(f"{m}_mask", 0) for m in ("begin", "end", "ellipsis", "new_axis")}
    shrink = imp.attr("shrink_axis_mask", 0)
    # numpy's indexing is TensorFlow's strided slice: build the index tuple and apply it.
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if masks["ellipsis"] & bit:
            index.append(Ellipsis)
        elif masks["new_axis"] & bit:
            index.append(None)
        elif shrink & bit:
            index.append(b)
        else:
            b = None if masks["begin"] & bit else b
            e = None if masks["end"] & bit else e
            index.append(slice(b, e, s))
    if is_shape_value(ins[0]):  # sizes, some symbolic: tf.shape(x)[0]
        return folded_sizes(ins[0][tuple(index)])
    return _index(imp, imp.value(ins[0]), tuple(index))


def _index(imp, x, index):
    """``x[index]`` for a basic NumPy index (slices, ints, None, Ellipsis) with positive steps."""
    probe = np.arange(int(np.prod(x.type.shape, dtype=np.int64))).reshape(x.type.shape)
    out_shape = probe[index].shape
    axis, starts, limits, steps = 0, [], [], []
    if Ellipsis not in index:
        index = index + (Ellipsis,)
    at = index.index(Ellipsis)
    fill = len(x.type.shape) - sum(1 for i in index if i is not None and i is not Ellipsis)
    index = index[:at] + (slice(None),) * fill + index[at + 1 :]
    for item in index:
        if item is None:
            continue
        size = x.type.shape[axis]
        if isinstance(item, slice):
            start, stop, step = item.indices(size)
            if step < 0:
                raise imp.unsupported("a strided slice with a negative stride")
            stop = max(stop, start)
        else:
            start = item % size
            stop, step = start + 1, 1
        starts.append(start), limits.append(stop), steps.append(step)
        axis += 1
    sliced = x
    if (starts, limits, steps) != ([0] * axis, list(x.type.shape), [1] * axis):
        attrs = {"start": starts, "limit": limits, "step": steps}
        sliced = imp.b.op("cuvil.slice", [x], attrs)
    return cc.reshape(imp.b, sliced, out_shape)


@op_type("Tile")
def _tile(imp, op, ins):
    x = imp.value(ins[0])
    reps = [int(r) for r in imp.known(ins[1], "the multiples of Tile")]
    for axis, rep in enumerate(reps):
        if rep != 1:
            x = cc.concat(imp.b, [x] * rep, axis)
    return x


@op_type("BroadcastTo")
def _broadcast_to(imp, op, ins):
    shape = imp.known(ins[1], "the shape of BroadcastTo")
    return cc.broadcast_to(imp.b, imp.value(ins[0]), [int(d) for d in shape])


@op_type("GatherV2")
def _gather(imp, op, ins):
    data, indices = imp.value(ins[0]), imp.value(ins[1])
    axis = cc.normalize_axis(_axis(imp, ins[2], "the axis of GatherV2"), len(data.type.shape))
    batch_dims = int(imp.attr("batch_dims", 0))
    if batch_dims < 0:
        batch_dims += len(indices.type.shape)
    if batch_dims == 0:
        return imp.b.op("cuvil.gather", [data, indices], {"axis": axis})
    return cc.gather_batched(imp.b, data, indices, axis, batch_dims)


@op_type("ReverseV2")
def _reverse(imp, op, ins):
    axes = np.asarray(imp.known(ins[1], "the axes of ReverseV2")).reshape(-1)
    return cc.flip(imp.b, imp.value(ins[0]), [int(a) for a in axes])


@op_type("Cumsum")
def _cumsum(imp, op, ins):
    x = imp.value(ins[0])
    axis = _axis(imp, ins[1], "the axis of Cumsum")
    exclusive, reverse = bool(imp.attr("exclusive", False)), bool(imp.attr("reverse", False))
    return cc.cumsum(imp.b, x, axis, exclusive=exclusive, reverse=reverse)


# ----- reductions -------------------------------------------------------------------------

_REDUCE = {"Sum": "reduce_sum", "Mean": "reduce_mean", "Max": "reduce_max", "Min": "reduce_min"}


@op_type(*_REDUCE)
def _reduce(imp, op, ins):
    x = imp.value(ins[0])
    rank = len(x.type.shape)
    axes = np.atleast_1d(imp.known(ins[1], f"the axes of {op.type}"))
    axes = tuple(sorted({cc.normalize_axis(int(a), rank) for a in axes}))
    if not axes:
        return x
    attrs = {"axes": axes, "keepdims": bool(imp.attr("keep_dims", False))}
    return imp.b.op(f"cuvil.{_REDUCE[op.type]}", [x], attrs)


@op_type("ArgMax", "ArgMin")
def _arg_reduce(imp, op, ins):
    x = imp.value(ins[0])
    axis = _axis(imp, ins[1], f"the axis of {op.type}")
    dtype = np.dtype(imp.attr("output_type").as_numpy_dtype).name
    return cc.arg_reduce(imp.b, x, axis, "max" if op.type == "ArgMax" else "min", dtype)


@op_type("ReadVariableOp")
def _read_variable(imp, op, ins):
    import tensorflow as tf

    resource = ins[0]
    if not hasattr(resource, "handle"):
        raise imp.unsupported("a variable that is not captured by the function")
    value = tf.raw_ops.ReadVariableOp(resource=resource.handle, dtype=op.get_attr("dtype"))
    return np.asarray(value)
