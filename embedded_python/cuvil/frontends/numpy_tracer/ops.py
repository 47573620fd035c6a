"""NumPy semantics (dtype promotion, axes, indexing, 1-D matmul) mapped onto Cuvil IR ops.

Result shapes are not computed here: each op's shape rule in the dialect
(``InferTypeOpInterface``) gives them, and rejects invalid operands with a
:class:`cuvil.TraceError`. This module decides which ops NumPy's API means.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from ..._dtypes import (
    BOOL,
    FLOAT64,
    INT64,
    extension,
    is_float,
    is_traceable,
    ufunc_loop_dtypes,
    weak_token,
)
from ..._errors import TraceError
from ..._source import SourceLoc, user_location
from .. import composites
from .tracer import Tracer, check_context, unsupported

# NumPy 1.24 (Debian 12) has no np.exceptions.
AxisError = getattr(np, "exceptions", np).AxisError


# ----- operand handling ------------------------------------------------------


def _operand(value):
    """Normalize a user operand to a Tracer, ndarray, NumPy scalar or weak Python scalar."""
    if isinstance(value, (Tracer, np.ndarray, np.generic, bool, int, float)):
        if isinstance(value, (np.ndarray, np.generic)) and not is_traceable(value.dtype):
            raise unsupported(f"an operand of dtype {value.dtype}")
        return value
    if isinstance(value, complex):
        raise unsupported("complex numbers")
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tracer) for v in value):
        raise unsupported("building an array from a list of traced arrays (use np.stack)")
    array = np.asarray(value)
    if not is_traceable(array.dtype):
        raise unsupported(f"an operand of type {type(value).__name__} (dtype {array.dtype})")
    return array


def lift(ctx, value, dtype=None, loc: SourceLoc | None = None) -> Tracer:
    """``value`` as a tracer of element type ``dtype`` (casting or making a constant)."""
    if isinstance(value, Tracer):
        return value if dtype is None else cast(value, dtype, loc)
    if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
        # Weak Python scalars: NumPy raises OverflowError for out-of-range ints.
        return ctx.constant(np.asarray(value, dtype=dtype), loc=loc)
    return ctx.constant(value, dtype, loc)


def _shape_of(value) -> tuple:
    return tuple(np.shape(value)) if not isinstance(value, Tracer) else value.shape


def reject_out(out, name: str) -> None:
    """Raise unsupported for NumPy's ``out=`` argument (in-place output)."""
    if out is not None:
        raise unsupported(f"{name}(..., out=...)")


def _normalize_axis(axis, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim)
    return axis % ndim


def _normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(_normalize_axis(a, ndim) for a in axis)
    else:
        axes = (_normalize_axis(axis, ndim),)
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(axes))


def _require_float(x: Tracer, loc) -> Tracer:
    """Integer and boolean inputs of float-only ops are promoted to float64, as NumPy does."""
    if is_float(x.dtype):
        return x
    return cast(x, FLOAT64, loc)


# ----- elementwise -----------------------------------------------------------

_BINARY = {
    np.add: "cuvil.add",
    np.subtract: "cuvil.sub",
    np.multiply: "cuvil.mul",
    np.true_divide: "cuvil.div",
    np.power: "cuvil.pow",
    np.maximum: "cuvil.max",
    np.minimum: "cuvil.min",
}
_COMPARE = {
    np.equal: "eq",
    np.not_equal: "ne",
    np.less: "lt",
    np.less_equal: "le",
    np.greater: "gt",
    np.greater_equal: "ge",
}
_UNARY = {
    np.negative: "cuvil.neg",
    np.exp: "cuvil.exp",
    np.log: "cuvil.log",
    np.tanh: "cuvil.tanh",
    np.sqrt: "cuvil.sqrt",
    np.absolute: "cuvil.abs",
    np.sin: "cuvil.sin",
    np.cos: "cuvil.cos",
    np.floor: "cuvil.floor",
    np.ceil: "cuvil.ceil",
    np.trunc: "cuvil.trunc",
    np.rint: "cuvil.round",
}
# Rounding an integer array keeps it (NumPy's integer loops are the identity).
_ROUNDING = (np.floor, np.ceil, np.trunc, np.rint)


@functools.cache
def _compare_predicates() -> tuple[str, ...]:
    return tuple(extension().compare_predicates())


def compare_predicate_value(name: str) -> int:
    """The enum value of cuvil.compare's predicate ``name`` ("lt" -> 2), from the dialect."""
    return _compare_predicates().index(name)


def _lift_pair(ufunc, a, b, allow_bool: bool):
    """Both operands of a two-operand ufunc lifted to NumPy's loop dtype, with the context."""
    a, b = _operand(a), _operand(b)
    ctx = check_context((a, b))
    loc = user_location()
    in_a, in_b, out = ufunc_loop_dtypes(ufunc, [weak_token(a), weak_token(b)])
    if in_a != in_b or not all(is_traceable(d) for d in (in_a, in_b, out)):
        raise unsupported(f"np.{ufunc.__name__} on {in_a} and {in_b}", loc)
    if out == BOOL and not allow_bool:
        raise unsupported(f"np.{ufunc.__name__} on boolean arrays", loc)
    return ctx, loc, lift(ctx, a, in_a, loc), lift(ctx, b, in_b, loc)


def binary_ufunc(ufunc, a, b) -> Tracer:
    """Apply a supported two-operand ufunc (arithmetic or comparison) with broadcasting."""
    predicate = _COMPARE.get(ufunc)
    ctx, loc, ta, tb = _lift_pair(ufunc, a, b, allow_bool=predicate is not None)
    name = "cuvil.compare" if predicate else _BINARY[ufunc]
    attributes = {"predicate": compare_predicate_value(predicate)} if predicate else None
    return ctx.emit(name, [ta, tb], attributes, loc)


def unary_ufunc(ufunc, x) -> Tracer:
    """Apply a supported one-operand NumPy ufunc."""
    x = _operand(x)
    ctx = check_context((x,))
    loc = user_location()
    in_dtype, out = ufunc_loop_dtypes(ufunc, [weak_token(x)])
    if in_dtype == BOOL or not (is_traceable(in_dtype) and is_traceable(out)):
        raise unsupported(f"np.{ufunc.__name__} on {in_dtype}", loc)
    t = lift(ctx, x, in_dtype, loc)
    if ufunc in _ROUNDING and not is_float(in_dtype):
        return copy(t)
    return ctx.emit(_UNARY[ufunc], [t], None, loc)


def division_ufunc(ufunc, a, b) -> Tracer:
    """``np.floor_divide`` (``//``), ``np.remainder`` (``%``) and ``np.fmod``."""
    ctx, loc, ta, tb = _lift_pair(ufunc, a, b, allow_bool=False)
    builder = ctx.builder
    with builder.at(loc):
        if ufunc is np.fmod:
            value = builder.op("cuvil.rem", [ta._value, tb._value])
        elif ufunc is np.remainder:
            value = composites.remainder(builder, ta._value, tb._value)
        else:
            value = composites.floor_divide(builder, ta._value, tb._value)
    return Tracer(ctx, value)


def floor_divide(a, b):
    return division_ufunc(np.floor_divide, a, b)


def remainder(a, b):
    return division_ufunc(np.remainder, a, b)


def around(a, decimals=0, out=None):
    """``np.round`` / ``np.around``: ties to even, at ``decimals`` digits like NumPy."""
    reject_out(out, "np.round")
    x = _operand(a)
    ctx, loc = check_context((x,)), user_location()
    t = lift(ctx, x, None, loc)
    if not is_float(t.dtype):
        if decimals >= 0:
            return copy(t)
        raise unsupported("np.round of an integer array with negative decimals", loc)
    with ctx.builder.at(loc):
        return Tracer(ctx, composites.round_decimals(ctx.builder, t._value, int(decimals)))


def float_unary(op: str, x) -> Tracer:
    """A float-only elementwise op (gelu, erf, sigmoid, rsqrt); ints promote to float64."""
    x = _operand(x)
    ctx = check_context((x,))
    loc = user_location()
    t = _require_float(lift(ctx, x, None, loc), loc)
    return ctx.emit(op, [t], None, loc)


def relu(x) -> Tracer:
    """``max(x, 0)`` keeping the dtype of ``x``."""
    x = _operand(x)
    ctx = check_context((x,))
    loc = user_location()
    t = lift(ctx, x, None, loc)
    if t.dtype == BOOL:
        raise unsupported("relu on a boolean array", loc)
    return ctx.emit("cuvil.relu", [t], None, loc)


def add(a, b):
    return binary_ufunc(np.add, a, b)


def subtract(a, b):
    return binary_ufunc(np.subtract, a, b)


def multiply(a, b):
    return binary_ufunc(np.multiply, a, b)


def divide(a, b):
    return binary_ufunc(np.true_divide, a, b)


def power(a, b):
    return binary_ufunc(np.power, a, b)


def maximum(a, b):
    return binary_ufunc(np.maximum, a, b)


def minimum(a, b):
    return binary_ufunc(np.minimum, a, b)


def less(a, b):
    return binary_ufunc(np.less, a, b)


def less_equal(a, b):
    return binary_ufunc(np.less_equal, a, b)


def greater(a, b):
    return binary_ufunc(np.greater, a, b)


def greater_equal(a, b):
    return binary_ufunc(np.greater_equal, a, b)


def equal(a, b):
    return binary_ufunc(np.equal, a, b)


def not_equal(a, b):
    return binary_ufunc(np.not_equal, a, b)


def negative(x):
    return unary_ufunc(np.negative, x)


def absolute(x):
    return unary_ufunc(np.absolute, x)


def sqrt(x):
    return unary_ufunc(np.sqrt, x)


def square(x):
    return binary_ufunc(np.multiply, x, x)


def reciprocal(x):
    if not isinstance(x, Tracer) or not is_float(x.dtype):
        raise unsupported("np.reciprocal on a non-float array")
    return binary_ufunc(np.true_divide, 1.0, x)


def clip(x, lo=None, hi=None):
    """``np.clip``: ``minimum(maximum(x, lo), hi)``."""
    if lo is None and hi is None:
        raise ValueError("One of max or min must be given")
    result = x
    if lo is not None:
        result = maximum(result, lo)
    if hi is not None:
        result = minimum(result, hi)
    return result


def cast(x, dtype, loc: SourceLoc | None = None) -> Tracer:
    """``x.astype(dtype)``: float to int truncates toward zero, nonzero to bool is True."""
    ctx = check_context((x,))
    loc = loc or user_location()
    dtype = np.dtype(dtype)
    if not is_traceable(dtype):
        raise unsupported(f"casting to {dtype}", loc)
    if dtype == x.dtype:
        return copy(x)
    return ctx.emit("cuvil.cast", [x], None, loc, result=(x.shape, dtype))


def copy(x: Tracer) -> Tracer:
    """A copy: same value, independent memory (so in-place updates do not alias)."""
    check_context((x,))
    return Tracer(x._ctx, x._value)


def inplace(target: Tracer, result: Tracer, name: str) -> Tracer:
    """Implement ``target op= value`` by rebinding ``target`` to ``result``.

    Faithful to NumPy only when no other live array shares ``target``'s memory,
    so updates of arguments or of arrays with live views are unsupported.
    """
    if target._storage.is_input:
        raise unsupported(
            f"in-place {name} on a function argument (NumPy would modify the caller's array)"
        )
    if any(member is not target for member in target._storage.members):
        raise unsupported(f"in-place {name} on an array that shares memory with a view")
    if result.shape != target.shape:
        raise ValueError(
            f"non-broadcastable output operand with shape {target.shape} doesn't match "
            f"the broadcast shape {result.shape}"
        )
    if result.dtype != target.dtype:
        if not np.can_cast(result.dtype, target.dtype, "same_kind"):
            raise TypeError(
                f"Cannot cast ufunc '{name}' output from {result.dtype!r} to "
                f"{target.dtype!r} with casting rule 'same_kind'"
            )
        result = cast(result, target.dtype)
    target._rebind(result._value)
    return target


# ----- linear algebra ----------------------------------------------------------


def matmul(a, b) -> Tracer:
    """NumPy ``a @ b``: 1-D operands are promoted to matrices, batch dims broadcast."""
    a, b = _operand(a), _operand(b)
    ctx = check_context((a, b))
    loc = user_location()
    in_a, in_b, out = ufunc_loop_dtypes(np.matmul, [weak_token(a), weak_token(b)])
    if out == BOOL or in_a != in_b or not is_traceable(out):
        raise unsupported(f"matmul on {in_a} and {in_b}", loc)
    ta, tb = lift(ctx, a, in_a, loc), lift(ctx, b, in_b, loc)
    if ta.ndim == 0 or tb.ndim == 0:
        raise TraceError(
            f"cuvil.matmul: operands must have at least one dimension, got shapes "
            f"{ta.shape} and {tb.shape} at {loc}. Fix: use * for scalar products."
        )
    a2 = ta if ta.ndim >= 2 else reshape(ta, (1, ta.shape[0]), loc=loc)
    b2 = tb if tb.ndim >= 2 else reshape(tb, (tb.shape[0], 1), loc=loc)
    result = ctx.emit("cuvil.matmul", [a2, b2], None, loc)
    shape = result.shape
    final = list(shape)
    if tb.ndim == 1:
        final.pop(-1)
    if ta.ndim == 1:
        final.pop(-2 if tb.ndim >= 2 else -1)
    if tuple(final) != shape:
        result = reshape(result, tuple(final), loc=loc, copy=True)
    return result


def dot(a, b) -> Tracer:
    """``np.dot`` for the cases that equal ``*`` or ``@``."""
    sa, sb = _shape_of(a), _shape_of(b)
    if len(sa) == 0 or len(sb) == 0:
        return multiply(a, b)
    if len(sb) == 1 or (len(sa) <= 2 and len(sb) <= 2):
        return matmul(a, b)
    raise unsupported("np.dot with an N-d right operand (use @ / np.matmul)")


# ----- reductions ----------------------------------------------------------------


def reduce(kind: str, x, axis=None, keepdims=False, dtype=None) -> Tracer:
    """``sum``/``mean``/``max``/``min`` over ``axis`` (None = all) with NumPy's result dtypes."""
    x = _operand(x)
    ctx = check_context((x,))
    loc = user_location()
    t = lift(ctx, x, None, loc)
    axes = _normalize_axes(axis, t.ndim)
    if dtype is not None:
        if kind in ("max", "min"):
            raise unsupported(f"{kind}(dtype=...)", loc)
        t = cast(t, dtype, loc)
    elif kind == "sum" and t.dtype.kind in "bi" and t.dtype.itemsize < 8:
        t = cast(t, INT64, loc)
    elif kind == "mean" and not is_float(t.dtype):
        t = cast(t, FLOAT64, loc)
    if kind in ("max", "min") and t.dtype == BOOL:
        raise unsupported(f"{kind} of a boolean array", loc)
    if kind in ("sum", "mean") and t.dtype == BOOL:
        raise unsupported(f"{kind} with dtype=bool", loc)
    if not axes:
        return copy(t)
    attributes = {"axes": axes, "keepdims": bool(keepdims)}
    return ctx.emit(f"cuvil.reduce_{kind}", [t], attributes, loc)


def variance(x, axis=None, dtype=None, ddof=0, keepdims=False) -> Tracer:
    """``np.var``: mean of squared deviations, divided by ``N - ddof``."""
    ctx = check_context((x,))
    loc = user_location()
    t = lift(ctx, x, None, loc)
    t = cast(t, dtype, loc) if dtype is not None else _require_float(t, loc)
    axes = _normalize_axes(axis, t.ndim)
    count = int(np.prod([t.shape[a] for a in axes], dtype=np.int64))
    deviation = subtract(t, reduce("mean", t, axes, True))
    squares = multiply(deviation, deviation)
    if ddof == 0:
        return reduce("mean", squares, axes, keepdims)
    return divide(reduce("sum", squares, axes, keepdims), float(count - ddof))


# ----- shape manipulation ----------------------------------------------------------


def reshape(x, shape, loc: SourceLoc | None = None, copy: bool = False) -> Tracer:
    """``x.reshape(shape)`` with one optional ``-1``."""
    ctx = check_context((x,))
    loc = loc or user_location()
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if not all(isinstance(d, int) for d in x.shape):
        return _symbolic_reshape(ctx, x, shape, loc, copy)
    shape = [operator.index(d) for d in shape]
    unknown = [i for i, d in enumerate(shape) if d == -1]
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown and known > 0 and x.size % known == 0:
        shape[unknown[0]] = x.size // known
    if any(d < 0 for d in shape) or int(np.prod(shape, dtype=np.int64)) != x.size:
        raise TraceError(
            f"cuvil.reshape: cannot reshape array of shape {x.shape} (size {x.size}) into "
            f"shape {tuple(shape)} at {loc}. Fix: keep the number of elements unchanged."
        )
    shape = tuple(shape)
    if shape == x.shape:
        return x._alias() if not copy else Tracer(ctx, x._value)
    result = ctx.emit("cuvil.reshape", [x], None, loc, result=(shape, x.dtype))
    return result if copy else x._alias(result._value)


def _symbolic_reshape(ctx, x, shape, loc, copy: bool) -> Tracer:
    """Reshape of an array with symbolic dims: ints plus at most one ``-1``.

    The ``-1`` becomes a dynamic dimension whose size the compiler derives
    from the element count (``reshape(2, -1)`` of ``(N, 4)`` is ``(2, N * 2)``).
    """
    if any(isinstance(d, str) or d is None for d in shape):
        raise unsupported(
            f"reshape of a symbolic shape {x.shape} to {tuple(shape)}: give ints and one -1", loc
        )
    dims = [operator.index(d) for d in shape]
    if sum(d == -1 for d in dims) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(d < -1 or d == 0 for d in dims):
        raise TraceError(f"cuvil.reshape: invalid shape {tuple(dims)} at {loc}")
    result_shape = tuple(None if d == -1 else d for d in dims)
    result = ctx.emit("cuvil.reshape", [x], None, loc, result=(result_shape, x.dtype))
    return result if copy else x._alias(result._value)


def transpose(x, axes=None) -> Tracer:
    """``x.transpose(axes)``; ``None`` reverses the dimensions."""
    ctx = check_context((x,))
    loc = user_location()
    if axes is None:
        perm = tuple(reversed(range(x.ndim)))
    else:
        perm = tuple(_normalize_axis(a, x.ndim) for a in axes)
        if sorted(perm) != list(range(x.ndim)):
            raise ValueError("axes don't match array")
    if perm == tuple(range(x.ndim)):
        return x._alias()
    result = ctx.emit("cuvil.transpose", [x], {"permutation": perm}, loc)
    return x._alias(result._value)


def swapaxes(x, axis1, axis2) -> Tracer:
    perm = list(range(x.ndim))
    a, b = _normalize_axis(axis1, x.ndim), _normalize_axis(axis2, x.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def moveaxis(x, source, destination) -> Tracer:
    sources = [_normalize_axis(s, x.ndim) for s in np.atleast_1d(source)]
    dests = [_normalize_axis(d, x.ndim) for d in np.atleast_1d(destination)]
    if len(sources) != len(dests):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [n for n in range(x.ndim) if n not in sources]
    for dest, s in sorted(zip(dests, sources)):
        order.insert(dest, s)
    return transpose(x, order)


def squeeze(x, axis=None) -> Tracer:
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = _normalize_axes(axis, x.ndim)
        if any(x.shape[a] != 1 for a in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def expand_dims(x, axis) -> Tracer:
    axis = axis if isinstance(axis, (tuple, list)) else (axis,)
    out_ndim = x.ndim + len(axis)
    axes = _normalize_axes(axis, out_ndim)
    dims = iter(x.shape)
    return reshape(x, tuple(1 if i in axes else next(dims) for i in range(out_ndim)))


def broadcast_to(x, shape) -> Tracer:
    """``np.broadcast_to``: a read-only broadcast view."""
    x = _operand(x)
    ctx = check_context((x,))
    loc = user_location()
    t = lift(ctx, x, None, loc)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if shape == t.shape:
        return t._alias()
    result = ctx.emit("cuvil.broadcast_to", [t], None, loc, result=(shape, t.dtype))
    return t._alias(result._value)


def concatenate(arrays, axis=0, dtype=None) -> Tracer:
    """``np.concatenate`` along ``axis`` (``None`` flattens first)."""
    arrays = [_operand(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    ctx = check_context(arrays)
    loc = user_location()
    if any(len(_shape_of(a)) == 0 for a in arrays):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    out_dtype = (
        np.dtype(dtype)
        if dtype is not None
        else np.result_type(*[np.dtype(a.dtype) for a in arrays])
    )
    tracers = [lift(ctx, a, out_dtype, loc) for a in arrays]
    if axis is None:
        tracers = [reshape(t, (-1,), loc=loc) for t in tracers]
        axis = 0
    first = tracers[0]
    axis = _normalize_axis(axis, first.ndim)
    if len(tracers) == 1:
        return copy(first)
    return ctx.emit("cuvil.concat", tracers, {"axis": axis}, loc)


def stack(arrays, axis=0) -> Tracer:
    """``np.stack``: new axis ``axis``, then concatenate."""
    arrays = [_operand(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {_shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    ndim = len(next(iter(shapes))) + 1
    axis = _normalize_axis(axis, ndim)
    ctx = check_context(arrays)
    expanded = [expand_dims(lift(ctx, a), axis) for a in arrays]
    return concatenate(expanded, axis)


_INDEX_DTYPES = (np.dtype(np.int32), INT64)


def take(x, indices, axis=None, loc: SourceLoc | None = None) -> Tracer:
    """``np.take(x, indices, axis)``: ``cuvil.gather`` of integer ``indices`` along ``axis``.

    Negative indices count from the end, as in NumPy. Constant indices out of
    range raise ``IndexError`` like NumPy; traced ones cannot be checked while
    tracing, and the compiled code clamps them into the axis.
    """
    x, indices = _operand(x), _operand(indices)
    ctx = check_context((x, indices))
    loc = loc or user_location()
    t = lift(ctx, x, None, loc)
    if axis is None:
        t, axis = reshape(t, (-1,), loc=loc), 0
    if t.ndim == 0:
        raise AxisError(axis, 0)
    axis = _normalize_axis(axis, t.ndim)
    dtype = indices.dtype if isinstance(indices, (Tracer, np.ndarray, np.generic)) else None
    dtype = np.asarray(indices).dtype if dtype is None else np.dtype(dtype)
    if dtype.kind not in "biu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if not isinstance(indices, Tracer):
        size, values = t.shape[axis], np.asarray(indices)
        outside = values[(values < -size) | (values >= size)]
        if outside.size:
            raise IndexError(
                f"index {outside.flat[0]} is out of bounds for axis {axis} with size {size}"
            )
    index = lift(ctx, indices, None, loc)
    if index.dtype not in _INDEX_DTYPES:
        index = cast(index, INT64, loc)
    return ctx.emit("cuvil.gather", [t, index], {"axis": axis}, loc)


def _is_array_index(item) -> bool:
    """An integer or boolean array used as an index (NumPy's advanced indexing)."""
    if isinstance(item, Tracer):
        return True
    return isinstance(item, (list, np.ndarray)) and np.ndim(item) > 0


def _gather_index(x: Tracer, items: list, loc) -> Tracer:
    """``x[..., idx, ...]``: one integer array among slices and ``...``, as a gather.

    Slices keep every dimension in place, so slicing first and then gathering
    the array's axis is NumPy's result; a boolean mask has a data-dependent
    shape and is unsupported. Items are compared by identity: ``==`` on a
    traced index would trace a comparison.
    """
    (position,) = [i for i, item in enumerate(items) if _is_array_index(item)]
    index = items[position]
    dtype = index.dtype if isinstance(index, Tracer) else np.asarray(index).dtype
    if dtype == BOOL:
        raise unsupported(
            "boolean mask indexing (advanced indexing with a data-dependent shape)", loc
        )
    others = [item for i, item in enumerate(items) if i != position]
    if any(item is not Ellipsis and not isinstance(item, slice) for item in others):
        raise unsupported(
            "an index array combined with integers or None (use np.take and reshape)", loc
        )
    ellipses = [i for i, item in enumerate(items) if item is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if len(items) - len(ellipses) > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional")
    axis = position
    if ellipses and ellipses[0] < position:
        axis = x.ndim - (len(items) - position)
    basic = tuple(slice(None) if i == position else item for i, item in enumerate(items))
    return take(getitem(x, basic), index, axis, loc)


def getitem(x: Tracer, index) -> Tracer:
    """Basic indexing (ints, slices with positive steps, ``...``, ``None``) and one index array."""
    ctx = check_context((x,))
    loc = user_location()
    items = list(index) if isinstance(index, tuple) else [index]
    arrays = sum(1 for item in items if _is_array_index(item))
    if arrays == 1:
        return _gather_index(x, items, loc)
    for item in items:
        if isinstance(item, Tracer):
            raise unsupported("indexing with several index arrays (advanced indexing)", loc)
        if isinstance(item, (bool, np.bool_)):
            raise unsupported("indexing with a boolean scalar", loc)
        if not (item is None or item is Ellipsis or isinstance(item, (slice, int, np.integer))):
            raise unsupported(f"indexing with {type(item).__name__} (advanced indexing)", loc)
    if items.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    real = sum(1 for i in items if i is not None and i is not Ellipsis)
    if real > x.ndim:
        raise IndexError(
            f"too many indices for array: array is {x.ndim}-dimensional, but {real} were indexed"
        )
    fill = [slice(None)] * (x.ndim - real)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at : at + 1] = fill
    else:
        items.extend(fill)
    if not all(isinstance(d, int) for d in x.shape):
        return _getitem_symbolic(x, items, loc)
    starts, limits, steps, sliced, final = [], [], [], [], []
    dim = 0
    for item in items:
        if item is None:
            final.append(1)
            continue
        size = x.shape[dim]
        if isinstance(item, slice):
            start, stop, step = item.indices(size)
            if step < 0:
                raise unsupported("slicing with a negative step", loc)
            count = len(range(start, stop, step))
            if count == 0:
                raise unsupported("slicing that produces an empty array", loc)
            final.append(count)
        else:
            start = operator.index(item)
            if not -size <= start < size:
                raise IndexError(f"index {start} is out of bounds for axis {dim} with size {size}")
            start, step, count = start % size, 1, 1
        starts.append(start)
        steps.append(step)
        limits.append(start + (count - 1) * step + 1)
        sliced.append(count)
        dim += 1
    result = x
    if tuple(sliced) != x.shape or any(s != 1 for s in steps):
        attributes = {"start": tuple(starts), "limit": tuple(limits), "step": tuple(steps)}
        result = ctx.emit("cuvil.slice", [x], attributes, loc)
    if tuple(final) != result.shape:
        result = ctx.emit("cuvil.reshape", [result], None, loc, result=(final, x.dtype))
    return x._alias(result._value)


def _getitem_symbolic(x: Tracer, items: list, loc) -> Tracer:
    """Slices of an array with symbolic dims (``composites.slice_axis``: a ``cuvil.slice``
    whose symbolic dims keep their run-time size). A symbolic axis is sliced with static
    bounds (``a[:, 1:]``, ``a[:, -2:]``), the sizes they assume checked on each call."""
    ctx = check_context((x,))
    value = x._value
    for dim, (item, size) in enumerate(zip(items, x.shape, strict=True)):
        if item == slice(None):
            continue
        if not isinstance(size, int):
            value = _slice_symbolic_axis(ctx, value, dim, item, size, loc)
            continue
        if not isinstance(item, slice):
            raise unsupported(
                f"an integer index or np.newaxis on an array with symbolic dims {x.shape}; "
                "slice the static axis (`a[:, 1:2]`) instead",
                loc,
            )
        start, stop, step = item.indices(size)
        if step < 0:
            raise unsupported("slicing with a negative step", loc)
        if not range(start, stop, step):
            raise unsupported("slicing that produces an empty array", loc)
        with ctx.builder.at(loc):
            value = composites.slice_axis(ctx.builder, value, dim, start, stop, step)
    return x._alias(value)


def _slice_symbolic_axis(ctx, value, dim: int, item, size, loc):
    """``value`` sliced along its symbolic axis ``dim`` by a slice with static bounds."""
    if not isinstance(item, slice) or (item.step or 1) < 1:
        raise unsupported(
            f"indexing the symbolic axis {dim} (size {size!r}) with {item!r}; a symbolic axis "
            "is taken whole (`:`) or sliced with a positive step (`1:`, `-2:`, `:-1`)",
            loc,
        )
    try:
        with ctx.builder.at(loc):
            return composites.slice_symbolic_axis(ctx.builder, value, dim, item)
    except ValueError as error:
        raise unsupported(str(error), loc) from None


def where(condition, x, y) -> Tracer:
    """``np.where(condition, x, y)`` with broadcasting; a non-bool condition means ``!= 0``."""
    condition, x, y = _operand(condition), _operand(x), _operand(y)
    ctx = check_context((condition, x, y))
    loc = user_location()
    cond = lift(ctx, condition, None, loc)
    if cond.dtype != BOOL:
        cond = binary_ufunc(np.not_equal, cond, 0)
    values = [v.dtype if isinstance(v, Tracer) else v for v in (x, y)]
    dtype = np.result_type(*values)
    if not is_traceable(dtype):
        raise unsupported(f"np.where producing {dtype}", loc)
    tx, ty = lift(ctx, x, dtype, loc), lift(ctx, y, dtype, loc)
    return ctx.emit("cuvil.where", [cond, tx, ty], None, loc)


def full_like(a, fill_value, dtype=None) -> Tracer:
    """A constant with ``a``'s shape (``zeros_like``/``ones_like``/``full_like``)."""
    ctx = check_context((a, fill_value))
    if isinstance(fill_value, Tracer):
        return broadcast_to(cast(fill_value, dtype or a.dtype), a.shape)
    dtype = np.dtype(dtype) if dtype is not None else a.dtype
    return ctx.constant(np.full(a.shape, fill_value, dtype=dtype))
