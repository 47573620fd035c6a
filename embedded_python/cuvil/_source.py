"""Finds the user's source location (file, line, column) for traced ops and messages."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import linecache
import os
import sys
import sysconfig
from dataclasses import dataclass

import numpy as np

from ._mlir import escape_string

__all__ = ["SourceLoc", "user_location", "function_location", "declared_at"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__)) + os.sep
# The launchers pip writes for Cuvil's commands (``.venv/bin/cuvil``) are Cuvil's code, and
# the standard library's frames (runpy under ``python -m cuvil``) are nobody's source line.
_SCRIPTS_DIR = os.path.abspath(sysconfig.get_paths()["scripts"]) + os.sep
_STDLIB_DIR = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep
# Where the user declared what is being compiled, when no user frame is on the stack.
_DECLARED: contextvars.ContextVar = contextvars.ContextVar("cuvil_declared_at", default=None)


@dataclass(frozen=True)
class SourceLoc:
    """A position in the user's Python source.

    ``col`` is 1-based (as compilers and editors print it); 0 means unknown.
    ``str()`` gives ``file:line``, the form used in messages.
    """

    file: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    def to_mlir(self) -> str:
        """MLIR's ``FileLineColLoc`` syntax, ``"FILE":LINE:COL``."""
        return f"{escape_string(self.file)}:{int(self.line)}:{int(self.col)}"


UNKNOWN_LOC = SourceLoc("<unknown>", 0, 0)


@functools.lru_cache(maxsize=1024)
def _is_internal(filename: str) -> bool:
    # Frames inside cuvil itself or inside NumPy (dispatch helpers) are never
    # "where the user wrote it".
    path = os.path.abspath(filename) if not filename.startswith("<") else filename
    if path.startswith(_SCRIPTS_DIR) and os.path.basename(path).startswith("cuvil"):
        return True
    return path.startswith((_PACKAGE_DIR, _NUMPY_DIR, _STDLIB_DIR, "<frozen "))


@functools.lru_cache(maxsize=256)
def _positions(code) -> tuple:
    return tuple(code.co_positions())


def _normalize_file(filename: str) -> str:
    if filename.startswith("<"):
        return filename
    # An absolute name needs no working directory (abspath asks for it per op).
    return _normalized(filename) if os.path.isabs(filename) else os.path.abspath(filename)


@functools.lru_cache(maxsize=1024)
def _normalized(path: str) -> str:
    return os.path.normpath(path)


def _frame_location(frame) -> SourceLoc:
    code = frame.f_code
    line = frame.f_lineno or code.co_firstlineno
    col = 0
    if hasattr(code, "co_positions") and frame.f_lasti >= 0:
        positions = _positions(code)
        index = frame.f_lasti // 2
        if index < len(positions):
            start_line, _, start_col, _ = positions[index]
            if start_line == line and start_col is not None:
                col = start_col + 1
    return SourceLoc(_normalize_file(code.co_filename), line, col)


def user_location() -> SourceLoc:
    """Location of the innermost stack frame outside the cuvil and NumPy packages."""
    frame = sys._getframe(1)
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return _DECLARED.get() or UNKNOWN_LOC
    return _frame_location(frame)


@contextlib.contextmanager
def declared_at(loc: SourceLoc | None):
    """Inside the block, :func:`user_location` falls back to ``loc`` when only Cuvil's code
    is on the stack: ``cuvil compile model.py`` imports the model the file declared after the
    file has run, and its ops point to the declaration, not to Cuvil's command line."""
    token = _DECLARED.set(loc)
    try:
        yield
    finally:
        _DECLARED.reset(token)


def function_location(fn) -> SourceLoc:
    """Location of a function's definition (its first source line), column unknown."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    code = getattr(fn, "__code__", None)
    if code is None and callable(fn):
        # A callable object: locate its class's __call__.
        code = getattr(type(fn).__call__, "__code__", None)
    if code is None:
        return UNKNOWN_LOC
    line, col = _def_line(code.co_filename, code.co_firstlineno, code.co_name)
    return SourceLoc(_normalize_file(code.co_filename), line, col)


def _def_line(filename: str, first_line: int, name: str) -> tuple[int, int]:
    """The ``def`` line below any decorators (``co_firstlineno`` is the first decorator's)."""
    text = linecache.getline(filename, first_line)
    stripped = text.lstrip()
    if stripped.startswith(("def ", "async def ")):
        return first_line, len(text) - len(stripped) + 1
    if not stripped.startswith("@"):
        return first_line, 0
    for line in range(first_line + 1, first_line + 40):
        text = linecache.getline(filename, line)
        stripped = text.lstrip()
        if stripped.startswith((f"def {name}(", f"async def {name}(")):
            return line, len(text) - len(stripped) + 1
        if not text:
            break
    return first_line, 0
