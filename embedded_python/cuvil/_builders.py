"""Public op builders: record an IR op on traced arrays, compute with NumPy otherwise."""

from __future__ import annotations

from . import _eager
from .frontends.numpy_tracer import nn as _nn
from .frontends.numpy_tracer import ops as _ops
from .frontends.numpy_tracer.tracer import Tracer

__all__ = [
    "conv2d",
    "max_pool2d",
    "avg_pool2d",
    "softmax",
    "layer_norm",
    "gelu",
    "relu",
    "sigmoid",
    "erf",
    "rsqrt",
    "batch_norm",
    "dropout",
]


def _traced(*values) -> bool:
    return any(isinstance(v, Tracer) for v in values)


def conv2d(input, weight, strides=(1, 1), padding=(0, 0, 0, 0), dilations=(1, 1), groups=1):
    """2-D convolution (cross-correlation), NCHW layout.

    Args:
        input: ``(N, C, H, W)`` array.
        weight: ``(F, C // groups, KH, KW)`` array.
        strides: int or ``(sh, sw)``.
        padding: int, ``(ph, pw)`` or ``(top, left, bottom, right)``; zero padding.
        dilations: int or ``(dh, dw)``.
        groups: number of channel groups.

    Returns:
        ``(N, F, HO, WO)`` array.
    """
    if _traced(input, weight):
        return _nn.conv2d(input, weight, strides, padding, dilations, groups)
    return _eager.conv2d(input, weight, strides, padding, dilations, groups)


def max_pool2d(input, kernel, strides=None, padding=(0, 0, 0, 0)):
    """Max pooling over an NCHW array; ``strides`` defaults to ``kernel``.

    Padding (int, pair or 4-tuple, at most half the kernel) never wins the max.
    """
    if _traced(input):
        return _nn.pool2d("max", input, kernel, strides, padding)
    return _eager.max_pool2d(input, kernel, strides, padding)


def avg_pool2d(input, kernel, strides=None, padding=(0, 0, 0, 0), count_include_pad=True):
    """Average pooling over an NCHW array; ``strides`` defaults to ``kernel``.

    With ``count_include_pad`` the divisor is always ``KH * KW``; otherwise only
    the input elements inside each window are counted.
    """
    if _traced(input):
        return _nn.pool2d("avg", input, kernel, strides, padding, count_include_pad)
    return _eager.avg_pool2d(input, kernel, strides, padding, count_include_pad)


def softmax(x, axis=-1):
    """``exp(x - max(x)) / sum(exp(x - max(x)))`` along ``axis``."""
    if _traced(x):
        return _nn.softmax(x, axis)
    return _eager.softmax(x, axis)


def layer_norm(x, gamma=None, beta=None, axis=-1, epsilon=1e-5):
    """Layer normalization over dimensions ``[axis, ndim)``.

    ``gamma`` and ``beta`` have shape ``x.shape[axis:]`` (or broadcast to it);
    ``None`` means 1 and 0.
    """
    if _traced(x, gamma, beta):
        return _nn.layer_norm(x, gamma, beta, axis, epsilon)
    return _eager.layer_norm(x, gamma, beta, axis, epsilon)


def gelu(x):
    """Exact GELU, ``0.5 * x * (1 + erf(x / sqrt(2)))``."""
    if _traced(x):
        return _ops.float_unary("cuvil.gelu", x)
    return _eager.gelu(x)


def relu(x):
    """``max(x, 0)``, keeping the dtype."""
    if _traced(x):
        return _ops.relu(x)
    return _eager.relu(x)


def sigmoid(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))``."""
    if _traced(x):
        return _ops.float_unary("cuvil.sigmoid", x)
    return _eager.sigmoid(x)


def erf(x):
    """Gauss error function, elementwise."""
    if _traced(x):
        return _ops.float_unary("cuvil.erf", x)
    return _eager.erf(x)


def rsqrt(x):
    """Reciprocal square root ``1 / sqrt(x)``."""
    if _traced(x):
        return _ops.float_unary("cuvil.rsqrt", x)
    return _eager.rsqrt(x)


def batch_norm(x, scale, bias, mean, var, epsilon=1e-5):
    """Inference-form batch normalization over channel axis 1.

    ``(x - mean) / sqrt(var + epsilon) * scale + bias`` with 1-D ``(C,)`` parameters.
    """
    if _traced(x, scale, bias, mean, var):
        return _nn.batch_norm(x, scale, bias, mean, var, epsilon)
    return _eager.batch_norm(x, scale, bias, mean, var, epsilon)


def dropout(x, ratio=0.5):
    """Dropout, a training-only op: compiled for inference (and in NumPy) it is the identity."""
    if _traced(x):
        return _nn.dropout(x, ratio)
    return _eager.dropout(x, ratio)
