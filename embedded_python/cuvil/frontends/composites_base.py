"""The building blocks of every composite: scalars, axes, reshapes, slices, casts, comparisons.

Shared by :mod:`cuvil.frontends.composites` (which re-exports them) and its
``composites_*.py`` parts, and by the importers through ``composites``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .builder import IRBuilder, TensorType, Value

__all__ = [
    "DYNAMIC",
    "scalar",
    "normalize_axis",
    "reshape",
    "transpose",
    "broadcast_to",
    "broadcast_to_sizes",
    "sized_like",
    "cast",
    "slice_axis",
    "slice_symbolic_axis",
    "concat",
    "pad",
    "predicate",
    "compare",
    "matmul",
]


#: A limit given at run time in ``cuvil.slice``'s ``limit`` list (MLIR's ``ShapedType::kDynamic``).
DYNAMIC = -(2**63)


def scalar(b: IRBuilder, value, like: Value | str) -> Value:
    """A rank-0 constant ``value`` of ``like``'s dtype (a Value or a dtype-table name)."""
    dtype = like if isinstance(like, str) else like.type.dtype
    return b.constant(np.asarray(value, dtype=dtype))


def normalize_axis(axis: int, rank: int) -> int:
    """``axis`` in ``[0, rank)`` (negative counts from the end); ``ValueError`` if out of range."""
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"axis {axis} is out of range for rank {rank}")
    return axis % max(rank, 1)


def _dynamic_dims(shape) -> tuple:
    """``shape`` with each dynamic dim (a symbol name or ``None``) as ``None``."""
    return tuple(None if d is None or isinstance(d, str) else int(d) for d in shape)


def reshape(b: IRBuilder, x: Value, shape: Sequence[int], sizes: Sequence[Value] = ()) -> Value:
    """``x`` with ``shape`` (at most one ``-1``); no op when the shape is unchanged.

    With dynamic dims (``None`` or a symbol name, in ``shape`` or in ``x``),
    a ``-1`` and the dynamic dims stay ``?``: the compiler derives their sizes,
    or takes them from ``sizes`` (one run-time size per ``?`` of the result,
    see :meth:`IRBuilder.dim`), which several dynamic dims that are not whole
    dims of ``x`` need (``[N*T, C]`` into ``[N, T, C]``).
    """
    dims, current = _dynamic_dims(shape), _dynamic_dims(x.type.shape)
    if None not in current and dims.count(None) == 1:
        dims = tuple(-1 if d is None else d for d in dims)  # static input: its size is known
    if None in dims or None in current:
        dims = tuple(None if d == -1 else d for d in dims)
        if dims == current and (not sizes or _own_sizes(b, x, sizes)):
            return x
        operands = [x, *sizes] if dims.count(None) > 1 else [x]
        return b.op("cuvil.reshape", operands, result_type=TensorType(dims, x.type.dtype))
    shape = list(dims)
    size = int(np.prod(x.type.shape, dtype=np.int64))
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        shape[shape.index(-1)] = size // known if known else 0
    if tuple(shape) == x.type.shape:
        return x
    return b.op("cuvil.reshape", [x], result_type=TensorType(tuple(shape), x.type.dtype))


def _own_sizes(b: IRBuilder, x: Value, sizes: Sequence[Value]) -> bool:
    """Whether ``sizes`` are ``x``'s own dynamic sizes, in order."""
    own = [b.dim(x, d) for d, size in enumerate(x.type.shape) if not isinstance(size, int)]
    return [v.name for v in own] == [v.name for v in sizes]


def transpose(b: IRBuilder, x: Value, perm: Sequence[int]) -> Value:
    """``x`` with its dimensions permuted; no op for the identity permutation."""
    perm = tuple(normalize_axis(int(p), len(x.type.shape)) for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    return b.op("cuvil.transpose", [x], {"permutation": perm})


def broadcast_to(b: IRBuilder, x: Value, shape: Sequence[int]) -> Value:
    """``x`` broadcast to ``shape`` with NumPy rules; no op when already that shape.

    A dynamic dim of ``shape`` (``None`` or a symbol name) is ``x``'s size there.
    """
    shape = _dynamic_dims(shape)
    if shape == _dynamic_dims(x.type.shape):
        return x
    return b.op("cuvil.broadcast_to", [x], result_type=TensorType(shape, x.type.dtype))


def broadcast_to_sizes(b: IRBuilder, x: Value, sizes: Sequence) -> Value:
    """``x`` broadcast with NumPy rules to ``sizes``: ints and run-time sizes (index Values).

    A run-time size where ``x`` has size 1 is a dynamic broadcast, which takes
    its sizes from a :func:`sized_like` tensor; where ``x``'s dim is dynamic
    already, it is ``x``'s size there. A static 1 keeps ``x``'s size.
    """
    rank = len(sizes)
    if len(x.type.shape) < rank:
        x = reshape(b, x, (1,) * (rank - len(x.type.shape)) + tuple(x.type.shape))
    dims, needs_like = [], False
    for have, want in zip(_dynamic_dims(x.type.shape), sizes):
        if isinstance(want, Value):
            dims.append(None)
            needs_like = needs_like or have is not None
        else:
            dims.append(have if int(want) == 1 else int(want))
    if tuple(dims) == _dynamic_dims(x.type.shape) and not needs_like:
        return x
    if not needs_like:
        return b.op("cuvil.broadcast_to", [x], result_type=TensorType(tuple(dims), x.type.dtype))
    # The like has the result's shape: x's own dynamic sizes too.
    like_sizes = [
        d if d is not None else b.dim(x, axis) if have is None else want
        for axis, (d, have, want) in enumerate(zip(dims, _dynamic_dims(x.type.shape), sizes))
    ]
    operands = [x, sized_like(b, like_sizes)]
    return b.op("cuvil.broadcast_to", operands, result_type=TensorType(tuple(dims), x.type.dtype))


def sized_like(b: IRBuilder, sizes: Sequence) -> Value:
    """An ``int64`` tensor of shape ``sizes`` (ints and index Values) whose values are unused.

    The ``like`` operand of a dynamic ``cuvil.broadcast_to``: a ``cuvil.range``
    per run-time size, summed into shape, so no data is read to size it.
    """
    static = tuple(1 if isinstance(s, Value) else int(s) for s in sizes)
    like = b.constant(np.zeros(static, np.int64))
    for axis, size in enumerate(sizes):
        if not isinstance(size, Value):
            continue
        attrs = {"start": 0, "step": 1}
        line = b.op("cuvil.range", [size], attrs, result_type=TensorType((None,), "int64"))
        piece = [1] * len(sizes)
        piece[axis] = None
        line = b.op("cuvil.reshape", [line], result_type=TensorType(tuple(piece), "int64"))
        like = b.op("cuvil.add", [like, line])
    return like


def cast(b: IRBuilder, x: Value, dtype: str) -> Value:
    """``x`` converted to dtype ``dtype`` (a table name), NumPy ``astype`` semantics."""
    if x.type.dtype == dtype:
        return x
    return b.op("cuvil.cast", [x], result_type=TensorType(x.type.shape, dtype))


def slice_axis(b: IRBuilder, x: Value, axis: int, start: int, limit, step: int = 1) -> Value:
    """``x[..., start:limit:step, ...]`` along ``axis`` (positive step), a ``cuvil.slice``.

    ``limit`` is an int, or a size known at run time (an index value from
    :meth:`IRBuilder.dim`, clamped to the axis as in Python slicing). On a
    symbolic ``axis`` a static limit is read at run time too (a negative one
    from the end). Where the result's size holds only for some sizes of a
    symbol (``x[:, :4]`` needs ``T >= 4``, a 16-row mask sliced to ``T`` needs
    ``T <= 16``), the range is recorded (:meth:`IRBuilder.assume`) and every
    call checks it. Dims of ``x`` kept whole that are dynamic keep their
    run-time size.
    """
    shape = x.type.shape
    run_time = isinstance(limit, Value)
    if not run_time and (start, limit, step) == (0, shape[axis], 1):
        return x
    if not run_time and not isinstance(shape[axis], int) and start < 0:
        return _from_the_end(b, x, axis, start, limit, step)
    # A static range of a symbolic axis (``x[1:3]``) has a static size while the axis
    # reaches the limit, which each call checks: the result says so (below).
    static_size = None
    if not run_time and not isinstance(shape[axis], int) and 0 <= start and limit < 2**31 - 1:
        static_size = len(range(start, limit, step)) if limit >= 0 else None
    if not run_time and not isinstance(shape[axis], int):
        limit, run_time = _symbolic_axis_limit(b, x, axis, start, limit), True
    elif run_time and isinstance(shape[axis], int):
        # Up to a run-time size on a static axis (a 16-row mask sliced to the sequence): the
        # result is that size only while it fits, which each call checks.
        b.assume(limit, lowest=start, highest=shape[axis])
    starts, limits, steps, operands = [0] * len(shape), [], [1] * len(shape), [x]
    starts[axis], steps[axis] = start, step
    for d, size in enumerate(shape):
        bound = limit if d == axis else size if isinstance(size, int) else b.dim(x, d)
        if isinstance(bound, Value):
            operands.append(bound)
            bound = DYNAMIC
        limits.append(bound)
    result = b.op("cuvil.slice", operands, {"start": starts, "limit": limits, "step": steps})
    if static_size:
        # Broadcasting and shape rules then see the static size (a one-element slice
        # broadcasts like NumPy's, not like an unknown size).
        sized = list(result.type.shape)
        sized[axis] = static_size
        result = b.op(
            "cuvil.reshape", [result], result_type=TensorType(tuple(sized), result.type.dtype)
        )
    # The dims kept whole keep their symbol names (x[:-1] still has x's width M), so later
    # slices of them can state the sizes they assume.
    named = tuple(
        size if d != axis and isinstance(size, str) else result.type.shape[d]
        for d, size in enumerate(shape)
    )
    if named != result.type.shape:
        result = Value(result.name, TensorType(named, result.type.dtype))
    return result


def slice_symbolic_axis(b: IRBuilder, x: Value, axis: int, item: slice) -> Value:
    """``x`` sliced along its symbolic ``axis`` by a Python slice with static bounds (``1:``,
    ``-2:``, ``:-1``; ``None`` for either end), through :func:`slice_axis`; ``ValueError``
    for a step below 1 or bounds a symbolic axis cannot take."""
    step = 1 if item.step is None else int(item.step)
    if step < 1:
        raise ValueError(
            f"cannot slice the symbolic axis {axis} of a tensor of shape {x.type.shape} by the "
            f"step {step}: a symbolic axis is sliced with a positive step; fix: give that dim "
            "a static size (a static input_spec)"
        )
    start = 0 if item.start is None else int(item.start)
    stop = 2**63 - 1 if item.stop is None else min(int(item.stop), 2**63 - 1)
    return slice_axis(b, x, axis, start, stop, step)


def _from_the_end(b: IRBuilder, x: Value, axis: int, start: int, limit: int, step: int) -> Value:
    """``x[..., start:limit:step]`` of a symbolic axis from a negative ``start`` (the last
    tokens of a sequence): a gather of the indices counted from the end, which wrap at run
    time. ``limit`` is negative too, or the end; the axis must be at least ``-start`` long."""
    from .composites_index import gather

    stop = 0 if limit >= 2**31 - 1 else limit
    if stop > 0 or stop <= start:
        raise ValueError(
            f"cannot slice the symbolic axis {axis} of a tensor of shape {x.type.shape} from "
            f"{start} to {limit}: a slice from the end must stop at the end or before it (a "
            "negative limit) and hold an element; fix: give that dim a static size (a static "
            "input_spec)"
        )
    return gather(b, x, np.arange(start, stop, step, dtype=np.int64), axis)


def _require_symbol_name(x: Value, axis: int, start: int, limit: int) -> None:
    """A static limit on a symbolic axis holds only while the axis reaches it: the axis needs
    a symbol name for each call to check that (``ValueError`` otherwise)."""
    if x.type.shape[axis] is None:
        raise ValueError(
            f"cannot slice the symbolic axis {axis} of a tensor of shape {x.type.shape} from "
            f"{start} to the static limit {limit}: the axis has no symbol name to check its "
            "size against; fix: slice up to a run-time size (a dim of an input) or give that "
            "dim a static size (a static input_spec)"
        )


def _symbolic_axis_limit(b: IRBuilder, x: Value, axis: int, start: int, limit: int) -> Value:
    """The run-time limit of a slice of ``x``'s symbolic ``axis`` from ``start`` to a static
    ``limit`` (negative: from the end; 2**31 - 1 and above: to the end). The result's size
    is ``limit - start`` only while the axis reaches the limit: a size the call checks."""
    size = x.type.shape[axis]
    _require_symbol_name(x, axis, start, limit)
    dim = b.dim(x, axis)
    if limit >= 2**31 - 1:
        b.assume(size, lowest=start)
        return dim
    if limit < 0:
        b.assume(size, lowest=start - limit)
        return b.index_op("arith.addi", dim, b.index_constant(limit))
    b.assume(size, lowest=max(limit, start))
    return b.index_constant(limit)


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


def predicate(name: str) -> int:
    """The enum value of ``cuvil.compare``'s predicate ``name`` (``"lt"`` -> 2)."""
    from .numpy_tracer.ops import compare_predicate_value

    return compare_predicate_value(name)


def compare(b: IRBuilder, lhs: Value, rhs: Value, name: str) -> Value:
    """``lhs <name> rhs`` elementwise (``"eq"``, ``"lt"``, ...) as a boolean tensor."""
    return b.op("cuvil.compare", [lhs, rhs], {"predicate": predicate(name)})


def matmul(b: IRBuilder, x: Value, y: Value) -> Value:
    """NumPy ``x @ y``: a 1-D operand is a row (left) or column (right), removed afterwards."""
    rx, ry = len(x.type.shape), len(y.type.shape)
    x2 = reshape(b, x, (1, -1)) if rx == 1 else x
    y2 = reshape(b, y, (-1, 1)) if ry == 1 else y
    result = b.op("cuvil.matmul", [x2, y2])
    shape = list(result.type.shape)
    if ry == 1:
        shape.pop(-1)
    if rx == 1:
        shape.pop(-2 if ry >= 2 else -1)
    return reshape(b, result, shape)
