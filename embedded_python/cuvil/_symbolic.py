"""Symbolic dimensions: named dynamic sizes, their bindings at call time, and output sizes.

An input dimension is an int, a symbol name (``"N"``, ``"h"``: equal names
mean equal sizes) or ``None`` (dynamic, unnamed). Output dimensions are
expressions over the input symbols that the compiler derives
(``cuvil-propagate-symbols``), in Python syntax: ``"N"``, ``"N * 2"``,
``"((h + -1) // 2) + 1"``; ``"?"`` where the compiler could not name a size.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping, Sequence

__all__ = ["is_symbolic", "fits", "bind", "evaluate", "output_shape"]

_OPERATORS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


def is_symbolic(shape: Sequence) -> bool:
    """True when a dimension of ``shape`` is a symbol name or ``None``."""
    return any(d is None or isinstance(d, str) for d in shape)


def fits(declared: Sequence, actual: Sequence[int]) -> bool:
    """True when a shape of ``actual`` sizes is one ``declared`` allows (symbolic dims: any)."""
    return len(actual) == len(declared) and all(
        not isinstance(d, int) or d == size for d, size in zip(declared, actual)
    )


def bind(specs: Mapping[str, Sequence], shapes: Mapping[str, Sequence[int]]) -> dict[str, int]:
    """The size of each symbol, read from the actual input ``shapes``.

    ``specs`` maps input names to their declared shapes. Raises ``ValueError``
    naming the input and dimension when a static size differs or one symbol
    gets two sizes.
    """
    bindings: dict[str, int] = {}
    where: dict[str, str] = {}
    for name, declared in specs.items():
        actual = tuple(shapes[name])
        if len(actual) != len(declared):
            raise ValueError(
                f"input '{name}' has shape {actual} but is declared with rank {len(declared)} "
                f"{tuple(declared)}"
            )
        for index, (dim, size) in enumerate(zip(declared, actual)):
            if isinstance(dim, str):
                if bindings.setdefault(dim, size) != size:
                    raise ValueError(
                        f"symbol {dim!r} is {bindings[dim]} at {where[dim]} but {size} at dim "
                        f"{index} of input '{name}'; equal names must have equal sizes"
                    )
                where.setdefault(dim, f"dim {index} of input '{name}'")
            elif dim is not None and dim != size:
                raise ValueError(
                    f"input '{name}' has size {size} at dim {index}, declared {dim} "
                    f"(shape {tuple(declared)})"
                )
    return bindings


def evaluate(expression: str, bindings: Mapping[str, int], operators: Mapping | None = None):
    """The value of an output-size ``expression`` (``"N * 2"``) for these symbol sizes.

    ``operators`` (``ast.Add`` ... ``ast.Mod`` -> a function of two operands)
    evaluate it over other values than ints: the run-time sizes an importer
    emits (:func:`cuvil.frontends.symbolic_dims.run_time_size`).
    """
    operators = _OPERATORS if operators is None else operators

    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in bindings:
                raise ValueError(f"size {expression!r} uses the unbound symbol {node.id!r}")
            return bindings[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return operators[ast.Mult](-1, value(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in operators:
            return operators[type(node.op)](value(node.left), value(node.right))
        raise ValueError(f"{expression!r} is not a size expression")

    if expression == "?":
        raise ValueError("the compiler could not name this output size (a '?' dimension)")
    return value(_parsed(expression))


@functools.lru_cache(maxsize=4096)
def _parsed(expression: str) -> ast.AST:
    """The syntax tree of a size expression, parsed once (every call of a model evaluates it)."""
    return ast.parse(expression, mode="eval").body


def output_shape(shape: Sequence, bindings: Mapping[str, int]) -> tuple[int, ...]:
    """``shape`` (ints and size expressions) evaluated for these symbol sizes."""
    return tuple(d if isinstance(d, int) else evaluate(d, bindings) for d in shape)
