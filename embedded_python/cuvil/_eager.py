"""NumPy implementations of Cuvil's builder ops, used when they are called on real arrays."""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .frontends.numpy_tracer import nn as _nn

_SQRT_PI = math.sqrt(math.pi)

# Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7, below float32 resolution near 1.
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _as_float(x) -> np.ndarray:
    x = np.asarray(x)
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def _erf_float64(x: np.ndarray) -> np.ndarray:
    """erf to double precision.

    |x| < 2.5: the positive-term series
    ``erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_n 2^n x^(2n+1) / (1*3*...*(2n+1))``,
    which has no cancellation. Otherwise ``1 - erfc(|x|)`` with erfc from its
    continued fraction, evaluated bottom-up at a fixed depth.
    """
    out = np.empty_like(x)
    ax = np.abs(x)
    small = ax < 2.5
    xs = x[small]
    z = xs * xs
    term = xs.copy()
    total = xs.copy()
    for n in range(1, 45):
        term *= 2.0 * z / (2 * n + 1)
        total += term
    out[small] = (2.0 / _SQRT_PI) * np.exp(-z) * total
    large = ~small
    xl = ax[large]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = xl.copy()
        for k in range(80, 0, -1):
            t = xl + (0.5 * k) / t
        erfc = np.exp(-xl * xl) / (_SQRT_PI * t)
        erfc = np.where(np.isinf(xl), 0.0, erfc)
    out[large] = np.sign(x[large]) * (1.0 - erfc)
    return out


def erf(x) -> np.ndarray:
    """The error function, elementwise; float32 stays float32, ints become float64."""
    x = _as_float(x)
    if x.dtype == np.float64:
        return _erf_float64(x)
    wide = x.astype(np.float64)
    t = 1.0 / (1.0 + _AS_P * np.abs(wide))
    poly = t * (_AS_A[0] + t * (_AS_A[1] + t * (_AS_A[2] + t * (_AS_A[3] + t * _AS_A[4]))))
    result = np.sign(wide) * (1.0 - poly * np.exp(-wide * wide))
    return result.astype(x.dtype)


def gelu(x) -> np.ndarray:
    """Exact (erf-based) GELU: ``0.5 * x * (1 + erf(x / sqrt(2)))``."""
    x = _as_float(x)
    return (0.5 * x * (1.0 + erf(x * x.dtype.type(1.0 / math.sqrt(2.0))))).astype(x.dtype)


def relu(x) -> np.ndarray:
    """``max(x, 0)`` keeping the dtype."""
    x = np.asarray(x)
    if x.dtype == np.bool_:
        raise TypeError("relu is not defined for boolean arrays")
    return np.maximum(x, x.dtype.type(0))


def sigmoid(x) -> np.ndarray:
    """``1 / (1 + exp(-x))`` computed without overflow for large ``|x|``."""
    x = _as_float(x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype)


def rsqrt(x) -> np.ndarray:
    """``1 / sqrt(x)``."""
    x = _as_float(x)
    return (1.0 / np.sqrt(x)).astype(x.dtype)


def softmax(x, axis=-1) -> np.ndarray:
    """Numerically stable softmax along ``axis``."""
    x = _as_float(x)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def layer_norm(x, gamma=None, beta=None, axis=-1, epsilon=1e-5) -> np.ndarray:
    """Normalize over dimensions ``[axis, ndim)``, then ``* gamma + beta``."""
    x = _as_float(x)
    # Python scalars stay weak (NumPy 2): a float beta does not widen float32 input.
    dtype = np.result_type(x, *(p for p in (gamma, beta) if p is not None))
    dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
    x = x.astype(dtype, copy=False)
    start = axis % x.ndim
    axes = tuple(range(start, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=axes, keepdims=True)
    y = centered / np.sqrt(var + dtype.type(epsilon))
    if gamma is not None:
        y = y * np.asarray(gamma, dtype)
    if beta is not None:
        y = y + np.asarray(beta, dtype)
    return y


def _common_float(*values) -> list[np.ndarray]:
    dtype = np.result_type(*values)
    dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
    return [np.asarray(v, dtype=dtype) for v in values]


def conv2d(x, weight, strides=(1, 1), padding=(0, 0, 0, 0), dilations=(1, 1), groups=1):
    """2-D convolution (cross-correlation) of NCHW input with (F, C/groups, KH, KW) weight."""
    x, weight = _common_float(x, weight)
    strides, dilations = _nn.pair(strides, "strides"), _nn.pair(dilations, "dilations")
    padding = _nn.padding4(padding)
    attributes = {"strides": strides, "padding": padding, "dilations": dilations}
    _nn.check_shapes("cuvil.conv2d", [x, weight], {**attributes, "groups": int(groups)})
    n, c = x.shape[:2]
    f, cg, kh, kw = weight.shape
    top, left, bottom, right = padding
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    extent = (dilations[0] * (kh - 1) + 1, dilations[1] * (kw - 1) + 1)
    windows = sliding_window_view(padded, extent, axis=(2, 3))
    windows = windows[:, :, :: strides[0], :: strides[1], :: dilations[0], :: dilations[1]]
    ho, wo = windows.shape[2:4]
    windows = windows.reshape(n, groups, cg, ho, wo, kh, kw)
    grouped = weight.reshape(groups, f // groups, cg, kh, kw)
    out = np.einsum("ngchwij,gfcij->ngfhw", windows, grouped, optimize=True)
    return np.ascontiguousarray(out.reshape(n, f, ho, wo))


def _pool_windows(op, x, kernel, strides, padding, fill):
    kernel = _nn.pair(kernel, "kernel")
    strides = kernel if strides is None else _nn.pair(strides, "strides")
    padding = _nn.padding4(padding)
    _nn.check_pool_padding("pool2d", kernel, padding)
    attributes = {"kernel": kernel, "strides": strides, "padding": padding}
    _nn.check_shapes(op, [x], attributes)
    top, left, bottom, right = padding
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    windows = sliding_window_view(padded, kernel, axis=(2, 3))
    return windows[:, :, :: strides[0], :: strides[1]], kernel, strides, padding


def max_pool2d(x, kernel, strides=None, padding=(0, 0, 0, 0)):
    """Max pooling over NCHW input; padding never wins the max."""
    (x,) = _common_float(x)
    windows, *_ = _pool_windows("cuvil.max_pool2d", x, kernel, strides, padding, -np.inf)
    return windows.max(axis=(-2, -1))


def avg_pool2d(x, kernel, strides=None, padding=(0, 0, 0, 0), count_include_pad=True):
    """Average pooling over NCHW input; padding counts in the divisor if ``count_include_pad``."""
    (x,) = _common_float(x)
    windows, kernel, strides, padding = _pool_windows(
        "cuvil.avg_pool2d", x, kernel, strides, padding, 0.0
    )
    sums = windows.sum(axis=(-2, -1))
    if count_include_pad:
        return (sums / x.dtype.type(kernel[0] * kernel[1])).astype(x.dtype)
    ones = np.ones((1, 1) + x.shape[2:], x.dtype)
    counts, *_ = _pool_windows("cuvil.avg_pool2d", ones, kernel, strides, padding, 0.0)
    return (sums / counts.sum(axis=(-2, -1))).astype(x.dtype)


def batch_norm(x, scale, bias, mean, var, epsilon=1e-5):
    """Inference batch norm over channel axis 1."""
    x, scale, bias, mean, var = _common_float(x, scale, bias, mean, var)
    channels = x.shape[1]
    for name, p in (("scale", scale), ("bias", bias), ("mean", mean), ("var", var)):
        if p.shape != (channels,):
            raise ValueError(f"batch_norm: {name} has shape {p.shape}, expected ({channels},)")
    shape = (1, channels) + (1,) * (x.ndim - 2)
    inv = 1.0 / np.sqrt(var + x.dtype.type(epsilon))
    return (x - mean.reshape(shape)) * inv.reshape(shape) * scale.reshape(shape) + bias.reshape(
        shape
    )


def dropout(x, ratio=0.5):
    """Inference-mode dropout: a copy of the input (training-only behaviour is dropped)."""
    _nn.check_dropout_ratio(ratio)
    return np.array(x, copy=True)
