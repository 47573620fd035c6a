"""``cuvil.jit(constants=...)``: arguments compiled into the code, as a model's weights are.

An array named in ``constants=`` is traced as a constant (folded, and laid out
for the kernels that read it when compiled) instead of being an argument of the
compiled function. It is keyed by identity and made read-only, so that a change
in place raises instead of going unseen; another array compiles again and the
old code is dropped (one set of constant arrays per signature). A hashable
Python value is keyed by its value, as JAX's static arguments are.
"""

from __future__ import annotations

import inspect

import numpy as np

from ._logging import logger
from ._program import _python_name
from .frontends.numpy_tracer.tracer import Tracer


def constant_key(name: str, value) -> tuple | None:
    """The cache key part of an argument compiled in as a constant: ``(name, dtype,
    shape, id)`` for an ndarray, ``(name, None, value)`` for a hashable Python value;
    ``None`` for anything else (a device tensor, a list, an empty array)."""
    if type(value) is np.ndarray:
        return (name, value.dtype, value.shape, id(value)) if value.size else None
    if isinstance(value, (np.ndarray, Tracer)) or _is_device_array(value):
        return None
    try:
        hash(value)
    except TypeError:
        return None
    return (name, None, value)


def _is_device_array(value) -> bool:
    return hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray)


def constant_problem(name: str, value) -> tuple[str, str] | None:
    """``(problem, fix)`` when ``value`` cannot be compiled in as constant ``name``."""
    if constant_key(name, value) is not None:
        return None
    if isinstance(value, np.ndarray):
        what = "an empty array" if not value.size else f"a {type(value).__name__}"
        return (
            f"constant argument '{name}' is {what}",
            f"pass a non-empty numpy.ndarray as {name}, or leave it out of constants=",
        )
    return (
        f"constant argument '{name}' is a {type(value).__name__}, not a numpy.ndarray "
        "or a hashable Python value",
        f"pass a NumPy array or a hashable value (a number, a tuple) as {name}",
    )


def constant_names(constants, signature, fn) -> frozenset:
    """The parameter names of ``constants=`` (a name or a sequence of names), checked
    against ``fn``'s signature."""
    if constants is None:
        return frozenset()
    names = (constants,) if isinstance(constants, str) else tuple(constants)
    name = _python_name(fn)
    if signature is None:
        raise TypeError(
            f"cuvil.jit: constants= needs the parameter names of {name}, whose signature "
            "cannot be read; fix: wrap it in a def with named parameters"
        )
    parameters = signature.parameters
    plain = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    for item in names:
        if not isinstance(item, str):
            raise TypeError(f"cuvil.jit: constants= takes parameter names (strings), got {item!r}")
        if item not in parameters or parameters[item].kind not in plain:
            named = ", ".join(p for p, v in parameters.items() if v.kind in plain)
            raise TypeError(
                f"cuvil.jit: constants= names {item!r}, which is not a named parameter of "
                f"{name}; its parameters are: {named or 'none'}"
            )
    return frozenset(names)


class ConstantSets:
    """The constant arrays each signature's code was compiled with, kept alive (so
    that the id in a cache key is never another array's)."""

    def __init__(self, names: frozenset, cache):
        self.names = names  # the constant parameters
        self._cache = cache  # the jit function's SignatureCache
        # Key without the arrays' ids -> (the full cache key, the arrays).
        self._sets: dict[tuple, tuple] = {}

    def adopt(self, arguments, key, function: str) -> None:
        """Make the constant arrays about to be compiled in read-only and keep them;
        drop the code of ``function`` for the same signature with other arrays, if
        any."""
        base = tuple(item[:3] if len(item) == 4 else item for item in key)
        arrays = []
        for name, value in zip(arguments.names, arguments.values):
            if name in self.names and isinstance(value, np.ndarray):
                value.flags.writeable = False  # a change in place would go unseen
                arrays.append(value)
        previous = self._sets.get(base)
        if previous is not None and previous[0] != key:
            self._cache.pop(previous[0])
            changed = [old[0] for old, new in zip(previous[0], key) if len(old) == 4 and old != new]
            several = len(changed) > 1
            logger.warning(
                "%s: compiling again: constant argument%s %s %s not the array%s compiled "
                "in before (pass the same arrays on every call; new ones compile anew)",
                function,
                "s" if several else "",
                ", ".join(f"'{n}'" for n in changed),
                "are" if several else "is",
                "s" if several else "",
            )
        self._sets[base] = (key, tuple(arrays))
