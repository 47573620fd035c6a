"""The JAX front end (``"jax"``): jitted functions and ``cuvil.compile_to_ir`` through jaxprs.

``cuvil.frontend.build_ir(model=jax.jit(fn), input_spec=...)`` picks this
front end for objects made by ``jax.jit``. A plain Python function written
with ``jax.numpy`` is indistinguishable from a NumPy one, so ``build_ir``
traces it with the NumPy tracer: import it as JAX with
``cuvil.compile_to_ir(fn, *jax.ShapeDtypeStruct...)`` or by wrapping it in
``jax.jit`` first. Parameters (weights) are closed over (``functools.partial``
or a closure); the inputs are arrays.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import numpy as np

from ..._program import _python_name, signature_of
from ..._source import function_location
from ..base import FrontEnd, register, require_inference
from ..builder import IRBuilder, TensorType

__all__ = ["JaxFrontEnd", "compile_to_ir"]

_API = "cuvil.compile_to_ir"


def _wrapped(model):
    """The Python function behind a ``jax.jit`` object (the object itself otherwise)."""
    return getattr(model, "__wrapped__", model)


def _is_jitted(model) -> bool:
    module = type(model).__module__ or ""
    return module.startswith(("jaxlib", "jax")) and hasattr(model, "lower") and callable(model)


def _parameter_names(fn, count: int) -> list[str]:
    """The names of ``fn``'s first ``count`` positional parameters (``arg<i>`` where unknown)."""
    signature = signature_of(_wrapped(fn))
    names = []
    if signature is not None:
        for p in signature.parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                names.append(p.name)
    names = names[:count]
    return names + [f"arg{i}" for i in range(len(names), count)]


@register
class JaxFrontEnd(FrontEnd):
    """Imports a JAX function from its jaxpr (``jax.make_jaxpr``), equation by equation.

    Inputs are the function's positional array arguments, described by a list
    of specs (``jax.ShapeDtypeStruct``, ``cuvil.TensorSpec``, arrays, shapes)
    or a mapping from parameter names. Each op is located at the user's
    ``file:line:col`` inside ``NameLoc(<primitive>)``; ops of inlined calls
    (``jax.jit`` functions called inside, ``custom_jvp`` functions such as
    ``jax.nn.relu``) carry ``CallSiteLoc(body line, call line)``.
    """

    name = "jax"

    @classmethod
    def accepts(cls, model) -> bool:
        return "jax" in sys.modules and _is_jitted(model)

    def input_spec(self, model, input_spec, default_dtype: str) -> dict:
        from ...frontend import _normalize_spec

        if isinstance(input_spec, Mapping):
            order = _parameter_names(model, 10**6)
            items = sorted(input_spec.items(), key=lambda kv: _position(order, kv[0]))
        else:
            specs = list(input_spec)
            items = list(zip(_parameter_names(model, len(specs)), specs))
        return {name: _normalize_spec(name, spec, default_dtype) for name, spec in items}

    def symbolic_dims(self, model, input_spec):
        """Specs with JAX symbolic dims (``jax.export.symbolic_shape``) as symbol names."""
        if isinstance(input_spec, Mapping):
            return {k: _plain_spec(v) for k, v in input_spec.items()}
        return [_plain_spec(v) for v in input_spec]

    def describe(self, model) -> tuple[str, str]:
        fn = _wrapped(model)
        return _python_name(fn), str(function_location(fn))

    def import_model(self, model, input_spec: Mapping, mode: str = "inference"):
        import jax

        from .importer import JaxprImporter
        from .primitives import PRIMITIVES

        require_inference(mode, _python_name(_wrapped(model)), "JAX")
        structs = _structs(input_spec)
        closed = jax.make_jaxpr(model)(*structs)
        fn = _wrapped(model)
        builder = IRBuilder(_python_name(fn), function_location(fn))
        args = [builder.argument(TensorType.of(s.shape, s.dtype)) for s in input_spec.values()]
        importer = JaxprImporter(builder, PRIMITIVES)
        outs = importer.run(closed.jaxpr, closed.consts, args)
        results = [importer.value(o) for o in outs]
        if not results:
            raise importer.unsupported(f"{_python_name(fn)} returns no arrays")
        dtypes = [np.dtype(v.aval.dtype).name for v in closed.jaxpr.outvars]
        return builder.program(results, input_names=list(input_spec), output_dtypes=dtypes)


def _plain_spec(spec):
    """``spec`` with each JAX symbolic dim (``N``, ``2*N``) as its text, a symbol name."""
    from ...frontend import TensorSpec

    shape = getattr(spec, "shape", None)
    if shape is None or not hasattr(spec, "dtype"):
        return spec
    dims = tuple(d if d is None or isinstance(d, (int, str)) else str(d) for d in shape)
    dtype = spec.dtype if isinstance(spec.dtype, str) else str(spec.dtype)
    return TensorSpec(dims, dtype)


def _structs(input_spec: Mapping) -> list:
    """``jax.ShapeDtypeStruct`` per input; symbol names become JAX symbolic dims (one scope)."""
    import jax

    symbolic = any(isinstance(d, str) for s in input_spec.values() for d in s.shape)
    if not symbolic:
        return [jax.ShapeDtypeStruct(s.shape, s.dtype) for s in input_spec.values()]
    scope = jax.export.SymbolicScope()
    return [
        jax.ShapeDtypeStruct(
            jax.export.symbolic_shape(", ".join(str(d) for d in s.shape), scope=scope)
            if s.shape
            else (),
            s.dtype,
        )
        for s in input_spec.values()
    ]


def _has_symbolic_dims(specs) -> bool:
    return any(
        not isinstance(d, int)
        for s in specs
        if hasattr(s, "shape") and isinstance(s.shape, (tuple, list))
        for d in s.shape
    )


def _position(order: list[str], name: str) -> int:
    return order.index(name) if name in order else len(order)


def compile_to_ir(fn, *specs, target: str | None = None, mode: str = "inference"):
    """Import the JAX function ``fn`` for inputs ``specs`` as a :class:`cuvil.IRModule`.

    ``specs`` are one spec per positional array argument: ``jax.ShapeDtypeStruct``,
    ``cuvil.TensorSpec``, an array, or anything with ``shape`` and ``dtype``.
    ``fn`` may be a plain Python function or a ``jax.jit`` object. ``.compile()``
    on the result gives a model called with NumPy arrays.

    Dims may be symbolic: ``jax.ShapeDtypeStruct(jax.export.symbolic_shape("N, 4"),
    jnp.float32)`` or ``cuvil.TensorSpec(("N", 4))``; they stay symbolic in the IR
    (as with ``cuvil.frontend.to_ir_with_dynamic_shape``) and one compilation
    serves every size.
    """
    from ...frontend import build_ir_with, dynamic_ir_with

    if _has_symbolic_dims(specs):
        return dynamic_ir_with(JaxFrontEnd(), fn, list(specs), target=target, mode=mode)
    return build_ir_with(JaxFrontEnd(), fn, specs, target=target, mode=mode)
