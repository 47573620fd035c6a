"""The contract every front end implements, their registry, and how IR becomes an IRModule."""

from __future__ import annotations

import abc
from collections.abc import Mapping

__all__ = [
    "FrontEnd",
    "register",
    "available",
    "get",
    "for_model",
    "to_ir_module",
    "require_inference",
    "op_registrar",
    "compute_dtype",
    "computed_array",
    "FLOAT16_POLICY",
]

_REGISTRY: dict[str, type[FrontEnd]] = {}


class FrontEnd(abc.ABC):
    """A model importer: NumPy tracing today; PyTorch, ONNX, JAX and TensorFlow to come.

    A subclass sets :attr:`name`, is registered with :func:`register`, and
    implements :meth:`import_model` by building IR with one
    :class:`cuvil.frontends.IRBuilder`:

    * values and ops only through the builder, so result types come from the
      dialect's shape rules and invalid graphs fail with the op and its location;
    * a structured location on every op: ``FileLineColLoc`` for Python source,
      ``builder.node(name, source)`` (a ``NameLoc``) around the ops of each model
      node, ``FusedLoc``/``CallSiteLoc`` where they say more;
    * training-only nodes (dropout) kept as their cuvil ops: ``mode="inference"``
      pipelines remove them.
    """

    #: The registry name, e.g. ``"numpy"``, ``"onnx"``.
    name: str = ""

    @classmethod
    def accepts(cls, model) -> bool:
        """Whether ``model`` is this front end's kind of model (``build_ir`` dispatch).

        Must be cheap and must not import a framework: a model of framework X
        exists only once X is in ``sys.modules``. The NumPy tracer accepts any
        callable and is asked last.
        """
        return False

    def input_spec(self, model, input_spec, default_dtype: str) -> dict:
        """``input_spec`` as given to ``build_ir``, as name -> ``cuvil.TensorSpec``.

        The default accepts the NumPy tracer's form (a mapping of parameter
        names); importers override it to take lists of specs or to read the
        model's own declared inputs.
        """
        from ..frontend import normalize_input_spec

        return normalize_input_spec(input_spec, default_dtype)

    def symbolic_dims(self, model, input_spec):
        """``input_spec`` for ``to_ir_with_dynamic_shape`` with framework dims made plain.

        The default returns it as it is; an importer whose framework has its own
        symbolic dims (``torch.export.Dim``) turns them into symbol names here.
        """
        return input_spec

    def describe(self, model) -> tuple[str, str]:
        """The model's name (the IR function's) and where it came from (a path or ``file:line``)."""
        return type(model).__name__, ""

    @abc.abstractmethod
    def import_model(self, model, input_spec: Mapping, mode: str = "inference"):
        """Build the IR of ``model`` for inputs ``input_spec`` (name -> ``cuvil.TensorSpec``).

        Returns a :class:`cuvil._program.TracedProgram` whose ``input_names``
        are the keys of ``input_spec`` in the IR's argument order. Raises
        :class:`cuvil.TraceError` for invalid graphs and
        :class:`cuvil.UnsupportedConstructError` for what it cannot import.
        """


def register(cls: type[FrontEnd]) -> type[FrontEnd]:
    """Register a front end under ``cls.name`` (usable as a class decorator)."""
    if not cls.name:
        raise ValueError(f"front end {cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def available() -> tuple[str, ...]:
    """The registered front ends' names, sorted."""
    return tuple(sorted(_REGISTRY))


def get(name: str) -> FrontEnd:
    """A new instance of the front end registered as ``name``."""
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise ValueError(
            f"cuvil: no front end named {name!r}; available: {', '.join(available())}"
        ) from None


def for_model(model) -> FrontEnd:
    """A new instance of the front end that imports ``model``.

    Framework importers are asked first; the NumPy tracer (any callable) last.
    Raises ``TypeError`` listing the accepted kinds when none accepts it.
    """
    ordered = sorted(_REGISTRY.values(), key=lambda cls: cls.name == "numpy")
    for cls in ordered:
        if cls.accepts(model):
            return cls()
    raise TypeError(
        f"cuvil: cannot import a {type(model).__name__}: build_ir accepts a Python callable "
        f"(NumPy tracing) or a model of a registered front end ({', '.join(available())})"
    )


# float16 in an imported model is computed in float32 (weights and casts widened at
# import); float16 inputs and outputs are converted by the compiled model at its boundary.
FLOAT16_POLICY = (
    "float16 inputs, outputs and values are computed in float32: a model keeps its float16 "
    "signature (the compiled code converts at the boundary) and rounds like float32 inside"
)


def compute_dtype(name: str) -> str:
    """The dtype-table name Cuvil computes a framework dtype ``name`` in (float16 -> float32)."""
    from .._dtypes import compute_dtype as computed

    return computed(name)


def computed_array(array, unsupported):
    """``array`` in the dtype Cuvil computes it in (float16 widened to float32) for a constant;
    ``unsupported(what)`` makes the importer's error for a dtype Cuvil does not compile."""
    import numpy as np

    from .._dtypes import is_supported

    array = np.asarray(array)
    array = array.astype(compute_dtype(array.dtype.name), copy=False)
    if not is_supported(array.dtype):
        raise unsupported(f"a constant of dtype {array.dtype}")
    return array


def op_registrar(table: dict):
    """The decorator factory of an importer's op table: ``@register("Add", "Sub")`` maps each name
    to the decorated handler in ``table`` and returns the handler unchanged."""

    def register(*names: str):
        def decorate(fn):
            for name in names:
                table[name] = fn
            return fn

        return decorate

    return register


def require_inference(mode: str, name: str, frontend: str) -> None:
    """Refuse ``mode="training"`` for importers of inference graphs (JAX, TensorFlow)."""
    if mode != "inference":
        raise ValueError(
            f"cuvil: cannot import {name} with mode={mode!r}: the {frontend} front end imports "
            "inference graphs only; fix: use mode='inference' (training is not supported by "
            "this version)"
        )


def to_ir_module(
    program,
    *,
    name: str,
    source: str,
    input_spec=None,
    target="cpu",
    mode="inference",
    device: int = 0,
):
    """Verify ``program``'s IR and wrap it as a :class:`cuvil.IRModule`.

    ``input_spec`` maps input names to ``cuvil.TensorSpec``; by default it is
    read from the program's inputs. Raises :class:`cuvil.CompileError` with the
    verifier's diagnostics (at each op's location) for invalid IR. With
    symbolic inputs, each dynamic output dim is a size expression of the input
    symbols (``cuvil-propagate-symbols``), and disagreeing symbols (``N`` and
    ``M`` where sizes must be equal) raise :class:`cuvil.CompileError`.
    """
    from .. import _dtypes
    from .._errors import CompileError
    from ..frontend import IRModule, TensorSpec

    ext = _dtypes.extension()
    try:
        ext.verify(program.mlir)
    except ext.CompileError as error:
        raise CompileError(f"cuvil: the IR built from {name} is invalid:\n{error}") from error
    if input_spec is None:
        input_spec = {
            key: TensorSpec(shape, dtype)
            for key, (_, shape), dtype in zip(
                program.input_names, program.inputs, program.input_dtype_names()
            )
        }
    module = IRModule(
        program=program,
        name=name,
        source=source,
        input_spec={key: input_spec[key] for key in program.input_names},
        target=target,
        mode=mode,
        fingerprint=ext.fingerprint(program.mlir),
        device=device,
    )
    if module.is_symbolic:
        module.output_spec = _symbolic_outputs(module)
    return module


def _symbolic_outputs(module) -> tuple:
    """The outputs' specs with each dynamic dim a size expression of the input symbols."""
    from .. import _dtypes
    from .._errors import CompileError
    from ..frontend import TensorSpec

    ext = _dtypes.extension()
    try:
        symbols = ext.result_symbols(module.text, module.func_name)
    except ext.CompileError as error:
        raise CompileError(
            f"cuvil: the symbolic shapes of {module.name} disagree:\n{error}"
        ) from None
    outputs = []
    for spec, exprs in zip(module.output_spec, symbols):
        named = iter(exprs)
        # A dynamic dim the symbols fix to a constant (x[:, :2] of a symbolic axis) is static.
        shape = tuple(
            (int(e) if (e := next(named)).lstrip("-").isdigit() else e)
            if d is None or isinstance(d, str)
            else d
            for d in spec.shape
        )
        outputs.append(TensorSpec(shape, spec.dtype))
    return tuple(outputs)
