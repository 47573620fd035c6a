"""Parameter checking, shape inference and IR construction for the neural-network ops."""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from ._dtypes import is_float
from ._errors import TraceError
from ._ops import _normalize_axis, _operand, _require_float, broadcast_to, lift
from ._source import user_location
from ._tracer import Tracer, check_context, unsupported

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


def window_output(
    op: str,
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    padding: Sequence[int],
    dilations: Sequence[int] = (1, 1),
    loc=None,
) -> tuple[int, int]:
    """Output height and width of a 2-D sliding window (convolution or pooling)."""
    top, left, bottom, right = padding
    out = []
    for size, k, s, d, before, after in zip(
        spatial, kernel, strides, dilations, (top, left), (bottom, right)
    ):
        extent = d * (k - 1) + 1
        padded = size + before + after
        if padded < extent:
            raise TraceError(
                f"{op}: window of extent {extent} does not fit the padded input of size {padded} "
                f"(input spatial shape {tuple(spatial)}, kernel {tuple(kernel)}) at "
                f"{loc or user_location()}. Fix: use a smaller kernel or more padding."
            )
        out.append((padded - extent) // s + 1)
    return out[0], out[1]


def check_conv2d(op, x_shape, w_shape, groups, loc=None) -> None:
    """Validate NCHW input and (F, C/groups, KH, KW) weight shapes."""
    where = loc or user_location()
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise TraceError(
            f"{op}: expected a 4-D NCHW input and a 4-D FCHW weight, got shapes "
            f"{tuple(x_shape)} and {tuple(w_shape)} at {where}."
        )
    if groups < 1 or x_shape[1] != w_shape[1] * groups or w_shape[0] % groups:
        raise TraceError(
            f"{op}: input shape {tuple(x_shape)} and weight shape {tuple(w_shape)} do not match "
            f"with groups={groups} at {where}. Fix: input channels must equal weight.shape[1] * "
            "groups and weight.shape[0] must be divisible by groups."
        )


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
    return ctx.emit("cuvil.softmax", [t], t.shape, t.dtype, {"axis": axis}, loc)


def layer_norm(x, gamma=None, beta=None, axis=-1, epsilon=1e-5) -> Tracer:
    """Normalize over dimensions ``[axis, ndim)``, then scale by gamma and shift by beta."""
    ctx = check_context((x, gamma, beta))
    loc = user_location()
    t = _require_float(lift(ctx, _operand(x), None, loc), loc)
    axis = _normalize_axis(axis, t.ndim)
    norm_shape = t.shape[axis:]
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
    return ctx.emit("cuvil.layer_norm", [t, *params], t.shape, t.dtype, attributes, loc)


def conv2d(x, weight, strides=(1, 1), padding=(0, 0, 0, 0), dilations=(1, 1), groups=1) -> Tracer:
    """2-D convolution, NCHW input and (F, C/groups, KH, KW) weight."""
    ctx = check_context((x, weight))
    loc = user_location()
    strides, dilations = pair(strides, "strides"), pair(dilations, "dilations")
    padding, groups = padding4(padding), operator.index(groups)
    t, w = _float_operands(ctx, [x, weight], loc)
    check_conv2d("cuvil.conv2d", t.shape, w.shape, groups, loc)
    ho, wo = window_output(
        "cuvil.conv2d", t.shape[2:], w.shape[2:], strides, padding, dilations, loc
    )
    attributes = {
        "strides": strides,
        "padding": padding,
        "dilations": dilations,
        "groups": groups,
    }
    shape = (t.shape[0], w.shape[0], ho, wo)
    return ctx.emit("cuvil.conv2d", [t, w], shape, t.dtype, attributes, loc)


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
    if t.ndim != 4:
        raise TraceError(f"{op}: expected a 4-D NCHW input, got shape {t.shape} at {loc}.")
    ho, wo = window_output(op, t.shape[2:], kernel, strides, padding, loc=loc)
    attributes = {"kernel": kernel, "strides": strides, "padding": padding}
    if kind == "avg":
        attributes["count_include_pad"] = bool(count_include_pad)
    return ctx.emit(op, [t], t.shape[:2] + (ho, wo), t.dtype, attributes, loc)


def batch_norm(x, scale, bias, mean, var, epsilon=1e-5) -> Tracer:
    """Inference batch norm over channel axis 1: ``(x - mean) / sqrt(var + eps) * scale + bias``."""
    ctx = check_context((x, scale, bias, mean, var))
    loc = user_location()
    operands = _float_operands(ctx, [x, scale, bias, mean, var], loc)
    t = operands[0]
    if t.ndim < 2:
        raise TraceError(
            f"cuvil.batch_norm: input must have a channel axis 1, got shape {t.shape} at {loc}."
        )
    channels = t.shape[1]
    for name, p in zip(("scale", "bias", "mean", "var"), operands[1:]):
        if p.shape != (channels,):
            raise TraceError(
                f"cuvil.batch_norm: {name} has shape {p.shape} but input {t.shape} has "
                f"{channels} channels (axis 1) at {loc}. Fix: pass 1-D ({channels},) parameters."
            )
    attributes = {"epsilon": float(epsilon)}
    return ctx.emit("cuvil.batch_norm", operands, t.shape, t.dtype, attributes, loc)


def dropout(x, ratio=0.5) -> Tracer:
    """Training-only dropout; compiled for inference it is the identity."""
    ctx = check_context((x,))
    loc = user_location()
    ratio = check_dropout_ratio(ratio)
    t = lift(ctx, _operand(x), None, loc)
    if not is_float(t.dtype):
        raise unsupported(f"dropout on a {t.dtype} array", loc)
    return ctx.emit("cuvil.dropout", [t], t.shape, t.dtype, {"ratio": ratio}, loc)
