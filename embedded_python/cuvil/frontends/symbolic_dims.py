"""Symbolic sizes at import time: what an importer computes from dims that stay dynamic.

The ONNX importer's ``Shape`` of a tensor with a symbolic dimension gives a
shape value whose entries are ints or :class:`SymDim` (a NumPy object array),
so the shape arithmetic exporters emit (``Gather``, ``Unsqueeze``, ``Concat``,
``Mul``...) still folds; the PyTorch importer's ``sym_size`` gives a SymDim
that FX's SymInt arithmetic carries along. Where an op takes a size at run
time (a ``Range`` limit, a ``Slice`` end, the sizes of a ``Reshape``),
:func:`run_time_size` reads it with ``cuvil.dim``; a size that must be an int
(or one computed from others) raises :class:`SymbolicSizeError`, which the
importer reports with the node.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Mapping

import numpy as np

from .. import _symbolic

__all__ = [
    "SymDim",
    "SymbolicSizeError",
    "is_shape_value",
    "shape_value",
    "type_dims",
    "same_size",
    "missing_size",
    "value_dims",
    "folded_sizes",
    "run_time_size",
    "reshape_sizes",
]


class SymbolicSizeError(ValueError):
    """A symbolic size was used where the importer needs a static one."""

    def __init__(self, dim: SymDim):
        self.dim = dim
        super().__init__(f"the size {dim} is symbolic")


class SymDim:
    """A dynamic size: a Python size expression over the input symbols (``"N"``, ``"T * 8"``).

    ``origin`` is ``(value, axis)`` when the size is a dimension of a run-time
    value (what ``Shape`` read), which lets the importer build a tensor of that
    size (``cuvil.broadcast_to ... like``); ``resolve`` names the expression
    lazily (asking the compiler) for dims of intermediate values.
    """

    __slots__ = ("_expr", "_resolve", "origin")

    def __init__(self, expr: str | None = None, origin=None, resolve=None):
        self._expr = expr
        self._resolve = resolve
        self.origin = origin

    @property
    def expr(self) -> str:
        """The size expression; ``"?"`` where the compiler could not name it."""
        if self._expr is None:
            self._expr = self._resolve() if self._resolve else "?"
        return self._expr

    def __repr__(self) -> str:
        return self.expr

    def __str__(self) -> str:
        return self.expr

    # Sizes are only known at run time: no int, no truth value, no float.
    def __int__(self):
        raise SymbolicSizeError(self)

    __index__ = __int__
    __float__ = __int__
    __bool__ = __int__

    def _combine(self, other, op: str, swap: bool = False):
        if isinstance(other, (int, np.integer)):
            other_text = str(int(other))
        elif isinstance(other, SymDim):
            other_text = _parenthesized(other.expr)
        else:
            return NotImplemented
        texts = (other_text, _parenthesized(self.expr))
        left, right = texts if swap else texts[::-1]
        if "?" in (left, right):
            return SymDim("?")
        return SymDim(f"{left} {op} {right}")

    def __add__(self, other):
        return self if _is_zero(other) else self._combine(other, "+")

    def __radd__(self, other):
        return self if _is_zero(other) else self._combine(other, "+", swap=True)

    def __sub__(self, other):
        return self if _is_zero(other) else self._combine(-other, "+")

    def __rsub__(self, other):
        return SymDim("?") if not isinstance(other, (int, np.integer)) else self._neg_plus(other)

    def _neg_plus(self, other):
        return SymDim(f"{int(other)} + -1 * {_parenthesized(self.expr)}")

    def __mul__(self, other):
        return self if _is_one(other) else self._combine(other, "*")

    def __rmul__(self, other):
        return self if _is_one(other) else self._combine(other, "*", swap=True)

    def __floordiv__(self, other):
        return self if _is_one(other) else self._combine(other, "//")

    def __rfloordiv__(self, other):
        return self._combine(other, "//", swap=True)

    __truediv__ = __floordiv__  # shape arithmetic divides sizes exactly

    def __neg__(self):
        return self._combine(-1, "*")

    def __eq__(self, other):
        # Only provable equality counts: a symbolic size is never an int here.
        if isinstance(other, SymDim):
            return self is other or same_size(self, other)
        return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.expr)


def _is_zero(value) -> bool:
    return isinstance(value, (int, np.integer)) and value == 0


def _is_one(value) -> bool:
    return isinstance(value, (int, np.integer)) and value == 1


def _parenthesized(text: str) -> str:
    return text if text.isidentifier() or text.lstrip("-").isdigit() else f"({text})"


def same_size(a: SymDim, b: SymDim) -> bool:
    """Whether two symbolic sizes are provably equal (their expressions agree everywhere tried)."""
    if a.origin is not None and a.origin == b.origin:
        return True
    if "?" in (a.expr, b.expr):
        return False
    if a.expr == b.expr:
        return True
    names = set(_names(a.expr)) | set(_names(b.expr))
    rng = random.Random(0)
    for _ in range(4):
        bindings = {n: rng.randint(2, 997) for n in names}
        try:
            if _symbolic.evaluate(a.expr, bindings) != _symbolic.evaluate(b.expr, bindings):
                return False
        except (ValueError, ZeroDivisionError):
            return False
    return True


def _names(expr: str):
    import ast

    return [n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)]


def is_shape_value(item) -> bool:
    """Whether ``item`` is a shape value with symbolic entries (an object array)."""
    return isinstance(item, np.ndarray) and item.dtype == object


def shape_value(entries) -> np.ndarray:
    """Entries (ints and SymDims) as an int64 array when all static, else an object array."""
    entries = list(entries)
    if any(isinstance(e, SymDim) for e in entries):
        return np.array(entries + [None], dtype=object)[:-1]
    return np.asarray(entries, dtype=np.int64)


def folded_sizes(value):
    """A value computed at import time; sizes with symbolic entries stay an object array.

    Indexing a shape value gives a bare :class:`SymDim`, and arithmetic on
    one may give only ints: the result is an object array where a SymDim
    remains, an int64 array where none does, ``value`` itself otherwise.
    """
    if not (isinstance(value, SymDim) or is_shape_value(value)):
        return value
    array = np.empty(np.shape(value), dtype=object)
    array[...] = value
    if any(isinstance(e, SymDim) for e in array.flat):
        return array
    return array.astype(np.int64)


def type_dims(entries) -> tuple:
    """The dims of an op's type for target entries: ints stay, symbolic ones are ``None``."""
    return tuple(None if isinstance(d, SymDim) else int(d) for d in entries)


def missing_size(current, entries):
    """The ``-1`` entry: the input's sizes over the other entries', symbols cancelled.

    ``-1`` stays ``-1`` (a dynamic dim the compiler derives) unless the
    symbolic factors of the other entries all cancel against the input's.
    """
    remaining = [d for d in current if isinstance(d, SymDim)]
    size = int(np.prod([d for d in current if not isinstance(d, SymDim)], dtype=np.int64))
    divisor = 1
    for entry in entries:
        if isinstance(entry, SymDim):
            match = next((i for i, d in enumerate(remaining) if same_size(d, entry)), None)
            if match is None:
                return -1
            remaining.pop(match)
        elif entry != -1:
            divisor *= entry
    if remaining or divisor == 0 or size % divisor:
        return -1
    return size // divisor


def value_dims(value) -> tuple:
    """``value``'s dims: ints, a SymDim named by its symbol or read off ``value`` (``Shape``)."""
    return tuple(
        d
        if isinstance(d, int)
        else SymDim(d, (value, axis))
        if isinstance(d, str)
        else SymDim(origin=(value, axis))
        for axis, d in enumerate(value.type.shape)
    )


def run_time_size(b, dim: SymDim):
    """An ``index`` value holding ``dim``'s size, computed at run time on builder ``b``.

    The size is read (``cuvil.dim``) from the tensor it came from (``origin``)
    or, for an expression over the input symbols (``batch * 4``), computed
    with ``arith`` ops from the argument dimensions its symbols name; a size
    the compiler could not name raises :class:`SymbolicSizeError`.
    """
    if dim.origin is not None:
        value, axis = dim.origin
        return b.dim(value, axis)
    try:
        size = _symbolic.evaluate(dim.expr, _ArgumentSizes(b), _index_operators(b))
    except (ValueError, SyntaxError):
        raise SymbolicSizeError(dim) from None
    return b.index_constant(size) if isinstance(size, int) else size


class _ArgumentSizes(Mapping):
    """Symbol name -> its run-time size (``cuvil.dim`` of the argument dim it names)."""

    def __init__(self, b):
        self._b = b

    def __getitem__(self, name: str):
        size = self._b.symbol_size(name)
        if size is None:
            raise KeyError(name)
        return size

    def __iter__(self):
        return iter({d for t in self._b.argument_types for d in t.symbols})

    def __len__(self) -> int:
        return len(set(self))


def _index_operators(b) -> dict:
    """Size arithmetic for :func:`cuvil._symbolic.evaluate` over index values (and ints)."""

    def operator(name: str, fold):
        def apply(lhs, rhs):
            if isinstance(lhs, int) and isinstance(rhs, int):
                return fold(lhs, rhs)
            lhs, rhs = (b.index_constant(v) if isinstance(v, int) else v for v in (lhs, rhs))
            return b.index_op(name, lhs, rhs)

        return apply

    return {
        ast.Add: operator("arith.addi", lambda x, y: x + y),
        ast.Sub: operator("arith.subi", lambda x, y: x - y),
        ast.Mult: operator("arith.muli", lambda x, y: x * y),
        ast.FloorDiv: operator("arith.floordivsi", lambda x, y: x // y),
        ast.Mod: operator("arith.remsi", lambda x, y: x % y),
    }


def reshape_sizes(b, entries) -> list | None:
    """The run-time sizes of a reshape to ``entries`` (ints and SymDims), one per SymDim.

    ``None`` when a result has at most one dynamic size (the compiler derives
    it) or when some entry is unknown (``-1`` beside symbols, a computed size).
    """
    symbolic = [e for e in entries if isinstance(e, SymDim)]
    if len(symbolic) < 2 or any(not isinstance(e, SymDim) and int(e) < 0 for e in entries):
        return None
    try:
        return [run_time_size(b, e) for e in symbolic]
    except SymbolicSizeError:
        return None
