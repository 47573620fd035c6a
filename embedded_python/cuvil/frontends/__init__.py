"""Cuvil's front ends: each turns a model into Cuvil IR through one shared builder.

See ``README.md`` in this folder for the contract importers implement. In short:

* A front end is a :class:`FrontEnd` subclass registered with
  :func:`register`; :func:`available` lists the names.
* It builds IR only through :class:`IRBuilder`, which asks the dialect's shape
  rules for every result type (no front end computes result shapes itself).
* Every op gets a structured location (:mod:`cuvil.frontends.locations`):
  ``FileLineColLoc`` for Python code, ``NameLoc`` for a model's node names
  (``builder.node("node_7", FileLineColLoc("model.onnx", 0, 0))``), ``FusedLoc``
  where ops merge, ``CallSiteLoc`` for calls.
* It returns a :class:`cuvil._program.TracedProgram`; :func:`to_ir_module`
  verifies it and wraps it as the :class:`cuvil.IRModule` users inspect and
  compile.
"""

from .base import FrontEnd, available, for_model, get, register, to_ir_module
from .builder import GIVEN_RESULT_TYPE_OPS, IRBuilder, TensorType, Value
from .locations import (
    UNKNOWN,
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    NameLoc,
    UnknownLoc,
)

__all__ = [
    "FrontEnd",
    "register",
    "available",
    "get",
    "for_model",
    "to_ir_module",
    "IRBuilder",
    "TensorType",
    "Value",
    "GIVEN_RESULT_TYPE_OPS",
    "FileLineColLoc",
    "NameLoc",
    "CallSiteLoc",
    "FusedLoc",
    "UnknownLoc",
    "UNKNOWN",
]

# Registers the built-in front ends.
from .jax import frontend as _jax_frontend  # noqa: E402,F401
from .numpy_tracer import frontend as _numpy_frontend  # noqa: E402,F401
from .onnx import frontend as _onnx_frontend  # noqa: E402,F401
from .tensorflow import frontend as _tf_frontend  # noqa: E402,F401
