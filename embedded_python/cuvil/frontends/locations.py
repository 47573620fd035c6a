"""Structured source locations for Cuvil IR: one class per kind of MLIR location.

Every op a front end creates carries one of these, so a kernel, a profile row
or a diagnostic maps back to what the user wrote:

* :class:`FileLineColLoc` (``cuvil._source.SourceLoc``): a Python source
  position, ``loc("model.py":12:9)``.
* :class:`NameLoc`: a model's node name, optionally around where the model
  came from, e.g. ``loc("node_7"("model.onnx":0:0))`` for an ONNX node, an FX
  node name, or an ``nn.Module`` path such as ``"encoder.layers.0.attn"``.
* :class:`CallSiteLoc`: ``callee`` as called from ``caller`` (an op of a
  module's ``forward`` called from the user's line).
* :class:`FusedLoc`: several origins merged into one op (passes fuse ops).

``to_mlir()`` gives MLIR's location syntax without the ``loc(...)`` wrapper;
:func:`format_loc` adds it. ``str()`` gives the form used in messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._mlir import escape_string, format_loc
from .._source import SourceLoc

__all__ = [
    "Location",
    "FileLineColLoc",
    "NameLoc",
    "CallSiteLoc",
    "FusedLoc",
    "UnknownLoc",
    "UNKNOWN",
    "format_loc",
    "escape_string",
]

FileLineColLoc = SourceLoc


@dataclass(frozen=True)
class UnknownLoc:
    """No known origin (MLIR's ``loc(unknown)``); avoid it where any origin is known."""

    def to_mlir(self) -> str:
        return "unknown"

    def __str__(self) -> str:
        return "<unknown>"


UNKNOWN = UnknownLoc()


@dataclass(frozen=True)
class NameLoc:
    """A named node of a model, e.g. ``NameLoc("node_7", FileLineColLoc("model.onnx", 0, 0))``."""

    name: str
    child: object | None = None

    def to_mlir(self) -> str:
        if self.child is None or isinstance(self.child, UnknownLoc):
            return escape_string(self.name)
        return f"{escape_string(self.name)}({_inner(self.child)})"

    def __str__(self) -> str:
        if self.child is None or isinstance(self.child, UnknownLoc):
            return f"node '{self.name}'"
        return f"node '{self.name}' ({self.child})"


@dataclass(frozen=True)
class CallSiteLoc:
    """``callee`` reached through a call at ``caller``."""

    callee: object
    caller: object

    def to_mlir(self) -> str:
        return f"callsite({_inner(self.callee)} at {_inner(self.caller)})"

    def __str__(self) -> str:
        return f"{self.callee} (called from {self.caller})"


@dataclass(frozen=True)
class FusedLoc:
    """An op that stands for several origins (merged ops, a node with several names)."""

    locations: tuple

    def __init__(self, locations: Sequence):
        object.__setattr__(self, "locations", tuple(locations))

    def to_mlir(self) -> str:
        return "fused[" + ", ".join(_inner(loc) for loc in self.locations) + "]"

    def __str__(self) -> str:
        return " + ".join(str(loc) for loc in self.locations)


Location = SourceLoc | NameLoc | CallSiteLoc | FusedLoc | UnknownLoc


def _inner(loc) -> str:
    return loc.to_mlir()
