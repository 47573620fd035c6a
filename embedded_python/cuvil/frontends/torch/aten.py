"""The ATen operator table: which lowering builds each op, argument binding, folding, dtypes.

A lowering is ``fn(importer, **arguments)`` registered with :func:`lowers`
under the op's packet name (``"aten.add"``); ``arguments`` are the op's schema
arguments by name, defaults filled in, so one lowering serves every overload
(``add.Tensor`` and ``add.Scalar``). Lowerings live in ``ops_*.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..base import computed_array, op_registrar

__all__ = [
    "lowers",
    "lowering",
    "supported_ops",
    "op_name",
    "bind",
    "foldable",
    "fold",
    "dtype_name",
    "torch_dtype",
    "supported_constant",
    "NotComputed",
]

_LOWERINGS: dict[str, Callable] = {}
# Ops whose result is not a function of their inputs: never folded.
_NOT_FOLDABLE = ("rand", "bernoulli", "normal", "native_dropout", "uniform", "multinomial")


class NotComputed:
    """A result of a multi-result op that the importer does not compute (batch norm's saved
    statistics, max pooling's indices): using it raises the importer's unsupported error."""

    def __init__(self, what: str):
        self.what = what

    def __repr__(self) -> str:
        return f"NotComputed({self.what!r})"


# ``@lowers("aten.add")`` registers the lowering of those ATen op packets.
lowers = op_registrar(_LOWERINGS)


def lowering(name: str) -> Callable | None:
    """The lowering of the ATen op packet ``name`` (``"aten.add"``), or ``None``."""
    return _LOWERINGS.get(name)


def supported_ops() -> tuple[str, ...]:
    """The ATen op packets the importer lowers, sorted (folded-only ops are not listed)."""
    return tuple(sorted(_LOWERINGS))


def op_name(target) -> str | None:
    """``"aten.add"`` for ``torch.ops.aten.add.Tensor``; ``None`` for a non-ATen callable."""
    import torch

    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}.{target._schema.name.split('::')[-1]}"
    if isinstance(target, torch._ops.OpOverloadPacket):
        return f"{target._qualified_op_name.replace('::', '.')}"
    return None


def bind(target, args, kwargs) -> dict:
    """The op's arguments by schema name, with the schema's defaults for those not given."""
    schema = target._schema
    bound = {}
    for index, argument in enumerate(schema.arguments):
        if index < len(args) and not argument.kwarg_only:
            bound[argument.name] = args[index]
        elif argument.name in kwargs:
            bound[argument.name] = kwargs[argument.name]
        elif argument.has_default_value():
            bound[argument.name] = argument.default_value
    return bound


def foldable(name: str) -> bool:
    """Whether op ``name`` on constants may be computed now (it is deterministic)."""
    return not any(word in name for word in _NOT_FOLDABLE)


def fold(target, args, kwargs):
    """Run the ATen op on constant (NumPy) inputs; the results as NumPy, or ``None`` if it fails."""
    import torch

    def to_torch(value):
        if isinstance(value, np.ndarray):
            return torch.from_numpy(np.array(value))
        if isinstance(value, (list, tuple)):
            return type(value)(to_torch(v) for v in value)
        return value

    def to_numpy(value):
        if isinstance(value, torch.Tensor):
            if value.dtype == torch.bfloat16:
                raise TypeError("bfloat16 has no NumPy type")
            return value.detach().cpu().numpy().copy()
        if isinstance(value, (list, tuple)):
            return tuple(to_numpy(v) for v in value)
        return value

    with torch.no_grad():
        try:
            if op_name(target).startswith("aten.empty") or op_name(target) == "aten.new_empty":
                # Uninitialized memory: zeros are as good a value as any.
                result = torch.zeros_like(target(*to_torch(args), **to_torch(kwargs)))
            else:
                result = target(*to_torch(args), **to_torch(kwargs))
            return to_numpy(result)
        except (RuntimeError, TypeError, ValueError):
            return None


def dtype_name(dtype) -> str:
    """The dtype-table name of a ``torch.dtype`` (``torch.float32`` -> ``"float32"``)."""
    return str(dtype).removeprefix("torch.")


def torch_dtype(name: str):
    """The ``torch.dtype`` of a dtype-table name."""
    import torch

    return getattr(torch, name)


def supported_constant(importer, array: np.ndarray) -> np.ndarray:
    """``array`` (float16 widened to float32) if Cuvil compiles its dtype, else the importer's
    unsupported error."""
    return computed_array(array, importer.unsupported)


# Registers the lowerings.
from . import ops_math, ops_nn, ops_shape  # noqa: E402,F401
