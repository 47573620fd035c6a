"""Compositions of cuvil ops the JAX and TensorFlow importers share (to merge into composites.py).

Each function takes the :class:`~cuvil.frontends.IRBuilder` and its
:class:`~cuvil.frontends.Value` operands, appends cuvil ops at the builder's
current location and returns the result. The names and signatures of the
first group (``scalar`` ... ``log_softmax``) match ``cuvil.frontends.composites``
so that moving to it is an import change; the layout helpers at the end
(channels-last convolution and pooling, general contractions, arg-reductions)
are the ones that module does not have yet.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from .. import _dtypes
from .builder import IRBuilder, TensorType, Value

__all__ = [
    "scalar",
    "normalize_axis",
    "reshape",
    "transpose",
    "broadcast_to",
    "cast",
    "slice_axis",
    "concat",
    "pad",
    "gelu",
    "silu",
    "log_softmax",
    "predicate",
    "compare",
    "dot_general",
    "conv2d_layout",
    "pool2d_layout",
    "arg_reduce",
    "einsum",
    "has_gather",
    "require_gather",
    "gather",
]


# ----- building blocks (as in composites.py) -------------------------------------------


def scalar(b: IRBuilder, value, like: Value | str) -> Value:
    """A rank-0 constant ``value`` of ``like``'s dtype (a Value or a dtype-table name)."""
    dtype = like if isinstance(like, str) else like.type.dtype
    return b.constant(np.asarray(value, dtype=dtype))


def normalize_axis(axis: int, rank: int) -> int:
    """``axis`` in ``[0, rank)`` (negative counts from the end); ``ValueError`` if out of range."""
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"axis {axis} is out of range for rank {rank}")
    return axis % max(rank, 1)


def reshape(b: IRBuilder, x: Value, shape: Sequence[int]) -> Value:
    """``x`` with ``shape`` (at most one ``-1``); no op when the shape is unchanged."""
    shape = [int(d) for d in shape]
    size = int(np.prod(x.type.shape, dtype=np.int64))
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        shape[shape.index(-1)] = size // known if known else 0
    if tuple(shape) == x.type.shape:
        return x
    return b.op("cuvil.reshape", [x], result_type=TensorType(tuple(shape), x.type.dtype))


def transpose(b: IRBuilder, x: Value, perm: Sequence[int]) -> Value:
    """``x`` with its dimensions permuted; no op for the identity permutation."""
    perm = tuple(normalize_axis(int(p), len(x.type.shape)) for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    return b.op("cuvil.transpose", [x], {"permutation": perm})


def broadcast_to(b: IRBuilder, x: Value, shape: Sequence[int]) -> Value:
    """``x`` broadcast to ``shape`` with NumPy rules; no op when already that shape."""
    shape = tuple(int(d) for d in shape)
    if shape == x.type.shape:
        return x
    return b.op("cuvil.broadcast_to", [x], result_type=TensorType(shape, x.type.dtype))


def cast(b: IRBuilder, x: Value, dtype: str) -> Value:
    """``x`` converted to dtype ``dtype`` (a table name), NumPy ``astype`` semantics."""
    if x.type.dtype == dtype:
        return x
    return b.op("cuvil.cast", [x], result_type=TensorType(x.type.shape, dtype))


def slice_axis(b: IRBuilder, x: Value, axis: int, start: int, limit: int, step: int = 1) -> Value:
    """``x[..., start:limit:step, ...]`` along ``axis`` (positive step, in-range bounds)."""
    shape = x.type.shape
    starts, limits, steps = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], steps[axis] = start, limit, step
    if (start, limit, step) == (0, shape[axis], 1):
        return x
    return b.op("cuvil.slice", [x], {"start": starts, "limit": limits, "step": steps})


def concat(b: IRBuilder, values: Sequence[Value], axis: int) -> Value:
    """``values`` concatenated along ``axis``; a single value is returned as is."""
    values = list(values)
    if len(values) == 1:
        return values[0]
    return b.op("cuvil.concat", values, {"axis": normalize_axis(axis, len(values[0].type.shape))})


def pad(b: IRBuilder, x: Value, pads: Sequence[tuple[int, int]], value: float = 0.0) -> Value:
    """``x`` padded with constant ``value``: ``pads[i] = (before, after)`` for each dimension."""
    for axis, (before, after) in enumerate(pads):
        parts = []
        for count in (before, None, after):
            if count is None:
                parts.append(x)
            elif count > 0:
                shape = list(x.type.shape)
                shape[axis] = count
                parts.append(b.constant(np.full(shape, value, dtype=x.type.dtype)))
        x = concat(b, parts, axis)
    return x


def gelu(b: IRBuilder, x: Value, approximate: str = "none") -> Value:
    """GELU: exact ``0.5 x (1 + erf(x / sqrt 2))`` or ``approximate="tanh"`` (GPT-2's form)."""
    if approximate == "none":
        return b.op("cuvil.gelu", [x])
    if approximate != "tanh":
        raise ValueError(f"gelu approximate must be 'none' or 'tanh', got {approximate!r}")
    cube = b.op("cuvil.mul", [b.op("cuvil.mul", [x, x]), x])
    inner = b.op("cuvil.add", [x, b.op("cuvil.mul", [cube, scalar(b, 0.044715, x)])])
    t = b.op("cuvil.tanh", [b.op("cuvil.mul", [inner, scalar(b, math.sqrt(2 / math.pi), x)])])
    half_x = b.op("cuvil.mul", [x, scalar(b, 0.5, x)])
    return b.op("cuvil.mul", [half_x, b.op("cuvil.add", [t, scalar(b, 1.0, x)])])


def silu(b: IRBuilder, x: Value) -> Value:
    """SiLU / swish: ``x * sigmoid(x)``."""
    return b.op("cuvil.mul", [x, b.op("cuvil.sigmoid", [x])])


def log_softmax(b: IRBuilder, x: Value, axis: int = -1) -> Value:
    """``x - max - log(sum(exp(x - max)))`` along ``axis`` (stable for large inputs)."""
    axis = normalize_axis(axis, len(x.type.shape))
    attrs = {"axes": (axis,), "keepdims": True}
    shifted = b.op("cuvil.sub", [x, b.op("cuvil.reduce_max", [x], attrs)])
    total = b.op("cuvil.reduce_sum", [b.op("cuvil.exp", [shifted])], attrs)
    return b.op("cuvil.sub", [shifted, b.op("cuvil.log", [total])])


def predicate(name: str) -> int:
    """The enum value of ``cuvil.compare``'s predicate ``name`` (``"lt"`` -> 2)."""
    from .numpy_tracer.ops import compare_predicate_value

    return compare_predicate_value(name)


def compare(b: IRBuilder, lhs: Value, rhs: Value, name: str) -> Value:
    """``lhs <name> rhs`` elementwise (``"eq"``, ``"lt"``, ...) as a boolean tensor."""
    return b.op("cuvil.compare", [lhs, rhs], {"predicate": predicate(name)})


# ----- contractions, layouts, arg-reductions (not in composites.py yet) ----------------


def dot_general(
    b: IRBuilder, lhs: Value, rhs: Value, contract: Sequence[Sequence[int]], batch=((), ())
) -> Value:
    """XLA's DotGeneral: contract ``contract[0]`` of ``lhs`` with ``contract[1]`` of ``rhs``.

    The result is (batch dims, lhs free dims, rhs free dims), computed as one
    ``cuvil.matmul`` of (B, M, K) by (B, K, N) after transposes and reshapes.
    """
    (lc, rc), (lb, rb) = [list(map(int, c)) for c in contract], [list(map(int, c)) for c in batch]
    ls, rs = lhs.type.shape, rhs.type.shape
    lf = [d for d in range(len(ls)) if d not in lc and d not in lb]
    rf = [d for d in range(len(rs)) if d not in rc and d not in rb]

    def size(shape, dims):
        return int(np.prod([shape[d] for d in dims], dtype=np.int64))

    k, m, n = size(ls, lc), size(ls, lf), size(rs, rf)
    batch_shape = [ls[d] for d in lb]
    lead = [size(ls, lb)] if lb else []
    lhs = reshape(b, transpose(b, lhs, lb + lf + lc), [*lead, m, k])
    rhs = reshape(b, transpose(b, rhs, rb + rc + rf), [*lead, k, n])
    product = b.op("cuvil.matmul", [lhs, rhs])
    return reshape(b, product, batch_shape + [ls[d] for d in lf] + [rs[d] for d in rf])


def conv2d_layout(
    b: IRBuilder,
    x: Value,
    weight: Value,
    *,
    input_layout: Sequence[int],
    weight_layout: Sequence[int],
    output_layout: Sequence[int],
    strides=(1, 1),
    padding=(0, 0, 0, 0),
    dilations=(1, 1),
    groups: int = 1,
) -> Value:
    """A convolution in any layout through NCHW ``cuvil.conv2d``.

    ``input_layout`` lists the input's (batch, channel, H, W) dimensions,
    ``weight_layout`` the weight's (out, in, KH, KW) ones, ``output_layout`` the
    output's (batch, channel, H, W) ones: NHWC is ``(0, 3, 1, 2)``, HWIO
    ``(3, 2, 0, 1)``. ``padding`` is (top, left, bottom, right).
    """
    attrs = {
        "strides": tuple(int(s) for s in strides),
        "padding": tuple(int(p) for p in padding),
        "dilations": tuple(int(d) for d in dilations),
        "groups": int(groups),
    }
    x = transpose(b, x, input_layout)
    weight = transpose(b, weight, weight_layout)
    y = b.op("cuvil.conv2d", [x, weight], attrs)
    return transpose(b, y, np.argsort(output_layout))


def pool2d_layout(
    b: IRBuilder,
    x: Value,
    kind: str,
    spatial: Sequence[int],
    kernel,
    strides,
    padding,
    count_include_pad: bool = True,
) -> Value:
    """Max (``kind="max"``) or average pooling over the two ``spatial`` dims of ``x``.

    The other dimensions are moved first and folded into one channel axis of an
    NCHW ``cuvil.<kind>_pool2d``; ``padding`` is (top, left, bottom, right);
    average pooling counts padded cells unless ``count_include_pad=False``.
    """
    rank, spatial = len(x.type.shape), [int(d) for d in spatial]
    others = [d for d in range(rank) if d not in spatial]
    moved = transpose(b, x, others + spatial)
    kept = [moved.type.shape[i] for i in range(len(others))]
    nchw = reshape(b, moved, [1, -1, *moved.type.shape[-2:]])
    attrs = {"kernel": tuple(kernel), "strides": tuple(strides), "padding": tuple(padding)}
    if kind == "avg" and not count_include_pad:
        attrs["count_include_pad"] = False
    y = b.op(f"cuvil.{kind}_pool2d", [nchw], attrs)
    y = reshape(b, y, kept + list(y.type.shape[-2:]))
    return transpose(b, y, np.argsort(others + spatial))


def arg_reduce(b: IRBuilder, x: Value, axis: int, kind: str, dtype: str) -> Value:
    """The first index of the maximum (``kind="max"``) or minimum along ``axis``, as ``dtype``."""
    rank = len(x.type.shape)
    axis = normalize_axis(axis, rank)
    size = x.type.shape[axis]
    extreme = b.op(f"cuvil.reduce_{kind}", [x], {"axes": (axis,), "keepdims": True})
    hit = compare(b, x, extreme, "eq")
    positions = np.arange(size, dtype=np.int64).reshape(
        [-1 if d == axis else 1 for d in range(rank)]
    )
    index = b.op("cuvil.where", [hit, b.constant(positions), scalar(b, size, "int64")])
    first = b.op("cuvil.reduce_min", [index], {"axes": (axis,)})
    return cast(b, first, dtype)


def einsum(b: IRBuilder, equation: str, lhs: Value, rhs: Value) -> Value:
    """A two-operand ``einsum`` (``"btnh,bsnh->bnts"``) as one :func:`dot_general`.

    Letters in both operands and the output are batch dimensions, in both but
    not the output contracted; a letter only in one operand and not in the
    output is summed first. Repeated letters within one operand are not
    supported (``ValueError``).
    """
    inputs, output = equation.replace(" ", "").split("->")
    left, right = inputs.split(",")
    for term in (left, right, output):
        if len(set(term)) != len(term) or "." in term:
            raise ValueError(f"einsum {equation!r}: repeated or ellipsis indices are not supported")

    def drop_unused(x: Value, term: str, other: str) -> tuple[Value, str]:
        unused = [i for i, c in enumerate(term) if c not in other and c not in output]
        if not unused:
            return x, term
        x = b.op("cuvil.reduce_sum", [x], {"axes": tuple(unused)})
        return x, "".join(c for i, c in enumerate(term) if i not in unused)

    lhs, left = drop_unused(lhs, left, right)
    rhs, right = drop_unused(rhs, right, left)
    batch = [c for c in left if c in right and c in output]
    contract = [c for c in left if c in right and c not in output]
    y = dot_general(
        b,
        lhs,
        rhs,
        ([left.index(c) for c in contract], [right.index(c) for c in contract]),
        ([left.index(c) for c in batch], [right.index(c) for c in batch]),
    )
    order = batch + [c for c in left if c not in batch + contract]
    order += [c for c in right if c not in batch + contract]
    return transpose(b, y, [order.index(c) for c in output])


@functools.cache
def has_gather() -> bool:
    """Whether the loaded compiler has ``cuvil.gather`` (it arrives with newer extensions)."""
    ext = _dtypes.extension()
    try:
        ext.infer_result_type(
            "cuvil.gather", ["tensor<2xf32>", "tensor<1xi64>"], "{axis = 0 : i64}"
        )
    except ext.TypeInferenceError:
        return False
    return True


def require_gather(unsupported, what: str) -> None:
    """Raise ``unsupported(what, fix)`` (an importer's error factory) without ``cuvil.gather``."""
    if not has_gather():
        raise unsupported(
            what,
            "Fix: this compiler has no run-time gather op (cuvil.gather); pass the gathered "
            "rows as an input, or make the indices constants of the function.",
        )


def gather(b: IRBuilder, data: Value, indices: Value, axis: int = 0) -> Value:
    """``np.take(data, indices, axis)`` with run-time integer ``indices`` (``cuvil.gather``).

    Negative indices count from the end; out-of-range ones are clamped.
    """
    axis = normalize_axis(axis, len(data.type.shape))
    return b.op("cuvil.gather", [data, indices], {"axis": axis})
