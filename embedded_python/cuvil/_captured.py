"""Arrays a traced function read from its scope, and whether they changed since.

Tracing bakes such arrays (a global weight, a closure's table) into the
compiled code as constants. A later change to the array would silently be
ignored; ``cuvil.jit`` checks the arrays it captured on every call and
re-traces when one changed. ``CUVIL_CHECK_CAPTURED`` picks the check:

* ``sample`` (default): a few elements spread over the array, a microsecond
  or two per array — catches updates of the whole array (``w[:] = ...``,
  ``w += 1``, a reload), not a change to one element between the samples;
* ``full``: every element (a debugging aid; costs a pass over each array);
* ``off``: no check.
"""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass

import numpy as np

__all__ = ["CapturedArray", "check_mode", "changed"]

_SAMPLES = 8


def check_mode() -> str:
    """The ``CUVIL_CHECK_CAPTURED`` setting: ``sample``, ``full`` or ``off``."""
    mode = os.environ.get("CUVIL_CHECK_CAPTURED", "sample").strip().lower()
    return mode if mode in ("sample", "full", "off") else "sample"


@dataclass
class CapturedArray:
    """One captured array: a weak reference and what it held when traced."""

    ref: weakref.ref
    shape: tuple
    indices: np.ndarray
    sample: np.ndarray
    full: np.ndarray | None

    @staticmethod
    def of(array: np.ndarray) -> CapturedArray | None:
        """Record ``array`` (None for arrays that cannot change or be referenced weakly)."""
        if not array.flags.writeable or array.size <= 1:
            return None
        try:
            ref = weakref.ref(array)
        except TypeError:
            return None
        indices = np.unique(np.linspace(0, array.size - 1, _SAMPLES).astype(np.intp))
        flat = array.reshape(-1)
        full = flat.copy() if check_mode() == "full" else None
        return CapturedArray(ref, array.shape, indices, flat[indices].copy(), full)

    def changed(self, mode: str) -> bool:
        array = self.ref()
        if array is None:
            return False  # gone: nobody can change it any more
        if array.shape != self.shape:
            return True
        flat = array.reshape(-1)
        if mode == "full" and self.full is not None:
            return not np.array_equal(flat, self.full, equal_nan=True)
        return not np.array_equal(flat[self.indices], self.sample, equal_nan=True)


def changed(captured) -> CapturedArray | None:
    """The first of ``captured`` whose contents changed since tracing, or None."""
    mode = check_mode()
    if mode == "off":
        return None
    for item in captured:
        if item.changed(mode):
            return item
    return None
