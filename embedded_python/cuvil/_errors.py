"""Exception types raised by the cuvil Python front end."""

from __future__ import annotations

__all__ = ["TraceError", "CompileError", "UnsupportedConstructError"]


class TraceError(ValueError):
    """A traced program is invalid, e.g. operands whose shapes NumPy would reject.

    The message names the op, the offending shapes and the user's ``file:line``.
    It derives from ``ValueError`` because NumPy raises ``ValueError`` for the
    same mistakes, so code that handles NumPy's error keeps working.
    """


class CompileError(RuntimeError):
    """The compiler rejected a traced program.

    The message carries the compiler's diagnostics, each of the form
    ``file.py:LINE:COL: error: ...`` pointing at the user's source.
    """


class UnsupportedConstructError(Exception):
    """A Python or NumPy construct that cannot be traced into Cuvil IR.

    ``cuvil.jit`` catches it and runs the original Python function instead
    (the fallback path); ``cuvil.trace_to_mlir`` lets it propagate.

    Attributes:
        construct: what was not supported, e.g. ``"bool() of a traced array"``.
        location: the user's ``file:line`` where it happened, or ``None``.
    """

    def __init__(self, construct: str, location: object | None = None):
        self.construct = construct
        self.location = location
        super().__init__(self.reason)

    @property
    def reason(self) -> str:
        """The human-readable reason, naming the construct and where it happened."""
        if self.location is None:
            return self.construct
        return f"{self.construct} at {self.location}"
