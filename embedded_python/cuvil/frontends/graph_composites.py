"""Compositions the JAX and TensorFlow importers add to :mod:`cuvil.frontends.composites`.

Like that module's functions, each takes the :class:`~cuvil.frontends.IRBuilder`
and its :class:`~cuvil.frontends.Value` operands, appends cuvil ops at the
builder's current location and returns the result: comparisons by predicate
name, XLA's ``dot_general`` and two-operand ``einsum``, convolution and
pooling in any layout (NHWC, HWIO) around cuvil's NCHW ops, and
arg-reductions. They are framework-neutral and can move into ``composites``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .builder import IRBuilder, Value
from .composites import cast, normalize_axis, reshape, scalar, transpose

__all__ = [
    "predicate",
    "compare",
    "dot_general",
    "einsum",
    "conv2d_layout",
    "pool2d_layout",
    "arg_reduce",
]


def predicate(name: str) -> int:
    """The enum value of ``cuvil.compare``'s predicate ``name`` (``"lt"`` -> 2)."""
    from .numpy_tracer.ops import compare_predicate_value

    return compare_predicate_value(name)


def compare(b: IRBuilder, lhs: Value, rhs: Value, name: str) -> Value:
    """``lhs <name> rhs`` elementwise (``"eq"``, ``"lt"``, ...) as a boolean tensor."""
    return b.op("cuvil.compare", [lhs, rhs], {"predicate": predicate(name)})


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
        sizes = [shape[d] for d in dims]
        if not all(isinstance(d, int) for d in sizes):
            return None  # a dynamic (symbolic) size: the reshapes derive it
        return int(np.prod(sizes, dtype=np.int64))

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
