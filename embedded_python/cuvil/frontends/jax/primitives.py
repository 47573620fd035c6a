"""JAX primitives onto cuvil ops: one handler per primitive, registered in ``PRIMITIVES``.

A handler receives the :class:`~.importer.JaxprImporter`, the equation, its
inputs (IR Values or NumPy arrays for known values) and the equation's params
as keywords, and returns the result (a list for multi-result primitives).
Shapes come from the ops' rules; JAX's own output types serve only where the
result type is the op's parameter (reshape, broadcast, cast).
"""

from __future__ import annotations

import numpy as np

from .. import composites as cc
from ..base import compute_dtype, op_registrar

__all__ = ["PRIMITIVES"]

PRIMITIVES: dict = {}


primitive = op_registrar(PRIMITIVES)


def _dtype_name(dtype) -> str:
    """The dtype-table name ``dtype`` is computed in (float16 in float32)."""
    return compute_dtype(np.dtype(dtype).name)


# ----- elementwise ----------------------------------------------------------------------

_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min"}
_BINARY.update({"pow": "pow", "add_any": "add", "rem": "rem"})
_UNARY = {
    "neg": "neg",
    "abs": "abs",
    "exp": "exp",
    "log": "log",
    "tanh": "tanh",
    "logistic": "sigmoid",
    "sqrt": "sqrt",
    "rsqrt": "rsqrt",
    "erf": "erf",
    "sin": "sin",
    "cos": "cos",
    "floor": "floor",
    "ceil": "ceil",
}
_COMPARE = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
_IDENTITY = ("stop_gradient", "copy", "copy_p", "reduce_precision", "sharding_constraint")


def _binary(imp, eqn, ins, **_):
    op = _BINARY[eqn.primitive.name]
    a, b = (imp.value(x) for x in ins)
    if op == "div":  # lax.div of integers rounds toward zero
        return cc.truncate_divide(imp.b, a, b)
    return imp.b.op(f"cuvil.{op}", [a, b])


@primitive("round")
def _round(imp, eqn, ins, *, rounding_method=0, **_):
    """``lax.round``: ties to even (``jnp.round``) or away from zero (the default)."""
    b, x = imp.b, imp.value(ins[0])
    if int(rounding_method) == 1:
        return b.op("cuvil.round", [x])
    # Away from zero: trunc(x + copysign(0.5, x)), exact for |x| < 2**23.
    half = cc.scalar(b, 0.5, x)
    negative = cc.compare(b, x, cc.scalar(b, 0, x), "lt")
    shifted = b.op(
        "cuvil.where", [negative, b.op("cuvil.sub", [x, half]), b.op("cuvil.add", [x, half])]
    )
    return b.op("cuvil.trunc", [shifted])


def _unary(imp, eqn, ins, **_):
    return imp.b.op(f"cuvil.{_UNARY[eqn.primitive.name]}", [imp.value(ins[0])])


def _compare(imp, eqn, ins, **_):
    a, b = (imp.value(x) for x in ins)
    return cc.compare(imp.b, a, b, _COMPARE[eqn.primitive.name])


def _identity(imp, eqn, ins, **_):
    return imp.value(ins[0])


for _name in _BINARY:
    PRIMITIVES[_name] = _binary
for _name in _UNARY:
    PRIMITIVES[_name] = _unary
for _name in _COMPARE:
    PRIMITIVES[_name] = _compare
for _name in _IDENTITY:
    PRIMITIVES[_name] = _identity


@primitive("optimization_barrier")
def _barrier(imp, eqn, ins, **_):
    return [imp.value(x) for x in ins]


@primitive("square")
def _square(imp, eqn, ins, **_):
    x = imp.value(ins[0])
    return imp.b.op("cuvil.mul", [x, x])


@primitive("integer_pow")
def _integer_pow(imp, eqn, ins, *, y, **_):
    x = imp.value(ins[0])
    b = imp.b
    if y == 0:
        return cc.broadcast_to(b, cc.scalar(b, 1, x), x.type.shape)
    result, base, n = None, x, abs(int(y))
    while n:  # square-and-multiply, as XLA expands it
        if n & 1:
            result = base if result is None else b.op("cuvil.mul", [result, base])
        n >>= 1
        if n:
            base = b.op("cuvil.mul", [base, base])
    return b.op("cuvil.div", [cc.scalar(b, 1, x), result]) if y < 0 else result


@primitive("exp2")
def _exp2(imp, eqn, ins, **_):
    x = imp.value(ins[0])
    return imp.b.op("cuvil.exp", [imp.b.op("cuvil.mul", [x, cc.scalar(imp.b, np.log(2.0), x)])])


@primitive("log1p")
def _log1p(imp, eqn, ins, **_):
    return cc.log1p(imp.b, imp.value(ins[0]))


@primitive("expm1")
def _expm1(imp, eqn, ins, **_):
    return cc.expm1(imp.b, imp.value(ins[0]))


@primitive("erfc")
def _erfc(imp, eqn, ins, **_):
    x = imp.value(ins[0])
    return imp.b.op("cuvil.sub", [cc.scalar(imp.b, 1, x), imp.b.op("cuvil.erf", [x])])


@primitive("erf_inv")
def _erf_inv(imp, eqn, ins, **_):
    return cc.erf_inv(imp.b, imp.value(ins[0]))


@primitive("rev")
def _rev(imp, eqn, ins, *, dimensions, **_):
    return cc.flip(imp.b, imp.value(ins[0]), dimensions)


@primitive("cumsum")
def _cumsum(imp, eqn, ins, *, axis, reverse=False, **_):
    return cc.cumsum(imp.b, imp.value(ins[0]), axis, reverse=reverse)


@primitive("sign")
def _sign(imp, eqn, ins, **_):
    b, x = imp.b, imp.value(ins[0])
    zero, one = cc.scalar(b, 0, x), cc.scalar(b, 1, x)
    negative = b.op("cuvil.where", [cc.compare(b, x, zero, "lt"), cc.scalar(b, -1, x), zero])
    return b.op("cuvil.where", [cc.compare(b, x, zero, "gt"), one, negative])


@primitive("clamp")
def _clamp(imp, eqn, ins, **_):
    lo, x, hi = (imp.value(v) for v in ins)
    return imp.b.op("cuvil.min", [imp.b.op("cuvil.max", [x, lo]), hi])


@primitive("not", "and", "or")
def _logical(imp, eqn, ins, **_):
    b = imp.b
    values = [imp.value(v) for v in ins]
    if values[0].type.dtype != "bool":
        raise imp.unsupported(f"bitwise '{eqn.primitive.name}' on {values[0].type.dtype}")
    false, true = cc.scalar(b, False, "bool"), cc.scalar(b, True, "bool")
    if eqn.primitive.name == "not":
        return cc.compare(b, values[0], false, "eq")
    x, y = values
    if eqn.primitive.name == "and":
        return b.op("cuvil.where", [x, y, false])
    return b.op("cuvil.where", [x, true, y])


@primitive("select_n")
def _select_n(imp, eqn, ins, **_):
    b = imp.b
    which, *cases = [imp.value(v) for v in ins]
    if which.type.dtype == "bool":
        return b.op("cuvil.where", [which, cases[1], cases[0]])
    result = cases[0]
    for index, case in enumerate(cases[1:], start=1):
        hit = cc.compare(b, which, cc.scalar(b, index, which), "eq")
        result = b.op("cuvil.where", [hit, case, result])
    return result


@primitive("convert_element_type")
def _convert(imp, eqn, ins, *, new_dtype, **_):
    return cc.cast(imp.b, imp.value(ins[0]), _dtype_name(new_dtype))


# ----- shapes -----------------------------------------------------------------------------


@primitive("reshape", "squeeze", "expand_dims")
def _reshape(imp, eqn, ins, **_):
    shape = eqn.outvars[0].aval.shape
    symbolic = [d for d in shape if not isinstance(d, int)]
    # Several symbolic sizes (B, T of a [B*T, C] split back) are given, not left to be derived.
    sizes = [imp.size(d) for d in symbolic] if len(symbolic) > 1 else ()
    return cc.reshape(imp.b, imp.value(ins[0]), imp.out_type().shape, sizes)


@primitive("broadcast_in_dim")
def _broadcast_in_dim(imp, eqn, ins, *, shape, broadcast_dimensions, **_):
    x = imp.value(ins[0])
    placed = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        placed[dst] = x.type.shape[src]
    x = cc.reshape(imp.b, x, placed)
    if all(isinstance(d, int) for d in shape):
        return cc.broadcast_to(imp.b, x, shape)
    # A symbolic size the input has there is its own; one it broadcasts to is read at run time.
    own = dict(zip(broadcast_dimensions, eqn.invars[0].aval.shape))
    sizes = [
        int(d) if isinstance(d, int) else 1 if str(own.get(axis)) == str(d) else imp.size(d)
        for axis, d in enumerate(shape)
    ]
    return cc.broadcast_to_sizes(imp.b, x, sizes)


@primitive("transpose")
def _transpose(imp, eqn, ins, *, permutation, **_):
    return cc.transpose(imp.b, imp.value(ins[0]), permutation)


@primitive("concatenate")
def _concatenate(imp, eqn, ins, *, dimension, **_):
    return cc.concat(imp.b, [imp.value(v) for v in ins], dimension)


@primitive("stack")
def _stack(imp, eqn, ins, *, axis, **_):
    values = [imp.value(v) for v in ins]
    shape = list(values[0].type.shape)
    shape.insert(cc.normalize_axis(axis, len(shape) + 1), 1)
    return cc.concat(imp.b, [cc.reshape(imp.b, v, shape) for v in values], axis)


@primitive("slice")
def _slice(imp, eqn, ins, *, start_indices, limit_indices, strides, **_):
    x = imp.value(ins[0])
    steps = strides or (1,) * len(start_indices)
    attrs = {"start": start_indices, "limit": limit_indices, "step": steps}
    return imp.b.op("cuvil.slice", [x], attrs)


@primitive("dynamic_slice")
def _dynamic_slice(imp, eqn, ins, *, slice_sizes, **_):
    x, *starts = ins
    if any(not isinstance(s, np.ndarray) for s in starts):
        raise imp.unsupported("dynamic_slice with start indices computed at run time")
    x = imp.value(x)
    # XLA clamps each start so that the slice stays inside the operand.
    begin = [int(np.clip(int(s), 0, d - n)) for s, d, n in zip(starts, x.type.shape, slice_sizes)]
    attrs = {
        "start": begin,
        "limit": [s + n for s, n in zip(begin, slice_sizes)],
        "step": [1] * len(begin),
    }
    return imp.b.op("cuvil.slice", [x], attrs)


@primitive("split")
def _split(imp, eqn, ins, *, sizes, axis, **_):
    x, start, parts = imp.value(ins[0]), 0, []
    for size in sizes:
        parts.append(cc.slice_axis(imp.b, x, axis, start, start + size))
        start += size
    return parts


@primitive("pad")
def _pad(imp, eqn, ins, *, padding_config, **_):
    operand, fill = ins
    if not isinstance(fill, np.ndarray):
        raise imp.unsupported("pad with a padding value computed at run time")
    if any(interior for _, _, interior in padding_config):
        raise imp.unsupported("pad with interior padding")
    x = imp.value(operand)
    for axis, (lo, hi, _) in enumerate(padding_config):  # negative padding crops
        x = cc.slice_axis(imp.b, x, axis, max(-lo, 0), x.type.shape[axis] - max(-hi, 0))
    pads = [(max(lo, 0), max(hi, 0)) for lo, hi, _ in padding_config]
    return cc.pad(imp.b, x, pads, fill.item())


@primitive("iota")
def _iota(imp, eqn, ins, *, dtype, shape, dimension, **_):
    # Normally folded; kept for iotas JAX would not evaluate eagerly.
    values = np.arange(shape[dimension], dtype=dtype)
    axes = [-1 if d == dimension else 1 for d in range(len(shape))]
    return imp.value(np.broadcast_to(values.reshape(axes), shape).copy())


# ----- reductions, contractions -----------------------------------------------------------


@primitive("reduce_sum", "reduce_max", "reduce_min")
def _reduce(imp, eqn, ins, *, axes, **_):
    x = imp.value(ins[0])
    if not axes:
        return x
    return imp.b.op(f"cuvil.{eqn.primitive.name}", [x], {"axes": tuple(sorted(axes))})


@primitive("argmax", "argmin")
def _argreduce(imp, eqn, ins, *, axes, index_dtype, **_):
    kind = "max" if eqn.primitive.name == "argmax" else "min"
    return cc.arg_reduce(imp.b, imp.value(ins[0]), axes[0], kind, _dtype_name(index_dtype))


@primitive("dot_general")
def _dot_general(imp, eqn, ins, *, dimension_numbers, preferred_element_type=None, **_):
    out = imp.out_type().dtype
    lhs, rhs = (cc.cast(imp.b, imp.value(x), out) for x in ins)
    contract, batch = dimension_numbers
    return cc.dot_general(imp.b, lhs, rhs, contract, batch)


@primitive("conv_general_dilated")
def _conv(imp, eqn, ins, **params):
    dims = params["dimension_numbers"]
    rank = len(dims.lhs_spec)
    if rank not in (3, 4):
        raise imp.unsupported(f"a {rank - 2}-D convolution (Cuvil has conv2d)")
    if params["batch_group_count"] != 1:
        raise imp.unsupported("a batch-grouped convolution")
    padding = [tuple(p) for p in params["padding"]]
    lhs_dilation = list(params["lhs_dilation"])
    x, w = (imp.value(v) for v in ins)
    layouts = [tuple(dims.lhs_spec), tuple(dims.rhs_spec), tuple(dims.out_spec)]
    strides, dilations = list(params["window_strides"]), list(params["rhs_dilation"])
    if rank == 3:  # a 1-D convolution is a 2-D one over a trailing unit dimension
        x = cc.reshape(imp.b, x, (*x.type.shape, 1))
        w = cc.reshape(imp.b, w, (*w.type.shape, 1))
        layouts = [layout + (3,) for layout in layouts]
        strides, dilations, padding = strides + [1], dilations + [1], padding + [(0, 0)]
        lhs_dilation = lhs_dilation + [1]
    (top, bottom), (left, right) = padding
    y = cc.conv2d_layout(
        imp.b,
        x,
        w,
        input_layout=layouts[0],
        weight_layout=layouts[1],
        output_layout=layouts[2],
        strides=strides,
        padding=(top, left, bottom, right),
        dilations=dilations,
        groups=params["feature_group_count"],
        lhs_dilation=lhs_dilation,
    )
    return cc.reshape(imp.b, y, imp.out_type().shape)


@primitive("reduce_window_max", "reduce_window_sum")
def _reduce_window(imp, eqn, ins, **params):
    x = imp.value(ins[0])
    window, strides = params["window_dimensions"], params["window_strides"]
    padding = params["padding"]
    if any(d != 1 for d in (*params["base_dilation"], *params["window_dilation"])):
        raise imp.unsupported("a dilated reduce_window")
    spatial = [d for d in range(len(window)) if window[d] > 1 or strides[d] > 1 or any(padding[d])]
    others = [d for d in range(len(window)) if d not in spatial]
    if len(spatial) > 2 or len(window) < 2:
        raise imp.unsupported(f"a reduce_window over {len(spatial)} dimensions (Cuvil pools 2)")
    spatial = sorted(spatial + others[len(others) - (2 - len(spatial)) :])
    kernel = [window[d] for d in spatial]
    (top, bottom), (left, right) = (padding[d] for d in spatial)
    kind = "max" if eqn.primitive.name == "reduce_window_max" else "avg"
    y = cc.pool2d_layout(
        imp.b, x, kind, spatial, kernel, [strides[d] for d in spatial], (top, left, bottom, right)
    )
    if kind == "avg":  # a zero-padded window sum is the padded average times the window
        y = imp.b.op("cuvil.mul", [y, cc.scalar(imp.b, kernel[0] * kernel[1], y)])
    return y


@primitive("gather")
def _gather(imp, eqn, ins, *, dimension_numbers, slice_sizes, **_):
    """``jnp.take`` / embedding lookups: one collapsed axis indexed by a trailing index vector.

    JAX's default ``fill`` mode gives NaN for out-of-range indices where
    ``cuvil.gather`` clamps; in-range (and negative, already wrapped) ones agree.
    """
    data, indices = imp.value(ins[0]), imp.value(ins[1])
    dn, shape = dimension_numbers, data.type.shape
    axis = dn.start_index_map[0] if len(dn.start_index_map) == 1 else None
    batch = len(indices.type.shape) - 1
    expected = tuple(range(axis or 0)) + tuple(range((axis or 0) + batch, len(shape) - 1 + batch))
    if (
        axis is None
        or tuple(dn.collapsed_slice_dims) != (axis,)
        or dn.operand_batching_dims
        or indices.type.shape[-1:] != (1,)
        or tuple(slice_sizes) != shape[:axis] + (1,) + shape[axis + 1 :]
        or tuple(dn.offset_dims) != expected
    ):
        raise imp.unsupported("a gather other than a take along one axis")
    indices = cc.reshape(imp.b, indices, indices.type.shape[:-1])
    return imp.b.op("cuvil.gather", [data, indices], {"axis": axis})
