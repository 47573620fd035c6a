"""Walks a jaxpr into Cuvil IR: constants folded, calls inlined, each op at the user's line."""

from __future__ import annotations

import os

import numpy as np

from ..._errors import UnsupportedConstructError
from ..base import compute_dtype, computed_array
from ..builder import IRBuilder, TensorType, Value
from ..locations import UNKNOWN, CallSiteLoc, FileLineColLoc
from ..symbolic_dims import SymbolicSizeError, SymDim, run_time_size

__all__ = ["JaxprImporter", "CALL_PRIMITIVES"]

# Primitives whose body is a jaxpr: inlined, their ops located with a CallSiteLoc.
CALL_PRIMITIVES = frozenset(
    {
        "jit",
        "pjit",
        "closed_call",
        "core_call",
        "custom_jvp_call",
        "custom_vjp_call",
        "custom_vjp_call_jaxpr",
        "remat",
        "checkpoint",
        "remat2",
    }
)
_BODY_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr")


def _frame_loc(eqn):
    from jax._src import source_info_util

    frame = source_info_util.user_frame(eqn.source_info.traceback)
    if frame is None:
        return UNKNOWN
    path = frame.file_name
    path = path if path.startswith("<") else os.path.abspath(path)
    return FileLineColLoc(path, frame.start_line, frame.start_column + 1)


def describe_equation(eqn) -> str:
    """``c:f32[4] = cumsum[axis=0] b``: JAX's own one-equation text, shortened."""
    text = " ".join(str(eqn).split())
    return text if len(text) <= 160 else text[:157] + "..."


class JaxprImporter:
    """Imports one closed jaxpr through an :class:`IRBuilder`.

    Values known at import time (literals, the jaxpr's constants, anything
    computed only from them such as ``iota``) stay NumPy arrays: an equation
    whose inputs are all known is evaluated by JAX itself, so nothing that
    depends only on constants reaches the IR. The rest become cuvil ops,
    each wrapped in ``NameLoc(<primitive>)`` around the user's ``file:line:col``.
    """

    def __init__(self, builder: IRBuilder, primitives: dict):
        self.b = builder
        self.primitives = primitives
        self.callers: list = []  # call-site locations of the inlined calls we are in
        self.scopes: list[str] = []  # the names of those calls, for NameLoc labels
        self.eqn = None
        self.loc = UNKNOWN
        self._constants: dict[int, tuple] = {}  # id(array) -> (its Value, the array)

    # ----- values ----------------------------------------------------------------------
    def value(self, x) -> Value:
        """``x`` as an IR value: known arrays become (shared) ``cuvil.constant`` ops."""
        if isinstance(x, Value):
            return x
        key = id(x)
        cached = self._constants.get(key)
        if cached is not None and cached[1] is x:
            return cached[0]
        value = self.b.constant(computed_array(x, self.unsupported))
        self._constants[key] = (value, x)
        return value

    def out_type(self, index: int = 0) -> TensorType:
        """The type JAX gives the current equation's output ``index``."""
        aval = self.eqn.outvars[index].aval
        # A symbolic dim (``jax.export.symbolic_shape``) is dynamic: None.
        shape = tuple(d if isinstance(d, int) else None for d in aval.shape)
        return TensorType.of(shape, compute_dtype(np.dtype(aval.dtype).name))

    def size(self, dim) -> Value:
        """The run-time size (an index value) of the JAX symbolic dim ``dim`` (``N``, ``2*N``)."""
        try:
            return run_time_size(self.b, SymDim(str(dim)))
        except SymbolicSizeError:
            raise self.unsupported(
                f"the symbolic size {dim}",
                "Fix: write the size in terms of the input symbols (+, -, *, //, %) or give "
                "the inputs static shapes",
            ) from None

    # ----- walking -----------------------------------------------------------------------
    def run(self, jaxpr, consts, args) -> list:
        """The outputs of the open ``jaxpr`` on ``consts`` and ``args`` (Values or arrays)."""
        from jax.extend.core import Literal

        env = {}

        def read(atom):
            if isinstance(atom, Literal):
                return np.asarray(atom.val, dtype=atom.aval.dtype)
            return env[atom]

        for var, const in zip(jaxpr.constvars, consts):
            env[var] = np.asarray(const)
        env.update(zip(jaxpr.invars, args))
        for eqn in jaxpr.eqns:
            outs = self.equation(eqn, [read(v) for v in eqn.invars])
            env.update(zip(eqn.outvars, outs))
        return [read(v) for v in jaxpr.outvars]

    def equation(self, eqn, ins) -> list:
        name = eqn.primitive.name
        loc = _frame_loc(eqn)
        for caller in reversed(self.callers):
            if loc != caller:
                loc = CallSiteLoc(loc, caller) if loc is not UNKNOWN else caller
        self.eqn, self.loc = eqn, loc
        if name in CALL_PRIMITIVES:
            return self.inline(eqn, ins, loc)
        if all(not isinstance(x, Value) for x in ins):
            folded = self.fold(eqn, ins)
            if folded is not None:
                return folded
        handler = self.primitives.get(name)
        if handler is None:
            raise self.unsupported(f"JAX primitive '{name}'")
        label = "/".join([*self.scopes, str(eqn.source_info.name_stack), name]).replace("//", "/")
        with self.b.node(label.strip("/"), loc):
            result = handler(self, eqn, ins, **eqn.params)
        return list(result) if eqn.primitive.multiple_results else [result]

    def fold(self, eqn, ins):
        """The outputs of ``eqn`` evaluated by JAX, or ``None`` if it cannot run eagerly."""
        try:
            out = eqn.primitive.bind(*ins, **eqn.params)
        except Exception:  # noqa: BLE001 - anything JAX cannot run eagerly is imported instead
            return None
        outs = out if eqn.primitive.multiple_results else [out]
        return [np.asarray(o) for o in outs]

    def inline(self, eqn, ins, loc) -> list:
        from jax.extend.core import ClosedJaxpr

        body = next((eqn.params[k] for k in _BODY_PARAMS if k in eqn.params), None)
        if body is None:
            raise self.unsupported(f"JAX call primitive '{eqn.primitive.name}' without a body")
        jaxpr, consts = (body.jaxpr, body.consts) if isinstance(body, ClosedJaxpr) else (body, ())
        self.callers.append(loc)
        self.scopes.append(str(eqn.params.get("name", eqn.primitive.name)))
        try:
            return self.run(jaxpr, consts, ins)
        finally:
            self.callers.pop()
            self.scopes.pop()

    def unsupported(self, what: str, fix: str = "") -> UnsupportedConstructError:
        """The error for ``what`` in the current equation, at its location."""
        text = f"{what} (equation: {describe_equation(self.eqn)})" if self.eqn else what
        error = UnsupportedConstructError(f"cuvil: {text} cannot be imported", self.loc)
        error.add_note(
            fix
            or "Fix: express it with supported operations (see cuvil.frontends.jax.primitives) "
            "or compute it outside the imported function."
        )
        return error
