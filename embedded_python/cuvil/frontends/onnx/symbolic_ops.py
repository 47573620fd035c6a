"""Reshape, broadcast, Range and Slice with ONNX shape values of symbolic entries, as core ops.

A target entry that is a :class:`~.shapes.SymDim` becomes a ``?`` dim of the
op's type: ``cuvil.reshape`` derives it (from the element count, or group by
group) or, for several, takes the sizes read with ``cuvil.dim`` where they
came from; ``cuvil.broadcast_to`` takes it from its input or, where the input
has size 1, from a ``like`` tensor of the sizes read at run time
(:func:`~..composites.broadcast_to_sizes`). A symbolic ``Range`` limit or
``Slice`` end is read the same way and becomes ``cuvil.range``'s limit or a ``cuvil.slice`` limit.
"""

from __future__ import annotations

import numpy as np

from .. import composites as C
from ..base import compute_dtype
from ..builder import TensorType, Value
from ..symbolic_dims import (
    SymbolicSizeError,
    SymDim,
    missing_size,
    reshape_sizes,
    run_time_size,
    same_size,
    type_dims,
)
from .importer import NodeContext

__all__ = [
    "reshape",
    "broadcast",
    "arange",
    "slice_to_run_time_end",
    "require_static",
    "whole_axis",
]

_INT64_MAX = 2**63 - 1


def require_static(item) -> None:
    """Raise :class:`SymbolicSizeError` if ``item`` (a size or shape value) has symbolic entries."""
    for entry in np.asarray(item, dtype=object).reshape(-1):
        if isinstance(entry, SymDim):
            raise SymbolicSizeError(entry)


def whole_axis(start, stop, step) -> bool:
    """Whether a slice ``start:stop:step`` keeps a whole axis of any size."""
    return start in (None, 0) and step in (None, 1) and (stop is None or stop >= 2**31 - 1)


def reshape(ctx: NodeContext, x: Value, entries) -> Value:
    """``x`` reshaped to ``entries`` (ints, one ``-1``, SymDims), symbolic entries dynamic."""
    entries = [e if isinstance(e, SymDim) else int(e) for e in entries]
    if x.type.is_static and not any(isinstance(e, SymDim) for e in entries):
        return C.reshape(ctx.b, x, entries)
    current = ctx.importer.dims(x)
    if -1 in entries:
        entries[entries.index(-1)] = missing_size(current, entries)
    if len(current) == len(entries) and all(_same(a, b) for a, b in zip(current, entries)):
        return x
    dims = tuple(None if d == -1 else d for d in type_dims(entries))
    if all(d is not None for d in dims):
        # A dynamic tensor reshaped to a static shape: the compiler checks the count at run time.
        return ctx.b.op("cuvil.reshape", [x], result_type=TensorType(dims, x.type.dtype))
    sizes = reshape_sizes(ctx.b, entries)
    if sizes is not None:
        return C.reshape(ctx.b, x, dims, sizes)
    result = ctx.b.op("cuvil.reshape", [x], result_type=TensorType(dims, x.type.dtype))
    if sum(d is None for d in dims) > 1:
        _check_derived_sizes(ctx, result, entries)
    return result


def _same(a, b) -> bool:
    if isinstance(a, SymDim) or isinstance(b, SymDim):
        return isinstance(a, SymDim) and isinstance(b, SymDim) and same_size(a, b)
    return a == b


def _check_derived_sizes(ctx: NodeContext, result: Value, entries) -> None:
    """Refuse a reshape whose dynamic sizes the compiler would derive differently."""
    for axis, (derived, wanted) in enumerate(zip(ctx.importer.dims(result), entries)):
        if not (isinstance(derived, SymDim) and isinstance(wanted, SymDim)):
            continue
        if "?" in (derived.expr, wanted.expr) or same_size(derived, wanted):
            continue
        raise ctx.unsupported(
            f"a reshape to {[str(e) for e in entries]} whose dim {axis} ({wanted}) is not the "
            f"size the compiler derives from the input ({derived}); fix: pass a static "
            "input_spec"
        )


def arange(ctx: NodeContext, start, limit: SymDim, delta) -> Value:
    """``Range(start, limit, delta)`` up to the run-time size ``limit``: a ``cuvil.range``."""
    for name, bound in (("start", start), ("delta", delta)):
        if isinstance(np.asarray(bound, dtype=object).reshape(-1)[0], SymDim):
            raise ctx.unsupported(
                f"a Range whose {name} is the symbolic size {bound} (only its limit may be "
                "symbolic); fix: pass a static input_spec"
            )
    start, delta = np.asarray(start).reshape(-1)[0], np.asarray(delta).reshape(-1)[0]
    if int(start) != start or int(delta) != delta or delta < 1:
        raise ctx.unsupported(
            f"a Range from {start} by {delta} up to the symbolic size {limit}: with a symbolic "
            "limit Cuvil needs an integer start and a positive integer delta; fix: pass a static "
            "input_spec"
        )
    dtype = compute_dtype(np.asarray(start).dtype.name)
    return ctx.b.op(
        "cuvil.range",
        [run_time_size(ctx.b, limit)],
        {"start": int(start), "step": int(delta)},
        result_type=TensorType((None,), dtype),
    )


def slice_to_run_time_end(ctx: NodeContext, x: Value, axis: int, item: slice) -> Value:
    """``x`` sliced along ``axis`` by ``item``, whose end is a symbolic size read at run time."""
    start, step = item.start or 0, 1 if item.step is None else item.step
    if isinstance(start, SymDim) or start < 0 or step < 1:
        raise ctx.unsupported(
            f"a Slice of axis {axis} from {start} by {step} up to the symbolic end {item.stop}: "
            "with a symbolic end Cuvil needs a static start >= 0 and a step >= 1; fix: pass a "
            "static input_spec"
        )
    limit = run_time_size(ctx.b, item.stop)
    size = x.type.shape[axis]
    if isinstance(size, int) and (item.stop.expr or "").isidentifier():
        # A 16-row mask sliced to the sequence: the result is the sequence long while it fits.
        ctx.b.assume(item.stop.expr, lowest=start, highest=size)
    return C.slice_axis(ctx.b, x, axis, start, limit, step)


def broadcast(ctx: NodeContext, x: Value, target) -> Value:
    """``x`` broadcast with ONNX ``Expand`` rules to ``target`` (ints and SymDims)."""
    shape = list(ctx.importer.dims(x))
    rank = max(len(shape), len(target))
    shape = [1] * (rank - len(shape)) + shape
    target = [1] * (rank - len(target)) + list(target)
    sizes = []
    for have, want in zip(shape, target):
        if not isinstance(want, SymDim):
            sizes.append(int(want))
        elif isinstance(have, SymDim):
            sizes.append(1)  # x's own dynamic size
        else:
            sizes.append(run_time_size(ctx.b, want))
    if rank > len(x.type.shape):
        x = reshape(ctx, x, shape)
    return C.broadcast_to_sizes(ctx.b, x, sizes)
