"""Undoable merges of symbolic dims: how the PyTorch importer avoids splitting one dynamic size.

ATen's decompositions flatten leading dims around a matrix product: a linear
layer on ``[b, t, c]`` is ``view [b*t, c]``, ``addmm``, ``view [b, t, n]``;
attention's ``bmm`` runs on ``[b*h, t, d]`` and is viewed back to
``[b, h, t, t]``. With ``b`` and ``t`` both symbolic the view back splits one
dynamic size into two, which the compiler cannot size (``cuvil.reshape``
needs static sizes for all but one result dim). So the importer remembers,
for each reshape that merges leading dims, the value it merged; a matrix
product of merged values is computed on the unmerged ones (``cuvil.matmul``
broadcasts and batches any leading dims), its result remembered as merged
too, and a view back to the unmerged dims returns the unmerged value: no
split is ever built.

Dims are compared as the graph's own size expressions (sympy, from each FX
node's ``meta["val"]``), so only provably equal sizes match.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import composites
from ..builder import Value

__all__ = [
    "Merged",
    "Deferred",
    "MergeOnly",
    "LeadingBroadcast",
    "dims_of",
    "unmerged",
    "merge_of",
    "record_merge",
    "matmul_unmerged",
    "merged_result",
    "compiler_regroups_exactly",
    "reshape_refusal",
]


@dataclass(frozen=True)
class Merged:
    """``value`` (unmerged, with ``dims``) whose first ``count`` dims were merged into one."""

    value: Value
    dims: tuple
    count: int

    @property
    def rank(self) -> int:
        """The rank of the merged tensor."""
        return len(self.dims) - self.count + 1


class Deferred:
    """A view kept only for a matrix product or a view back; any other use raises ``reason``."""

    reason: str


@dataclass(frozen=True)
class MergeOnly(Deferred):
    """A merge the compiler cannot size (the importer's refusal of the reshape: ``reason``)."""

    merged: Merged
    reason: str


@dataclass(frozen=True)
class LeadingBroadcast(Deferred):
    """``value`` expanded over new leading dims of symbolic size (``dims``: the expanded dims).

    ``torch.export`` runs a linear layer on a non-contiguous ``[b, t, c]`` as a
    ``bmm`` with the weight expanded to ``[b, c, n]``; ``cuvil.matmul``
    broadcasts the weight itself, so the expansion is never built.
    """

    value: Value
    dims: tuple
    reason: str


def _table(c) -> dict:
    # One table per import, on the importer: merged IR value id -> (value, Merged).
    table = getattr(c, "_merged_dims", None)
    if table is None:
        table = c._merged_dims = {}
    return table


def dims_of(node) -> tuple | None:
    """An FX node's result dims as ints and sympy expressions, ``None`` without a shape."""
    val = node.meta.get("val") if hasattr(node, "meta") else None
    if isinstance(val, (tuple, list)):
        val = val[0] if val else None
    shape = getattr(val, "shape", None)
    if shape is None:
        return None
    return tuple(d.node.expr if hasattr(d, "node") else int(d) for d in shape)


def _symbolic(dims) -> bool:
    return any(not isinstance(d, int) for d in dims)


def unmerged(c, x) -> Merged | None:
    """What ``x`` (an IR value or a :class:`MergeOnly`) was merged from, if it is a merge."""
    if isinstance(x, MergeOnly):
        return x.merged
    entry = _table(c).get(id(x)) if isinstance(x, Value) else None
    return entry[1] if entry is not None and entry[0] is x else None


def merge_of(source: Value, source_dims, target_dims) -> Merged | None:
    """``source`` with its leading dims merged into the first of ``target_dims``, if it is."""
    if source_dims is None or target_dims is None or not _symbolic(source_dims):
        return None
    count = len(source_dims) - (len(target_dims) - 1)
    if count < 2 or tuple(source_dims[count:]) != tuple(target_dims[1:]):
        return None
    if not _equal(_product(source_dims[:count]), target_dims[0]):
        return None
    return Merged(source, tuple(source_dims), count)


def record_merge(c, merged: Value, source: Value, source_dims, target_dims) -> None:
    """Remember ``merged`` as ``source`` with its leading dims merged, if that is what it is."""
    merge = merge_of(source, source_dims, target_dims)
    if merge is not None:
        _table(c)[id(merged)] = (merged, merge)


def _product(dims):
    result = 1
    for d in dims:
        result = result * d
    return result


def matmul_unmerged(c, x, y, as_value) -> tuple[Value, tuple] | None:
    """``x @ y`` on the unmerged operands when ``x`` is a merge, else ``None``.

    ``y`` is a 2-D weight (broadcast over every leading dim) or merged with
    the same leading dims as ``x``; ``as_value`` makes an operand an IR value
    of the product's dtype. Returns the unmerged product and its dims.
    """
    if isinstance(y, LeadingBroadcast) and not isinstance(x, Deferred):
        x = as_value(x)
        product = composites.matmul(c.b, x, as_value(y.value))
        return product, None
    mx = unmerged(c, x)
    if mx is None:
        return None
    my = unmerged(c, y)
    if my is None and mx.rank == 2 and not isinstance(y, MergeOnly):
        other = as_value(y)
        if len(other.type.shape) != 2 or not isinstance(other.type.shape[-1], int):
            return None
        last = other.type.shape[-1]
    elif my is not None and mx.rank == my.rank == 3 and my.dims[: my.count] == mx.dims[: mx.count]:
        other, last = as_value(my.value), my.dims[-1]
    else:
        return None
    product = composites.matmul(c.b, as_value(mx.value), other)
    return product, mx.dims[:-1] + (last,)


def merged_result(c, product: Value, dims: tuple | None, result_dims) -> Value | MergeOnly:
    """The merged form of an unmerged ``product`` (what the graph's node returns), recorded;
    ``dims`` ``None``: the product is the node's result as it is."""
    if dims is None:
        return product
    target = dims_of(c.node)
    if list(result_dims).count(None) > 1 and not compiler_regroups_exactly(dims, target):
        merge = merge_of(product, dims, target)
        if merge is not None:
            return MergeOnly(merge, reshape_refusal(dims, target))
    result = composites.reshape(c.b, product, result_dims)
    record_merge(c, result, product, dims, target)
    return result


def reshape_refusal(source_dims, target_dims) -> str:
    """Why a reshape between these symbolic dims is not imported."""
    return (
        f"reshaping dims {_text(source_dims)} into {_text(target_dims)} regroups symbolic "
        "sizes in a way the compiler cannot size (it splits or merges several dynamic dims)"
    )


def _text(dims) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]" if dims is not None else "[?]"


def compiler_regroups_exactly(source_dims, target_dims) -> bool:
    """Whether the compiler's reading of a reshape with several dynamic result dims is right.

    ``cuvil.reshape`` between shapes with dynamic dims regroups them as MLIR's
    ``getReassociationIndicesForReshape`` does: each dynamic dim of the
    smaller rank takes one dynamic dim of the other (after size-1 dims), and
    trailing dynamic dims join the last group. That guess is only right when the true
    grouping, read from the graph's size expressions, is the same: ``[b, t, c]
    -> [b*t, c]`` would be read as ``[b, t*c]``.
    """
    if source_dims is None or target_dims is None:
        return False
    if len(source_dims) < len(target_dims):  # an expansion: the same rule read backwards
        source_dims, target_dims = target_dims, source_dims
    groups = _true_groups(source_dims, target_dims)
    if groups is None:
        return False
    for index, (group, size) in enumerate(zip(groups, target_dims)):
        sizes = [source_dims[i] for i in group if source_dims[i] != 1]
        if isinstance(size, int):
            if not all(isinstance(d, int) for d in sizes):
                return False
            continue
        last = index == len(groups) - 1
        if not sizes or any(isinstance(d, int) for d in sizes) or (len(sizes) > 1 and not last):
            return False
    return True


def _true_groups(source_dims, target_dims) -> list | None:
    """Consecutive input dims whose product is each result dim, or ``None``."""
    groups, i = [], 0
    for size in target_dims:
        group, product = [], 1
        while i < len(source_dims):
            group.append(i)
            product = product * source_dims[i]
            i += 1
            if _equal(product, size):
                break
        if not group or not _equal(product, size):
            return None
        groups.append(group)
    while i < len(source_dims) and source_dims[i] == 1:
        groups[-1].append(i)
        i += 1
    return groups if i == len(source_dims) and groups else None


def _equal(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    try:
        import sympy

        return sympy.expand(a - b) == 0
    except (TypeError, AttributeError):
        return False
