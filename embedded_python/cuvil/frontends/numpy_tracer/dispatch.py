"""Routes NumPy ufuncs and functions applied to traced arrays to Cuvil IR builders."""

from __future__ import annotations

import functools

import numpy as np

from . import ops as _ops
from .tracer import unsupported

_REDUCE_UFUNCS = {np.add: "sum", np.maximum: "max", np.minimum: "min"}


@functools.cache
def _ufunc_table() -> dict:
    # Built on first use: this module and _ops import each other through _tracer.
    table = {
        np.matmul: _ops.matmul,
        np.square: _ops.square,
        np.reciprocal: _ops.reciprocal,
        np.positive: _ops.copy,
    }
    for ufunc in (*_ops._BINARY, *_ops._COMPARE):
        table[ufunc] = functools.partial(_ops.binary_ufunc, ufunc)
    for ufunc in _ops._UNARY:
        table[ufunc] = functools.partial(_ops.unary_ufunc, ufunc)
    for ufunc in (np.floor_divide, np.remainder, np.fmod):
        table[ufunc] = functools.partial(_ops.division_ufunc, ufunc)
    return table


def array_ufunc(ufunc, method, inputs, kwargs):
    """``Tracer.__array_ufunc__``: a ufunc call (or reduce) on traced operands."""
    out = kwargs.pop("out", None)
    if out is not None and any(o is not None for o in out):
        raise unsupported(f"np.{ufunc.__name__}(..., out=...)")
    if method == "reduce" and ufunc in _REDUCE_UFUNCS:
        return _ufunc_reduce(ufunc, inputs, kwargs)
    if method != "__call__":
        raise unsupported(f"np.{ufunc.__name__}.{method}")
    for key, value in kwargs.items():
        if not (key == "casting" and value == "same_kind"):
            raise unsupported(f"np.{ufunc.__name__}(..., {key}=...)")
    handler = _ufunc_table().get(ufunc)
    if handler is None:
        raise unsupported(f"NumPy ufunc np.{ufunc.__name__}")
    return handler(*inputs)


def _ufunc_reduce(ufunc, inputs, kwargs):
    (array,) = inputs
    axis = kwargs.pop("axis", 0)
    keepdims = kwargs.pop("keepdims", False)
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise unsupported(f"np.{ufunc.__name__}.reduce(..., {next(iter(kwargs))}=...)")
    return _ops.reduce(_REDUCE_UFUNCS[ufunc], array, axis, keepdims, dtype)


# ----- NumPy functions ---------------------------------------------------------------


def _flag(value) -> bool:
    return False if value is np._NoValue else bool(value)


def _reduction(kind):
    def handler(a, axis=None, dtype=None, out=None, keepdims=False, **extra):
        _ops.reject_out(out, f"np.{kind}")
        _reject_extra(kind, extra)
        return _ops.reduce(kind, a, axis, _flag(keepdims), dtype)

    return handler


def _extremum(kind):
    def handler(a, axis=None, out=None, keepdims=False, **extra):
        _ops.reject_out(out, f"np.{kind}")
        _reject_extra(kind, extra)
        return _ops.reduce(kind, a, axis, _flag(keepdims))

    return handler


def _reject_extra(name, extra):
    for key, value in extra.items():
        if value is not np._NoValue:
            raise unsupported(f"np.{name}(..., {key}=...)")


def _var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **extra):
    _ops.reject_out(out, "np.var")
    _reject_extra("var", extra)
    return _ops.variance(_lift(a), axis, dtype, ddof, _flag(keepdims))


def _std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **extra):
    _ops.reject_out(out, "np.std")
    _reject_extra("std", extra)
    return _ops.sqrt(_ops.variance(_lift(a), axis, dtype, ddof, _flag(keepdims)))


def _lift(a):
    from .tracer import check_context

    return _ops.lift(check_context((a,)), _ops._operand(a))


def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise unsupported(f"np.reshape(order={order!r})")
    shape = shape if shape is not None else newshape
    return _ops.reshape(_lift(a), shape, copy=bool(copy))


def _transpose(a, axes=None):
    return _ops.transpose(_lift(a), axes)


def _where(condition, x=None, y=None):
    if x is None or y is None:
        raise unsupported("np.where with one argument (data-dependent output shape)")
    return _ops.where(condition, x, y)


def _concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    _ops.reject_out(out, "np.concatenate")
    return _ops.concatenate(arrays, axis, dtype)


def _stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    _ops.reject_out(out, "np.stack")
    result = _ops.stack(arrays, axis)
    return result if dtype is None else _ops.cast(result, dtype)


def _clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue):
    _ops.reject_out(out, "np.clip")
    lo = a_min if a_min is not np._NoValue else min
    hi = a_max if a_max is not np._NoValue else max
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    return _ops.clip(a, lo, hi)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw):
    if shape is not None:
        raise unsupported("np.full_like(..., shape=...)")
    return _ops.full_like(_lift(a), fill_value, dtype)


def _zeros_like(a, dtype=None, order="K", subok=True, shape=None, **kw):
    return _full_like(a, 0, dtype, shape=shape)


def _ones_like(a, dtype=None, order="K", subok=True, shape=None, **kw):
    return _full_like(a, 1, dtype, shape=shape)


def _astype(x, dtype, /, *, copy=True, device=None):
    return _lift(x).astype(dtype, copy=copy)


def _copy(a, order="K", subok=False):
    return _ops.copy(_lift(a))


def _shape(a):
    return _lift(a).shape


def _ndim(a):
    return _lift(a).ndim


def _size(a, axis=None):
    t = _lift(a)
    return t.size if axis is None else t.shape[axis]


def take(a, indices, axis=None, out=None, mode="raise"):
    _ops.reject_out(out, "np.take")
    if mode != "raise":
        raise unsupported(f"np.take(..., mode={mode!r}) (the default mode is supported)")
    return _ops.take(a, indices, axis)


def _dot(a, b, out=None):
    _ops.reject_out(out, "np.dot")
    return _ops.dot(a, b)


@functools.cache
def _function_table() -> dict:
    return {
        np.sum: _reduction("sum"),
        np.mean: _reduction("mean"),
        np.max: _extremum("max"),
        np.amax: _extremum("max"),
        np.min: _extremum("min"),
        np.amin: _extremum("min"),
        np.var: _var,
        np.std: _std,
        np.reshape: _reshape,
        np.transpose: _transpose,
        np.swapaxes: lambda a, axis1, axis2: _ops.swapaxes(_lift(a), axis1, axis2),
        np.moveaxis: lambda a, source, destination: _ops.moveaxis(_lift(a), source, destination),
        np.squeeze: lambda a, axis=None: _ops.squeeze(_lift(a), axis),
        np.expand_dims: lambda a, axis: _ops.expand_dims(_lift(a), axis),
        np.ravel: lambda a, order="C": _reshape(a, (-1,), order),
        np.broadcast_to: lambda array, shape, subok=False: _ops.broadcast_to(array, shape),
        np.concatenate: _concatenate,
        np.stack: _stack,
        np.where: _where,
        np.take: take,
        np.dot: _dot,
        np.clip: _clip,
        np.full_like: _full_like,
        np.zeros_like: _zeros_like,
        np.ones_like: _ones_like,
        np.copy: _copy,
        np.shape: _shape,
        np.ndim: _ndim,
        np.size: _size,
        np.astype: _astype,
        np.round: _ops.around,
        np.around: _ops.around,
    }


def _public_name(func) -> str:
    """``np.einsum``, ``np.linalg.norm``: how users spell a NumPy function."""
    module = getattr(func, "__module__", None) or "numpy"
    parts = module.split(".")
    if parts[0] != "numpy":
        return f"{module}.{func.__name__}"
    # Private implementation modules (numpy._core.*, numpy.lib.*) re-export into np.
    public = [p for p in parts[1:2] if not p.startswith("_") and p not in ("core", "lib")]
    return ".".join(["np", *public, func.__name__])


def array_function(func, args, kwargs):
    """``Tracer.__array_function__``: a NumPy function called with traced arguments."""
    handler = _function_table().get(func)
    if handler is None:
        raise unsupported(f"NumPy function {_public_name(func)}")
    return handler(*args, **kwargs)


__all__ = ["array_ufunc", "array_function", "take"]
