"""Cuvil's element types, read from the compiler's one dtype table, and NumPy promotion helpers.

The table lives in C++ (``mlir::cuvil::dtypes()``, DTypes.h); every list here
is derived from it. Front ends accept the dtypes the table marks ``compiled``
that NumPy has: float32, float64, int32, int64 and bool today.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DType",
    "table",
    "by_name",
    "by_mlir",
    "supported_dtypes",
    "supported_names",
    "is_supported",
    "mlir_element_type",
    "dtype_from_name",
    "ufunc_loop_dtypes",
    "compute_dtype",
    "is_boundary_dtype",
    "is_traceable",
]


def extension():
    """The compiled ``cuvil._cuvil`` module, which holds the dtype table and the shape rules."""
    from . import _native

    return _native.load()


@dataclass(frozen=True)
class DType:
    """One row of the dtype table."""

    name: str  # "float32"; NumPy's name where NumPy has the type
    mlir: str  # "f32"
    itemsize: int
    in_numpy: bool
    compiled: bool  # front ends may produce it; the CPU pipeline compiles it

    @property
    def numpy(self) -> np.dtype | None:
        return np.dtype(self.name) if self.in_numpy else None


@functools.cache
def table() -> tuple[DType, ...]:
    """Every element type of Cuvil IR, in the compiler's order."""
    return tuple(DType(**row) for row in extension().dtypes())


@functools.cache
def _by_name() -> dict[str, DType]:
    return {d.name: d for d in table()}


@functools.cache
def _by_mlir() -> dict[str, DType]:
    return {d.mlir: d for d in table()}


def by_name(name: str) -> DType:
    """The table row named ``name`` ("float32"); ``KeyError`` for unknown names."""
    return _by_name()[name]


def by_mlir(element: str) -> DType:
    """The table row of an MLIR element type ("f32")."""
    return _by_mlir()[element]


@functools.cache
def supported_dtypes() -> dict[np.dtype, str]:
    """NumPy dtype -> MLIR element type, for the dtypes front ends accept."""
    return {d.numpy: d.mlir for d in table() if d.compiled and d.in_numpy}


@functools.cache
def supported_names() -> str:
    """``"float32, float64, int32, int64, bool"``: the accepted dtypes, for messages."""
    return ", ".join(d.name for d in supported_dtypes())


# Dtypes an imported model may take and return although the pipeline does not compile
# them: the model computes in the mapped dtype inside, and the compiled model converts its
# arguments and results at the boundary (float16 -> float32 -> float16).
_COMPUTED_AS = {"float16": "float32"}


def compute_dtype(name: str) -> str:
    """The dtype-table name Cuvil computes a framework dtype ``name`` in (float16 -> float32)."""
    return _COMPUTED_AS.get(name, name)


def is_boundary_dtype(dtype) -> bool:
    """True for dtypes a model's inputs and outputs may have but that are computed in another
    (:func:`compute_dtype`): float16."""
    try:
        return np.dtype(dtype).name in _COMPUTED_AS
    except TypeError:
        return False


BOOL = np.dtype(np.bool_)
FLOAT64 = np.dtype(np.float64)
INT64 = np.dtype(np.int64)


def is_supported(dtype) -> bool:
    """True for the accepted dtypes (:func:`supported_dtypes`) in native byte order."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        return False
    return dtype.isnative and dtype in supported_dtypes()


@functools.cache
def traceable_dtypes() -> frozenset:
    """The native dtypes :func:`is_traceable` accepts (a set: the jit checks every argument
    of every call against it)."""
    return frozenset(supported_dtypes()) | {np.dtype(name) for name in _COMPUTED_AS}


def is_traceable(dtype) -> bool:
    """True for the dtypes the NumPy tracer follows: the accepted ones and float16, which
    it traces with NumPy's own promotion rules and the compiled code computes in float32
    (``cuvil-widen-f16``)."""
    try:
        return np.dtype(dtype) in traceable_dtypes()
    except TypeError:
        return False


def mlir_element_type(dtype) -> str:
    """MLIR element type (``f32``, ``i1``, ...) of a dtype in the table (a name or NumPy dtype)."""
    if isinstance(dtype, str) and dtype in _by_name():
        return _by_name()[dtype].mlir
    return by_name(np.dtype(dtype).name).mlir


def dtype_from_name(name: str) -> np.dtype:
    """NumPy dtype from a name used by the compiled-function signature ("float32", "bool", ...)."""
    numpy = by_name(name).numpy
    if numpy is None:
        raise KeyError(f"{name} has no NumPy dtype")
    return numpy


def is_float(dtype) -> bool:
    """True for floating-point dtypes."""
    return np.dtype(dtype).kind == "f"


def weak_token(value):
    """The object NumPy's ufunc type resolution expects for an operand.

    Python ``int``/``float`` scalars are "weak" (NEP 50): they take the type of
    the other operand, so ``x_f32 * 2.0`` stays float32. They are passed as the
    Python type. Everything else contributes its dtype.
    """
    if isinstance(value, np.generic):  # np.float64 subclasses float but is not weak
        return np.dtype(value.dtype)
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return int
    if isinstance(value, float):
        return float
    return np.dtype(value.dtype)


def ufunc_loop_dtypes(ufunc, tokens) -> tuple[np.dtype, ...]:
    """Input and output dtypes NumPy would use for ``ufunc`` on operands of these types.

    Raises the same ``TypeError`` NumPy raises when no loop exists (e.g. ``-`` on bools).
    """
    return ufunc.resolve_dtypes(tuple(tokens) + (None,) * ufunc.nout)
