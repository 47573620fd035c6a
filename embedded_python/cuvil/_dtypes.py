"""The element types Cuvil compiles, their MLIR names and NumPy promotion helpers."""

from __future__ import annotations

import numpy as np

__all__ = [
    "SUPPORTED_DTYPES",
    "is_supported",
    "mlir_element_type",
    "dtype_from_name",
    "ufunc_loop_dtypes",
]

# Keyed by the native-byte-order dtype; the value is the MLIR element type.
SUPPORTED_DTYPES: dict[np.dtype, str] = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.bool_): "i1",
}

_BY_NAME = {dtype.name: dtype for dtype in SUPPORTED_DTYPES}

BOOL = np.dtype(np.bool_)
FLOAT64 = np.dtype(np.float64)
INT64 = np.dtype(np.int64)


def is_supported(dtype) -> bool:
    """True for float32/float64/int32/int64/bool in native byte order."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        return False
    return dtype.isnative and dtype in SUPPORTED_DTYPES


def mlir_element_type(dtype) -> str:
    """MLIR element type (``f32``, ``i1``, ...) of a supported NumPy dtype."""
    return SUPPORTED_DTYPES[np.dtype(dtype)]


def dtype_from_name(name: str) -> np.dtype:
    """NumPy dtype from a name used by the compiled-function signature ("float32", "bool", ...)."""
    return _BY_NAME[name]


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
