"""Lowerings of ATen's elementwise math, comparisons, reductions and matrix products.

Result dtypes follow PyTorch's promotion: the node's ``meta["val"]`` (the
FakeTensor export recorded) gives each result's dtype, and operands are cast
to it before the cuvil op; comparisons cast to ``torch.result_type`` of their
operands.
"""

from __future__ import annotations

import numpy as np

from ..._dtypes import is_supported, supported_names
from .. import composites
from ..base import compute_dtype
from ..builder import Value
from . import merged_dims
from .aten import NotComputed, dtype_name, lowers, torch_dtype

SUPPORTED_NAMES = supported_names()

# ----- helpers shared by the lowerings ---------------------------------------------


def compilable(dtype: str) -> bool:
    """Whether Cuvil compiles the dtype-table name ``dtype`` (NumPy has it and it is compiled)."""
    try:
        return is_supported(np.dtype(dtype))
    except TypeError:
        return False


def result_dtype(c) -> str:
    """The dtype-table name the current node's (first) result is computed in (float16 results
    in float32: see ``FLOAT16_POLICY``)."""
    return compute_dtype(dtype_name(c.result_meta().dtype))


def result_shape(c) -> tuple[int, ...]:
    """The static shape of the current node's (first) result."""
    shape = result_dims(c)
    if None in shape:
        raise c.unsupported(
            f"a symbolic result shape {tuple(c.result_meta().shape)} where a static one is "
            "needed; fix: give those dims static sizes"
        )
    return shape


def result_dims(c) -> tuple:
    """The current node's (first) result shape: ints, ``None`` for each symbolic size."""
    return tuple(c.size_of(d) for d in c.result_meta().shape)


def operand(c, x, dtype: str) -> Value:
    """``x`` (a Value, NumPy constant or Python scalar) as an IR value of ``dtype``."""
    if not compilable(dtype):
        raise c.unsupported(f"a {dtype} tensor (Cuvil compiles {SUPPORTED_NAMES})")
    if isinstance(x, Value):
        return composites.cast(c.b, x, dtype)
    if isinstance(x, np.ndarray):
        return c.value(x.astype(dtype, copy=False))
    if isinstance(x, (bool, int, float, np.generic)):
        return composites.scalar(c.b, x, dtype)
    if isinstance(x, merged_dims.Deferred):
        raise c.unsupported(x.reason)
    raise c.unsupported(f"a {type(x).__name__} operand")


def promoted(*values) -> str:
    """PyTorch's result dtype for these operands (``torch.result_type``), as a table name."""
    import torch

    def probe(x):
        if isinstance(x, Value):
            shape = () if not x.type.shape else (1,)
            return torch.empty(shape, dtype=torch_dtype(x.type.dtype))
        if isinstance(x, np.ndarray):
            return torch.empty(() if x.ndim == 0 else (1,), dtype=torch_dtype(x.dtype.name))
        return x

    dtype = None
    probes = [probe(v) for v in values]
    current = probes[0]
    for other in probes[1:]:
        dtype = torch.result_type(current, other)
        current = (
            torch.empty((1,), dtype=dtype)
            if any(isinstance(p, torch.Tensor) and p.dim() for p in (current, other))
            else torch.empty((), dtype=dtype)
        )
    if dtype is None:
        dtype = current.dtype if isinstance(current, torch.Tensor) else torch.float32
    return compute_dtype(dtype_name(dtype))


def unary(c, op: str, x) -> Value:
    """``op`` on ``x`` cast to the result dtype."""
    return c.b.op(op, [operand(c, x, result_dtype(c))])


def binary(c, op: str, x, y) -> Value:
    """``op(x, y)`` with both operands cast to the result dtype."""
    dtype = result_dtype(c)
    return c.b.op(op, [operand(c, x, dtype), operand(c, y, dtype)])


def compare(c, predicate: str, x, y) -> Value:
    dtype = promoted(x, y)
    return composites.compare(c.b, operand(c, x, dtype), operand(c, y, dtype), predicate)


def axes_of(dim, rank: int) -> tuple[int, ...]:
    """Reduction axes from ATen's ``dim`` (``None`` or ``[]`` = all), sorted, non-negative."""
    if dim is None or (isinstance(dim, (list, tuple)) and not dim):
        return tuple(range(rank))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return tuple(sorted({composites.normalize_axis(int(d), rank) for d in dims}))


# ----- elementwise ---------------------------------------------------------------------

_UNARY = {
    "aten.relu": "cuvil.relu",
    "aten.sigmoid": "cuvil.sigmoid",
    "aten.tanh": "cuvil.tanh",
    "aten.erf": "cuvil.erf",
    "aten.exp": "cuvil.exp",
    "aten.log": "cuvil.log",
    "aten.sqrt": "cuvil.sqrt",
    "aten.rsqrt": "cuvil.rsqrt",
    "aten.neg": "cuvil.neg",
    "aten.abs": "cuvil.abs",
    "aten.sin": "cuvil.sin",
    "aten.cos": "cuvil.cos",
}
_ROUNDING = {
    "aten.floor": "cuvil.floor",
    "aten.ceil": "cuvil.ceil",
    "aten.trunc": "cuvil.trunc",
    "aten.round": "cuvil.round",
}


def _unary_lowering(op: str):
    return lambda c, self, **_: unary(c, op, self)


for _name, _op in _UNARY.items():
    lowers(_name)(_unary_lowering(_op))


@lowers("aten.erfinv")
def _erfinv(c, self, **_):
    return composites.erf_inv(c.b, operand(c, self, result_dtype(c)))


@lowers(*_ROUNDING)
def _rounding(c, self, decimals=0, **_):
    """floor/ceil/trunc/round (ties to even; ``decimals`` like ``torch.round``); ints unchanged."""
    x = operand(c, self, result_dtype(c))
    if not x.type.dtype.startswith("float"):
        return x
    return composites.round_decimals(c.b, x, int(decimals), _ROUNDING[c.op])


@lowers("aten.add", "aten.sub")
def _add_sub(c, self, other, alpha=1, **_):
    op = "cuvil.add" if c.op.startswith("aten.add") else "cuvil.sub"
    dtype = result_dtype(c)
    y = operand(c, other, dtype)
    if alpha != 1:
        y = c.b.op("cuvil.mul", [y, operand(c, alpha, dtype)])
    return c.b.op(op, [operand(c, self, dtype), y])


@lowers("aten.rsub")
def _rsub(c, self, other, alpha=1, **_):
    dtype = result_dtype(c)
    x = operand(c, self, dtype)
    if alpha != 1:
        x = c.b.op("cuvil.mul", [x, operand(c, alpha, dtype)])
    return c.b.op("cuvil.sub", [operand(c, other, dtype), x])


@lowers("aten.mul")
def _mul(c, self, other, **_):
    return binary(c, "cuvil.mul", self, other)


@lowers("aten.div")
def _div(c, self, other, rounding_mode=None, **_):
    if rounding_mode is None:
        return binary(c, "cuvil.div", self, other)
    dtype = result_dtype(c)
    x, y = operand(c, self, dtype), operand(c, other, dtype)
    if rounding_mode == "floor":
        return composites.floor_divide(c.b, x, y)
    if rounding_mode != "trunc":
        raise c.unsupported(f"aten.div with rounding_mode={rounding_mode!r}")
    if dtype.startswith("float"):
        return c.b.op("cuvil.trunc", [c.b.op("cuvil.div", [x, y])])
    return composites.truncate_divide(c.b, x, y)


@lowers("aten.floor_divide", "aten.remainder", "aten.fmod")
def _division(c, self, other, **_):
    dtype = result_dtype(c)
    x, y = operand(c, self, dtype), operand(c, other, dtype)
    if "floor_divide" in c.op:
        return composites.floor_divide(c.b, x, y)
    if "remainder" in c.op:
        return composites.remainder(c.b, x, y)
    return c.b.op("cuvil.rem", [x, y])


@lowers("aten.reciprocal")
def _reciprocal(c, self, **_):
    return binary(c, "cuvil.div", 1.0, self)


@lowers("aten.pow")
def _pow(c, self, exponent, **_):
    if not isinstance(exponent, Value) and np.ndim(exponent) == 0 and isinstance(self, Value):
        if float(exponent) == 2.0:
            x = operand(c, self, result_dtype(c))
            return c.b.op("cuvil.mul", [x, x])
        if float(exponent) == 0.5:
            return unary(c, "cuvil.sqrt", self)
        if float(exponent) == 1.0:
            return operand(c, self, result_dtype(c))
    return binary(c, "cuvil.pow", self, exponent)


@lowers("aten.maximum", "aten.minimum")
def _max_min(c, self, other, **_):
    op = "cuvil.max" if "maximum" in c.op else "cuvil.min"
    return binary(c, op, self, other)


@lowers("aten.clamp", "aten.clamp_min", "aten.clamp_max", "aten.hardtanh")
def _clamp(c, self, min=None, max=None, min_val=None, max_val=None, **_):
    name = c.op
    lo = min_val if name.startswith("aten.hardtanh") else min
    hi = max_val if name.startswith("aten.hardtanh") else max
    if name.startswith("aten.clamp_max"):
        lo, hi = None, min if max is None else max
    dtype = result_dtype(c)
    x = operand(c, self, dtype)
    if isinstance(lo, (Value, np.ndarray)) or isinstance(hi, (Value, np.ndarray)):
        # Tensor bounds: max then min, broadcasting like the binary ops.
        x = x if lo is None else c.b.op("cuvil.max", [x, operand(c, lo, dtype)])
        return x if hi is None else c.b.op("cuvil.min", [x, operand(c, hi, dtype)])
    return composites.clip(c.b, x, lo, hi)


@lowers("aten.gelu")
def _gelu(c, self, approximate="none", **_):
    return composites.gelu(c.b, operand(c, self, result_dtype(c)), approximate)


@lowers("aten.silu")
def _silu(c, self, **_):
    return composites.silu(c.b, operand(c, self, result_dtype(c)))


@lowers("aten.hardswish")
def _hardswish(c, self, **_):
    return composites.hardswish(c.b, operand(c, self, result_dtype(c)))


@lowers("aten.hardsigmoid")
def _hardsigmoid(c, self, **_):
    return composites.hardsigmoid(c.b, operand(c, self, result_dtype(c)))


@lowers("aten.leaky_relu")
def _leaky_relu(c, self, negative_slope=0.01, **_):
    return composites.leaky_relu(c.b, operand(c, self, result_dtype(c)), float(negative_slope))


@lowers("aten.where")
def _where(c, condition, self, other, **_):
    dtype = result_dtype(c)
    cond = operand(c, condition, "bool")
    return c.b.op("cuvil.where", [cond, operand(c, self, dtype), operand(c, other, dtype)])


@lowers("aten.masked_fill")
def _masked_fill(c, self, mask, value, **_):
    dtype = result_dtype(c)
    cond = operand(c, mask, "bool")
    return c.b.op("cuvil.where", [cond, operand(c, value, dtype), operand(c, self, dtype)])


_COMPARE = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}


def _compare_lowering(predicate: str):
    return lambda c, self, other, **_: compare(c, predicate, self, other)


for _name, _predicate in _COMPARE.items():
    lowers(f"aten.{_name}")(_compare_lowering(_predicate))


@lowers("aten.logical_not", "aten.bitwise_not")
def _not(c, self, **_):
    if c.op.startswith("aten.bitwise_not") and not (
        isinstance(self, Value) and self.type.dtype == "bool"
    ):
        raise c.unsupported("bitwise_not of an integer tensor")
    return compare(c, "eq", operand(c, self, "bool"), False)


@lowers("aten.logical_and", "aten.bitwise_and", "aten.logical_or", "aten.bitwise_or")
def _and_or(c, self, other, **_):
    name = c.op
    if name.startswith("aten.bitwise") and promoted(self, other) != "bool":
        raise c.unsupported(f"{name} of integer tensors")
    x, y = operand(c, self, "bool"), operand(c, other, "bool")
    if "and" in name:
        return c.b.op("cuvil.where", [x, y, operand(c, False, "bool")])
    return c.b.op("cuvil.where", [x, operand(c, True, "bool"), y])


# ----- casts and identities ------------------------------------------------------------------


@lowers(
    "aten._to_copy",
    "aten.clone",
    "aten.alias",
    "aten.detach",
    "aten.contiguous",
    "aten.lift_fresh_copy",
    "aten.to",
    "aten.type_as",
)
def _copy(c, self, **_):
    return operand(c, self, result_dtype(c))


@lowers("aten.dropout", "aten.native_dropout", "aten.feature_dropout")
def _dropout(c, input, p=0.5, train=None, **_):
    if train:
        raise c.unsupported(f"{c.op} in training mode (train=True)")
    x = operand(c, input, result_dtype(c))
    if c.op.startswith("aten.native_dropout"):
        return (x, NotComputed("the mask of native_dropout"))
    return x


# ----- reductions --------------------------------------------------------------------------


def _reduce(c, op: str, x, dim, keepdim, dtype: str):
    x = operand(c, x, dtype)
    axes = axes_of(dim, len(x.type.shape))
    if not x.type.shape:
        return x
    return c.b.op(op, [x], {"axes": axes, "keepdims": bool(keepdim)})


@lowers("aten.sum")
def _sum(c, self, dim=None, keepdim=False, **_):
    return _reduce(c, "cuvil.reduce_sum", self, dim, keepdim, result_dtype(c))


@lowers("aten.mean")
def _mean(c, self, dim=None, keepdim=False, **_):
    return _reduce(c, "cuvil.reduce_mean", self, dim, keepdim, result_dtype(c))


@lowers("aten.amax", "aten.amin")
def _amax_amin(c, self, dim=(), keepdim=False, **_):
    op = "cuvil.reduce_max" if "amax" in c.op else "cuvil.reduce_min"
    return _reduce(c, op, self, dim, keepdim, result_dtype(c))


@lowers("aten.any", "aten.all")
def _any_all(c, self, dim=None, keepdim=False, **_):
    # Booleans reduce as 0/1 integers: any is max, all is min.
    op = "cuvil.reduce_max" if "any" in c.op else "cuvil.reduce_min"
    flags = composites.cast(c.b, operand(c, self, "bool"), "int32")
    reduced = _reduce(c, op, flags, dim, keepdim, "int32")
    return compare(c, "ne", reduced, np.zeros((), np.int32))


# ----- matrix products ------------------------------------------------------------------------


@lowers("aten.mm", "aten.bmm", "aten.matmul")
def _matmul(c, self, other=None, mat2=None, **_):
    dtype = result_dtype(c)
    other = mat2 if other is None else other
    unmerged = merged_dims.matmul_unmerged(c, self, other, lambda v: operand(c, v, dtype))
    if unmerged is not None:
        return merged_dims.merged_result(c, *unmerged, result_dims(c))
    return composites.matmul(c.b, operand(c, self, dtype), operand(c, other, dtype))


@lowers("aten.addmm", "aten.baddbmm")
def _addmm(c, self, mat1, mat2, beta=1, alpha=1, **_):
    dtype = result_dtype(c)
    unmerged = merged_dims.matmul_unmerged(c, mat1, mat2, lambda v: operand(c, v, dtype))
    if unmerged is not None:
        product, dims = unmerged
        product = _scaled_plus(c, product, operand(c, self, dtype), alpha, beta, dtype)
        return merged_dims.merged_result(c, product, dims, result_dims(c))
    a, w, bias = (operand(c, v, dtype) for v in (mat1, mat2, self))
    if len(a.type.shape) == 2 and len(w.type.shape) == 2:
        return composites.gemm(c.b, a, w, bias, alpha=float(alpha), beta=float(beta))
    return _scaled_plus(c, c.b.op("cuvil.matmul", [a, w]), bias, alpha, beta, dtype)


def _scaled_plus(c, y: Value, bias: Value, alpha, beta, dtype: str) -> Value:
    """``alpha * y + beta * bias`` (addmm's epilogue), skipping the unit factors."""
    if alpha != 1:
        y = c.b.op("cuvil.mul", [y, operand(c, alpha, dtype)])
    if beta == 0:
        return y
    if beta != 1:
        bias = c.b.op("cuvil.mul", [bias, operand(c, beta, dtype)])
    return c.b.op("cuvil.add", [y, bias])


@lowers("aten.linear")
def _linear(c, input, weight, bias=None, **_):
    dtype = result_dtype(c)
    b = None if bias is None else operand(c, bias, dtype)
    return composites.linear(c.b, operand(c, input, dtype), operand(c, weight, dtype), b)


# ----- further elementwise ops and index reductions ---------------------------------------------


@lowers("aten.elu")
def _elu(c, self, alpha=1.0, scale=1.0, input_scale=1.0, **_):
    if input_scale != 1:
        raise c.unsupported(f"aten.elu with input_scale={input_scale}")
    x = operand(c, self, result_dtype(c))
    return composites.elu(c.b, x, float(alpha), float(scale))


@lowers("aten.log1p", "aten.expm1")
def _log1p_expm1(c, self, **_):
    x = operand(c, self, result_dtype(c))
    return (composites.log1p if c.op == "aten.log1p" else composites.expm1)(c.b, x)


@lowers("aten.sign")
def _sign(c, self, **_):
    dtype = result_dtype(c)
    x = operand(c, self, dtype)
    zero, one = operand(c, 0, dtype), operand(c, 1, dtype)
    positive, negative = compare(c, "gt", x, zero), compare(c, "lt", x, zero)
    minus = c.b.op("cuvil.neg", [one])
    return c.b.op("cuvil.where", [positive, one, c.b.op("cuvil.where", [negative, minus, zero])])


@lowers("aten.var")
def _var(c, self, dim=None, correction=None, keepdim=False, unbiased=True, **_):
    dtype = result_dtype(c)
    x = operand(c, self, dtype)
    axes = axes_of(dim, len(x.type.shape))
    count = int(np.prod([x.type.shape[a] for a in axes]))
    correction = (1 if unbiased else 0) if correction is None else correction
    mean = c.b.op("cuvil.reduce_mean", [x], {"axes": axes, "keepdims": True})
    diff = c.b.op("cuvil.sub", [x, mean])
    total = _reduce(c, "cuvil.reduce_sum", c.b.op("cuvil.mul", [diff, diff]), dim, keepdim, dtype)
    return c.b.op("cuvil.div", [total, operand(c, max(count - float(correction), 0.0), dtype)])


def _arg_extreme(c, x: Value, dim, keepdim, largest: bool) -> Value:
    """The first index of the maximum (minimum) along ``dim`` (all of ``x`` flattened if None)."""
    if dim is None:
        x, dim = composites.reshape(c.b, x, (-1,)), 0
    index = composites.arg_reduce(c.b, x, int(dim), "max" if largest else "min", "int64")
    return composites.reshape(c.b, index, result_shape(c))


@lowers("aten.argmax", "aten.argmin")
def _argmax(c, self, dim=None, keepdim=False, **_):
    x = operand(c, self, promoted(self))
    return _arg_extreme(c, x, dim, keepdim, largest=c.op == "aten.argmax")


@lowers("aten.max", "aten.min")
def _max_min_dim(c, self, dim=None, keepdim=False, other=None, **_):
    largest = c.op == "aten.max"
    if other is not None:
        return binary(c, "cuvil.max" if largest else "cuvil.min", self, other)
    op = "cuvil.reduce_max" if largest else "cuvil.reduce_min"
    x = operand(c, self, promoted(self))
    values = _reduce(c, op, x, dim, keepdim, x.type.dtype)
    if dim is None:
        return values
    return (values, _arg_extreme(c, x, dim, keepdim, largest))
