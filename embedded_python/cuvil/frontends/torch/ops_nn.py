"""Lowerings of ATen neural-network ops: convolution, normalization, pooling, softmax, attention."""

from __future__ import annotations

import numpy as np

from .. import composites
from ..builder import Value
from .aten import NotComputed, lowers
from .ops_math import operand, result_dims, result_dtype, result_shape

# ----- convolution ---------------------------------------------------------------------


def _as_pair(values, name: str, c) -> tuple[int, int]:
    values = [int(v) for v in (values if isinstance(values, (list, tuple)) else [values])]
    if len(values) == 1:
        values = values * 2
    if len(values) != 2:
        raise c.unsupported(f"{name} {values} of a convolution that is not 1-D or 2-D")
    return tuple(values)


@lowers("aten.convolution", "aten._convolution")
def _convolution(
    c, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, **_
):
    dtype = result_dtype(c)
    x = operand(c, input, dtype)
    rank = len(x.type.shape)
    if rank not in (3, 4):
        raise c.unsupported(f"a {rank - 2}-D convolution (Cuvil compiles 1-D and 2-D)")
    one_d = rank == 3
    if one_d:
        # A 1-D convolution is a 2-D one over a height of 1.
        stride, dilation = [1, *stride], [1, *dilation]
        padding, output_padding = [0, *padding], [0, *output_padding]
        n, ch, length = x.type.shape
        x = composites.reshape(c.b, x, (n, ch, 1, length))
        weight = _unsqueeze_weight(c, weight, dtype)
    strides, dilations = _as_pair(stride, "stride", c), _as_pair(dilation, "dilation", c)
    ph, pw = _as_pair(padding, "padding", c)
    b = None if bias is None else operand(c, bias, dtype)
    if transposed:
        if not isinstance(weight, np.ndarray):
            raise c.unsupported("a transposed convolution whose weight is computed at run time")
        y = composites.conv_transpose2d(
            c.b,
            x,
            weight.astype(dtype),
            b,
            strides=strides,
            padding=(ph, pw, ph, pw),
            output_padding=_as_pair(output_padding, "output_padding", c),
            dilations=dilations,
            groups=int(groups),
        )
    else:
        y = composites.conv2d(
            c.b,
            x,
            operand(c, weight, dtype),
            b,
            strides=strides,
            padding=(ph, pw, ph, pw),
            dilations=dilations,
            groups=int(groups),
        )
    return composites.reshape(c.b, y, result_shape(c)) if one_d else y


def _unsqueeze_weight(c, weight, dtype):
    if isinstance(weight, np.ndarray):
        return weight[:, :, None, :]
    w = operand(c, weight, dtype)
    f, ch, k = w.type.shape
    return composites.reshape(c.b, w, (f, ch, 1, k))


# ----- normalization -----------------------------------------------------------------------


def _statistics(c) -> tuple:
    """The saved mean and inverse deviation a normalization returns for training."""
    return (NotComputed(f"the saved mean of {c.op}"), NotComputed(f"the saved rstd of {c.op}"))


def _indices(c):
    return NotComputed(f"the indices of {c.op}")


def _batch_norm(c, input, weight, bias, running_mean, running_var, eps):
    dtype = result_dtype(c)
    x = operand(c, input, dtype)
    channels = x.type.shape[1]
    ones, zeros = np.ones(channels, dtype), np.zeros(channels, dtype)
    scale = operand(c, ones if weight is None else weight, dtype)
    shift = operand(c, zeros if bias is None else bias, dtype)
    mean, var = operand(c, running_mean, dtype), operand(c, running_var, dtype)
    y = composites.batch_norm(c.b, x, scale, shift, mean, var, float(eps))
    return (y, *_statistics(c))


@lowers("aten._native_batch_norm_legit_no_training")
def _batch_norm_inference(c, input, weight, bias, running_mean, running_var, momentum, eps, **_):
    return _batch_norm(c, input, weight, bias, running_mean, running_var, eps)


@lowers("aten.native_batch_norm", "aten._native_batch_norm_legit")
def _batch_norm_maybe_batch_statistics(
    c, input, weight, bias, running_mean=None, running_var=None, training=True, eps=1e-5, **_
):
    if not training:
        return _batch_norm(c, input, weight, bias, running_mean, running_var, eps)
    # The exported (eval) module normalizes with the statistics of its input by design
    # (instance norm, batch norm without running statistics).
    dtype = result_dtype(c)
    y = composites.batch_statistics_norm(c.b, operand(c, input, dtype), float(eps))
    return (_channel_affine(c, y, weight, bias, dtype), *_statistics(c))


def _channel_affine(c, y: Value, weight, bias, dtype: str) -> Value:
    params = (None if p is None else operand(c, p, dtype) for p in (weight, bias))
    return composites.channel_affine(c.b, y, *params)


@lowers("aten.native_layer_norm", "aten.layer_norm")
def _layer_norm(c, input, normalized_shape, weight=None, bias=None, eps=1e-5, **_):
    dtype = result_dtype(c)
    x = operand(c, input, dtype)
    gamma, beta = (None if p is None else operand(c, p, dtype) for p in (weight, bias))
    axis = len(x.type.shape) - len(normalized_shape)
    y = composites.layer_norm(c.b, x, gamma, beta, axis=axis, epsilon=float(eps))
    return (y, *_statistics(c)) if c.op.startswith("aten.native") else y


@lowers("aten.native_group_norm")
def _group_norm(c, input, weight, bias, N, C, HxW, group, eps, **_):
    dtype = result_dtype(c)
    x = operand(c, input, dtype)
    y = composites.group_norm(c.b, x, int(group), float(eps))
    return (_channel_affine(c, y, weight, bias, dtype), *_statistics(c))


@lowers("aten._softmax", "aten.softmax")
def _softmax(c, self, dim, **_):
    x = operand(c, self, result_dtype(c))
    axis = composites.normalize_axis(int(dim), len(x.type.shape))
    return c.b.op("cuvil.softmax", [x], {"axis": axis})


@lowers("aten._log_softmax", "aten.log_softmax")
def _log_softmax(c, self, dim, **_):
    return composites.log_softmax(c.b, operand(c, self, result_dtype(c)), int(dim))


# ----- pooling --------------------------------------------------------------------------------


def _pool_params(c, kernel_size, stride, padding, dilation=1):
    kernel = _as_pair(kernel_size, "kernel_size", c)
    strides = kernel if stride in (None, [], ()) else _as_pair(stride, "stride", c)
    ph, pw = _as_pair(padding, "padding", c)
    if _as_pair(dilation, "dilation", c) != (1, 1):
        raise c.unsupported(f"pooling with dilation {dilation}")
    return {"kernel": kernel, "strides": strides, "padding": (ph, pw, ph, pw)}


def _pool(c, kind: str, x, attrs):
    x = operand(c, x, result_dtype(c))
    if len(x.type.shape) != 4:
        raise c.unsupported(f"{kind} pooling of a rank-{len(x.type.shape)} tensor (needs NCHW)")
    y = c.b.op(f"cuvil.{kind}_pool2d", [x], attrs)
    if y.type.shape != result_dims(c):
        raise c.unsupported(
            f"{kind} pooling with ceil_mode=True where it adds a partial window "
            f"(PyTorch's shape {result_shape(c)}, floor mode's {y.type.shape})"
        )
    return y


@lowers("aten.max_pool2d_with_indices", "aten.max_pool2d")
def _max_pool2d(c, self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, **_):
    y = _pool(c, "max", self, _pool_params(c, kernel_size, stride, padding, dilation))
    return (y, _indices(c)) if c.op.endswith("with_indices") else y


@lowers("aten.avg_pool2d")
def _avg_pool2d(
    c,
    self,
    kernel_size,
    stride=(),
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
    **_,
):
    if divisor_override is not None:
        raise c.unsupported(f"avg_pool2d with divisor_override={divisor_override}")
    attrs = _pool_params(c, kernel_size, stride, padding)
    attrs["count_include_pad"] = bool(count_include_pad)
    return _pool(c, "avg", self, attrs)


@lowers("aten._adaptive_avg_pool2d", "aten.adaptive_avg_pool2d", "aten.adaptive_max_pool2d")
def _adaptive_pool2d(c, self, output_size, **_):
    kind = "max" if "max" in c.op else "avg"
    x = operand(c, self, result_dtype(c))
    if len(x.type.shape) != 4:
        raise c.unsupported(f"adaptive pooling of a rank-{len(x.type.shape)} tensor (needs NCHW)")
    y = composites.adaptive_pool2d(c.b, x, _as_pair(output_size, "output_size", c), kind)
    return (y, _indices(c)) if kind == "max" else y


@lowers(
    "aten.upsample_nearest1d",
    "aten.upsample_nearest2d",
    "aten.upsample_nearest3d",
    "aten._upsample_nearest_exact1d",
    "aten._upsample_nearest_exact2d",
    "aten._upsample_nearest_exact3d",
    "aten.upsample_linear1d",
    "aten.upsample_bilinear2d",
    "aten.upsample_trilinear3d",
    "aten.upsample_bicubic2d",
)
def _upsample(c, self=None, input=None, align_corners=False, scale_factors=None, **scales):
    """``F.interpolate``: the spatial axes resized with PyTorch's source-index rules."""
    x = operand(c, input if self is None else self, result_dtype(c))
    spatial = len(x.type.shape) - 2
    if scale_factors is None:  # the .default overloads: scales_h, scales_w (or scales, scales_d)
        names = {
            1: ["scales"],
            2: ["scales_h", "scales_w"],
            3: ["scales_d", "scales_h", "scales_w"],
        }
        scale_factors = [scales.get(name) for name in names[spatial]]
    if "nearest" in c.op:
        mode, exact = "nearest", "exact" in c.op
        # src = floor(dst * in/out), or floor((dst + 0.5) * in/out) for nearest-exact.
        coordinates = "tf_half_pixel_for_nn" if exact else "asymmetric"
        options = {"nearest": "floor"}
    else:
        mode = "cubic" if "bicubic" in c.op else "linear"
        coordinates = "align_corners" if align_corners else "half_pixel"
        options = {"cubic_a": -0.75} if mode == "cubic" else {}
    full_scales = [None, None, *(None if align_corners else s for s in scale_factors)]
    return composites.resize(c.b, x, result_shape(c), mode, coordinates, full_scales, **options)


# ----- attention and lookup ----------------------------------------------------------------------


def _attention(c, query, key, value, attn_mask, dropout_p, is_causal, scale):
    if dropout_p:
        raise c.unsupported(f"attention dropout (dropout_p={dropout_p}) in inference")
    dtype = result_dtype(c)
    q, k, v = (operand(c, t, dtype) for t in (query, key, value))
    mask = None
    if attn_mask is not None:
        mask_dtype = "bool" if _dtype_of(attn_mask) == "bool" else dtype
        mask = operand(c, attn_mask, mask_dtype)
    return composites.scaled_dot_product_attention(
        c.b, q, k, v, mask, is_causal=bool(is_causal), scale=scale
    )


def _dtype_of(x) -> str:
    return x.type.dtype if isinstance(x, Value) else np.asarray(x).dtype.name


@lowers("aten.scaled_dot_product_attention")
def _sdpa(c, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **_):
    return _attention(c, query, key, value, attn_mask, dropout_p, is_causal, scale)


@lowers(
    "aten._scaled_dot_product_flash_attention_for_cpu",
    "aten._scaled_dot_product_attention_math",
)
def _sdpa_with_stats(
    c, query, key, value, dropout_p=0.0, is_causal=False, attn_mask=None, scale=None, **_
):
    out = _attention(c, query, key, value, attn_mask, dropout_p, is_causal, scale)
    return (out, NotComputed(f"the log-sum-exp statistics of {c.op}"))


@lowers("aten.embedding", "aten.index_select")
def _embedding(c, weight=None, indices=None, self=None, dim=0, index=None, **_):
    table, rows = (weight, indices) if self is None else (self, index)
    data = operand(c, table, result_dtype(c))
    dtype = rows.type.dtype if isinstance(rows, Value) else np.asarray(rows).dtype.name
    if dtype not in ("int32", "int64"):
        raise c.unsupported(f"{c.op} with {dtype} indices")
    return composites.gather(c.b, data, operand(c, rows, dtype), int(dim))


@lowers("aten.constant_pad_nd")
def _constant_pad(c, self, pad, value=0, **_):
    x = operand(c, self, result_dtype(c))
    rank = len(x.type.shape)
    pairs = [(0, 0)] * rank
    for i in range(len(pad) // 2):
        before, after = int(pad[2 * i]), int(pad[2 * i + 1])
        if before < 0 or after < 0:
            raise c.unsupported(f"constant_pad_nd with negative padding {list(pad)}")
        pairs[rank - 1 - i] = (before, after)
    return composites.pad(c.b, x, pairs, float(value))
