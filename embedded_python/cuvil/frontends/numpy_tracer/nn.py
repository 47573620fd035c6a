"""Parameter normalization and IR construction for the neural-network ops.

Output shapes and shape checks come from the ops' shape rules in the dialect;
the helpers at the top normalize parameters (shared with the NumPy
implementations in ``cuvil._eager``).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from ..._dtypes import is_float
from ..._errors import TraceError
from ..._source import user_location
from ..builder import TensorType, infer_result_type
from .ops import _normalize_axis, _operand, _require_float, broadcast_to, lift
from .tracer import Tracer, check_context, unsupported

# ----- parameters (shared with the NumPy implementations) --------------------------


def pair(value, name: str) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; ``(2, 3)`` stays; each entry must be a positive int."""
    if isinstance(value, (int, np.integer)):
        result = (int(value), int(value))
    else:
        result = tuple(operator.index(v) for v in value)
    if len(result) != 2 or any(v < 1 for v in result):
        raise ValueError(f"{name} must be a positive int or a pair of positive ints, got {value!r}")
    return result


def padding4(value) -> tuple[int, int, int, int]:
    """Padding as ``(top, left, bottom, right)`` from an int, ``(ph, pw)`` or a 4-tuple."""
    if isinstance(value, (int, np.integer)):
        result = (int(value),) * 4
    else:
        values = tuple(operator.index(v) for v in value)
        if len(values) == 2:
            result = (values[0], values[1], values[0], values[1])
        elif len(values) == 4:
            result = values
        else:
            raise ValueError(f"padding must have 1, 2 or 4 entries, got {value!r}")
    if any(v < 0 for v in result):
        raise ValueError(f"padding must be non-negative, got {value!r}")
    return result


def check_shapes(op: str, operands: Sequence[np.ndarray], attributes: dict) -> tuple:
    """The result shape of ``op`` on these arrays, by the op's shape rule (the eager path).

    Raises :class:`cuvil.TraceError` naming the shapes and the caller's line.
    """
    types = [TensorType.of(np.shape(a), np.asarray(a).dtype) for a in operands]
    return infer_result_type(op, types, attributes, user_location()).shape


def check_pool_padding(op, kernel, padding) -> None:
    """Padding larger than half the window would create windows with no input element."""
    top, left, bottom, right = padding
    if max(top, bottom) > kernel[0] // 2 or max(left, right) > kernel[1] // 2:
        raise ValueError(f"{op}: padding {padding} must be at most half the kernel {kernel}")


def check_dropout_ratio(ratio) -> float:
    ratio = float(ratio)
    if not 0.0 <= ratio < 1.0:
        raise ValueError(f"dropout ratio must be in [0, 1), got {ratio}")
    return ratio


# ----- traced ops ---------------------------------------------------------------


def _float_operands(ctx, values, loc) -> list[Tracer]:
    """Lift operands to one common float dtype (NumPy promotion; ints become float64)."""
    values = [_operand(v) for v in values]
    dtypes = [
        np.dtype(v.dtype) if isinstance(v, (Tracer, np.ndarray, np.generic)) else v for v in values
    ]
    dtype = np.result_type(*dtypes)
    if not is_float(dtype):
        dtype = np.dtype(np.float64)
    return [lift(ctx, v, dtype, loc) for v in values]


def softmax(x, axis=-1) -> Tracer:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``."""
    ctx = check_context((x,))
    loc = user_location()
    t = _require_float(lift(ctx, _operand(x), None, loc), loc)
    axis = _normalize_axis(axis, t.ndim)
    return ctx.emit("cuvil.softmax", [t], {"axis": axis}, loc)


def layer_norm(x, gamma=None, beta=None, axis=-1, epsilon=1e-5) -> Tracer:
    """Normalize over dimensions ``[axis, ndim)``, then scale by gamma and shift by beta."""
    ctx = check_context((x, gamma, beta))
    loc = user_location()
    t = _require_float(lift(ctx, _operand(x), None, loc), loc)
    axis = _normalize_axis(axis, t.ndim)
    norm_shape = t.shape[axis:]
    if not all(isinstance(d, int) for d in norm_shape):
        return _layer_norm_symbolic(t, gamma, beta, axis, epsilon)
    gamma = np.ones(norm_shape, t.dtype) if gamma is None else gamma
    beta = np.zeros(norm_shape, t.dtype) if beta is None else beta
    t, g, b = _float_operands(ctx, [t, gamma, beta], loc)
    params = []
    for name, p in (("gamma", g), ("beta", b)):
        if p.shape != norm_shape:
            try:
                p = broadcast_to(p, norm_shape)
            except TraceError:
                raise TraceError(
                    f"cuvil.layer_norm: {name} of shape {p.shape} does not match the normalized "
                    f"shape {norm_shape} of input {t.shape} (axis={axis}) at {loc}."
                ) from None
        params.append(p)
    attributes = {"axis": axis, "epsilon": float(epsilon)}
    return ctx.emit("cuvil.layer_norm", [t, *params], attributes, loc)


def _layer_norm_symbolic(t: Tracer, gamma, beta, axis: int, epsilon) -> Tracer:
    """Layer norm over dims of which some are symbolic (no constant gamma or beta of that
    shape exists): the normalization from reductions, then ``* gamma + beta`` broadcast."""
    axes = tuple(range(axis, t.ndim))
    centered = t - t.mean(axis=axes, keepdims=True)
    variance = (centered * centered).mean(axis=axes, keepdims=True)
    y = centered / np.sqrt(variance + float(epsilon))
    if gamma is not None:
        y = y * gamma
    return y if beta is None else y + beta


def conv2d(x, weight, strides=(1, 1), padding=(0, 0, 0, 0), dilations=(1, 1), groups=1) -> Tracer:
    """2-D convolution, NCHW input and (F, C/groups, KH, KW) weight."""
    ctx = check_context((x, weight))
    loc = user_location()
    strides, dilations = pair(strides, "strides"), pair(dilations, "dilations")
    padding, groups = padding4(padding), operator.index(groups)
    t, w = _float_operands(ctx, [x, weight], loc)
    attributes = {
        "strides": strides,
        "padding": padding,
        "dilations": dilations,
        "groups": groups,
    }
    return ctx.emit("cuvil.conv2d", [t, w], attributes, loc)


def pool2d(kind, x, kernel, strides=None, padding=0, count_include_pad=True) -> Tracer:
    """``max`` or ``avg`` pooling over NCHW input."""
    ctx = check_context((x,))
    loc = user_location()
    op = f"cuvil.{kind}_pool2d"
    kernel = pair(kernel, "kernel")
    strides = kernel if strides is None else pair(strides, "strides")
    padding = padding4(padding)
    check_pool_padding(op, kernel, padding)
    (t,) = _float_operands(ctx, [x], loc)
    attributes = {"kernel": kernel, "strides": strides, "padding": padding}
    if kind == "avg":
        attributes["count_include_pad"] = bool(count_include_pad)
    return ctx.emit(op, [t], attributes, loc)


def batch_norm(x, scale, bias, mean, var, epsilon=1e-5) -> Tracer:
    """Inference batch norm over channel axis 1: ``(x - mean) / sqrt(var + eps) * scale + bias``."""
    ctx = check_context((x, scale, bias, mean, var))
    loc = user_location()
    operands = _float_operands(ctx, [x, scale, bias, mean, var], loc)
    attributes = {"epsilon": float(epsilon)}
    return ctx.emit("cuvil.batch_norm", operands, attributes, loc)


def dropout(x, ratio=0.5) -> Tracer:
    """Training-only dropout; compiled for inference it is the identity."""
    ctx = check_context((x,))
    loc = user_location()
    ratio = check_dropout_ratio(ratio)
    t = lift(ctx, _operand(x), None, loc)
    if not is_float(t.dtype):
        raise unsupported(f"dropout on a {t.dtype} array", loc)
    return ctx.emit("cuvil.dropout", [t], {"ratio": ratio}, loc)
