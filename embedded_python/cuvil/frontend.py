"""``cuvil.frontend.build_ir``: a Python model and its input spec to inspectable, compilable IR."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from . import _symbolic, frontends
from ._dtypes import is_boundary_dtype, is_supported
from ._errors import CompileError
from ._jit import CompiledProgram, check_ir_stage, compile_program
from ._program import SUPPORTED_NAMES, signature_of
from ._targets import resolve_target

__all__ = [
    "build_ir",
    "to_ir_with_dynamic_shape",
    "IRModule",
    "CompiledModel",
    "TensorSpec",
    "InputSpecError",
    "ShapeSpecError",
    "MODES",
]

MODES = ("inference", "training")
_API = "cuvil.frontend.build_ir"
_DYNAMIC_API = "cuvil.frontend.to_ir_with_dynamic_shape"
_Parameter = inspect.Parameter


class InputSpecError(ValueError):
    """``input_spec`` does not describe the model's inputs (names, dtypes or layout)."""


class ShapeSpecError(InputSpecError):
    """An input's shape in ``input_spec`` cannot be compiled (``None``, symbolic or bad dims)."""


@dataclass(frozen=True)
class TensorSpec:
    """The shape and dtype of one model input, e.g. ``TensorSpec((1, 3, 224, 224), "float32")``.

    :func:`build_ir` compiles static shapes: every dim must be a positive int.
    ``None`` dims and string (symbolic) dims such as ``"h"`` are rejected with a
    :class:`ShapeSpecError` naming the input and the dim.
    :func:`to_ir_with_dynamic_shape` keeps them: a string names a dynamic size
    (equal names, equal sizes), ``None`` is a dynamic size of its own.
    """

    shape: tuple
    dtype: object = "float32"

    def __post_init__(self):
        if isinstance(self.shape, list):
            object.__setattr__(self, "shape", tuple(self.shape))

    def __str__(self) -> str:
        dtype = self.dtype if isinstance(self.dtype, str) else np.dtype(self.dtype).name
        return f"{dtype}[{', '.join(str(d) for d in self.shape)}]"


def _normalize_dtype(dtype, what: str) -> str:
    """The name of a supported dtype given as a string, NumPy dtype or type.

    float16 is accepted too: the compiled model computes it in float32 and
    converts at the boundary (:func:`cuvil._dtypes.compute_dtype`).
    """
    try:
        resolved = None if dtype is None else np.dtype(dtype)
    except TypeError:
        resolved = None
    if resolved is None:
        raise InputSpecError(
            f"{_API}: {what} has dtype {dtype!r}, which is not a NumPy dtype "
            f"(supported: {SUPPORTED_NAMES})"
        )
    if is_boundary_dtype(resolved) and resolved.isnative:
        return resolved.name
    if not is_supported(resolved):
        raise InputSpecError(
            f"{_API}: {what} has unsupported dtype {resolved} (supported: {SUPPORTED_NAMES}, "
            "and float16 computed in float32)"
        )
    return resolved.name


def _normalize_shape(name: str, shape) -> tuple[int, ...]:
    """``shape`` as a tuple of positive ints, or a :class:`ShapeSpecError` naming the input."""
    if shape is None:
        raise ShapeSpecError(
            f"{_API}: Missing shape attr: input '{name}' has no shape (None) in static mode; "
            f"fix: give a tuple of ints, e.g. {{{name!r}: (1, 3, 224, 224)}}"
        )
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise InputSpecError(
            f"{_API}: input '{name}' is described by a {type(shape).__name__} ({shape!r}); "
            "give a tuple of ints, a (shape, dtype) pair or a cuvil.TensorSpec"
        )
    shape = tuple(shape)
    dims = []
    for index, dim in enumerate(shape):
        if dim is None:
            example = tuple(1 if d is None else d for d in shape)
            raise ShapeSpecError(
                f"{_API}: Missing shape attr: input '{name}' has None at dim {index} of shape "
                f"{shape} in static mode; fix: give a tuple of ints, e.g. {example}, or keep the "
                "dim symbolic with cuvil.frontend.to_ir_with_dynamic_shape"
            )
        if isinstance(dim, str):
            raise ShapeSpecError(
                f"{_API}: input '{name}' has the symbolic dim {dim!r} at dim {index} of shape "
                f"{shape}; symbolic dimensions are not supported by build_ir; "
                f"fix: give an int for dim {index}, or use "
                "cuvil.frontend.to_ir_with_dynamic_shape"
            )
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise ShapeSpecError(
                f"{_API}: input '{name}' has {dim!r} (a {type(dim).__name__}) at dim {index} of "
                f"shape {shape}; dims must be ints"
            )
        if dim <= 0:
            raise ShapeSpecError(
                f"{_API}: input '{name}' has {dim} at dim {index} of shape {shape}; dims must be "
                "positive (Cuvil compiles neither empty nor negative dims)"
            )
        dims.append(int(dim))
    return tuple(dims)


def _normalize_symbolic_shape(name: str, shape) -> tuple:
    """``shape`` with dims that are positive ints, symbol names (identifiers) or ``None``."""
    if not isinstance(shape, (tuple, list)):
        raise InputSpecError(
            f"{_DYNAMIC_API}: input '{name}' has shape {shape!r}; give a tuple of ints, "
            "symbol names and None, e.g. (1, 3, 'h', 'w')"
        )
    dims = []
    for index, dim in enumerate(shape):
        if isinstance(dim, str) and not dim.isidentifier():
            raise ShapeSpecError(
                f"{_DYNAMIC_API}: input '{name}' has the symbol {dim!r} at dim {index}; symbol "
                "names must be Python identifiers such as 'N' or 'seq_len'"
            )
        if dim is None or isinstance(dim, str):
            dims.append(dim)
        else:
            dims.extend(_normalize_shape(name, (dim,)))
    return tuple(dims)


def _shape_and_dtype(value, default_dtype: str) -> tuple:
    """The shape and dtype an ``input_spec`` entry (shape, pair or TensorSpec-like) gives."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return value.shape, value.dtype
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], (tuple, list)):
        return value
    return value, default_dtype


def _normalize_spec(name: str, value, default_dtype: str) -> TensorSpec:
    """One ``input_spec`` entry (shape, ``(shape, dtype)`` or TensorSpec-like) as a TensorSpec.

    A float16 input is accepted (see :func:`_normalize_dtype`).
    """
    shape, dtype = _shape_and_dtype(value, default_dtype)
    dims = _normalize_shape(name, shape)
    return TensorSpec(dims, _normalize_dtype(dtype, f"input '{name}'"))


def _quoted(names) -> str:
    return ", ".join(f"'{n}'" for n in names)


def _parameter_list(name: str, signature: inspect.Signature) -> str:
    """``Model(x, *args, **kwargs)``: the callable's parameter names, without annotations."""
    prefix = {_Parameter.VAR_POSITIONAL: "*", _Parameter.VAR_KEYWORD: "**"}
    params = signature.parameters.values()
    return f"{name}({', '.join(prefix.get(p.kind, '') + p.name for p in params)})"


def _example_call(fn, name: str, examples: dict) -> tuple[list, dict]:
    """Positional and keyword arguments that pass each example to the parameter it names."""
    signature = signature_of(fn)
    if signature is None:
        raise InputSpecError(
            f"{_API}: cannot read the parameters of {name}, so input_spec cannot be matched "
            "to them; wrap it in a Python function with named parameters"
        )
    params = signature.parameters
    any_keyword = any(p.kind is _Parameter.VAR_KEYWORD for p in params.values())
    unknown = [k for k in examples if k not in params and not any_keyword]
    variadic = [
        k
        for k in examples
        if k in params and params[k].kind in (_Parameter.VAR_POSITIONAL, _Parameter.VAR_KEYWORD)
    ]
    missing = [
        p.name
        for p in params.values()
        if p.kind not in (_Parameter.VAR_POSITIONAL, _Parameter.VAR_KEYWORD)
        and p.default is _Parameter.empty
        and p.name not in examples
    ]
    problems = []
    if missing:
        problems.append(f"no shape for {_quoted(missing)} (parameters without a default)")
    if unknown:
        problems.append(f"{_quoted(unknown)} not among its parameters")
    if variadic:
        problems.append(f"{_quoted(variadic)} name *args/**kwargs; give each input its own name")
    if problems:
        raise InputSpecError(
            f"{_API}: input_spec (names: {_quoted(examples) or 'none'}) does not match the "
            f"parameters of {_parameter_list(name, signature)}: {'; '.join(problems)}"
        )
    args, kwargs, skipped = [], {}, None
    for p in params.values():
        if p.kind is _Parameter.POSITIONAL_ONLY:
            if p.name not in examples:
                skipped = p.name
            elif skipped is not None:
                raise InputSpecError(
                    f"{_API}: positional-only parameter '{p.name}' of "
                    f"{_parameter_list(name, signature)} cannot be given without '{skipped}', "
                    f"which comes before it; give '{skipped}' a shape too"
                )
            else:
                args.append(examples[p.name])
        elif p.name in examples and p.kind is not _Parameter.VAR_KEYWORD:
            kwargs[p.name] = examples[p.name]
    kwargs.update((k, v) for k, v in examples.items() if k not in params)
    return args, kwargs


def build_ir(
    model,
    input_spec: Mapping | None = None,
    target: str | None = None,
    mode: str = "inference",
    dtype="float32",
) -> IRModule:
    """Trace ``model`` into Cuvil IR for the inputs described by ``input_spec``.

    Args:
        model: a Python callable (a function, or an object with ``__call__`` such
            as a class holding NumPy weights); ``@cuvil.jit`` functions work too.
            Or a model of a registered front end: an ONNX model (a path ending
            in ``.onnx``, its bytes, or an ``onnx.ModelProto``).
        input_spec: parameter name -> shape (a tuple of positive ints), a
            ``(shape, dtype)`` pair, or a :class:`TensorSpec`-like object (anything
            with ``shape`` and ``dtype``, a NumPy array included). Every
            parameter without a default must be named; no other name may be.
            For an ONNX model it is optional (the graph's declared inputs) and
            may also be a list of specs in the graph's input order.
        target: a registered target (``cuvil.available_targets()``), optionally
            with a device index (``"cuda:0"``); an unknown one raises
            ``ValueError`` listing the registered targets. ``None`` is
            ``cuvil.default_target()`` (``"cpu"`` unless set otherwise).
        mode: ``"inference"`` (training-only ops such as ``cuvil.dropout`` are
            removed when compiling) or ``"training"`` (the IR can be inspected,
            not compiled).
        dtype: the dtype of inputs given by shape alone.

    The model runs once on zero-valued arrays of those shapes; constructs that
    ``cuvil.jit`` would run as plain Python raise
    :class:`cuvil.UnsupportedConstructError` here, naming the construct and the
    ``file:line``. A ``None`` dim raises :class:`ShapeSpecError` ("Missing shape
    attr"), as does a symbolic (string) dim.
    """
    return build_ir_with(
        frontends.for_model(model), model, input_spec, target=target, mode=mode, dtype=dtype
    )


def build_ir_with(
    frontend, model, input_spec, *, target=None, mode="inference", dtype="float32"
) -> IRModule:
    """:func:`build_ir` through a given front-end instance (``cuvil.load_onnx`` uses its own)."""
    target, device = resolve_target(target, _API)
    if mode not in MODES:
        raise ValueError(
            f"{_API}: unknown mode {mode!r}; use one of {', '.join(repr(m) for m in MODES)}"
        )
    if isinstance(model, type):
        raise TypeError(
            f"{_API}: model is the class {model.__name__}, not a model; pass an instance, "
            f"e.g. {model.__name__}(...)"
        )
    default_dtype = _normalize_dtype(dtype, "the dtype argument")
    specs = frontend.input_spec(model, input_spec, default_dtype)
    return _import(frontend, model, specs, mode, target, device)


def _import(frontend, model, specs, mode, target, device) -> IRModule:
    """``model`` imported by ``frontend`` for ``specs``, verified, as an IRModule."""
    # An unnamed dynamic dim is named as the IR builder names it (arg0_d2), so
    # that calls bind it and output sizes can use it.
    specs = {
        key: TensorSpec(
            tuple(f"arg{index}_d{axis}" if d is None else d for axis, d in enumerate(spec.shape)),
            spec.dtype,
        )
        for index, (key, spec) in enumerate(specs.items())
    }
    program = frontend.import_model(model, specs, mode)
    name, source = frontend.describe(model)
    return frontends.to_ir_module(
        program,
        name=name,
        source=source,
        input_spec=specs,
        target=target,
        mode=mode,
        device=device,
    )


def to_ir_with_dynamic_shape(
    model,
    input_spec,
    target: str | None = None,
    mode: str = "inference",
    dtype="float32",
) -> IRModule:
    """Like :func:`build_ir`, keeping symbolic dimensions symbolic in the IR.

    ``input_spec`` is a list of :class:`TensorSpec` in the model's parameter
    order, or a mapping of parameter names to them (or to shapes). A dim may
    be a symbol name (``"N"``, ``"h"``: equal names mean equal sizes), ``None``
    (a dynamic size of its own) or an int. The IR's arguments have ``?`` for
    those dims and record the names (``cuvil.symbols``); the compiler checks
    every op against them, so two different names meeting where sizes must
    be equal raise :class:`cuvil.CompileError` naming the op and the symbols.
    ``output_spec`` gives each output dim as a size expression of the input
    symbols (``"N"``, ``"N * 2"``), which :meth:`IRModule.output_shapes`
    evaluates for concrete inputs.
    """
    return dynamic_ir_with(frontends.for_model(model), model, input_spec, target, mode, dtype)


def dynamic_ir_with(frontend, model, input_spec, target=None, mode="inference", dtype="float32"):
    """:func:`to_ir_with_dynamic_shape` through a given front end (``cuvil.compile_to_ir``)."""
    target, device = resolve_target(target, _DYNAMIC_API)
    if mode not in MODES:
        raise ValueError(f"{_DYNAMIC_API}: unknown mode {mode!r}; use one of {MODES}")
    default_dtype = _normalize_dtype(dtype, "the dtype argument")
    input_spec = frontend.symbolic_dims(model, input_spec)
    specs = _symbolic_specs(frontend, model, input_spec, default_dtype)
    return _import(frontend, model, specs, mode, target, device)


def _symbolic_specs(frontend, model, input_spec, default_dtype: str) -> dict[str, TensorSpec]:
    """``input_spec`` (a list in parameter order, or a mapping) as symbolic TensorSpecs."""
    if isinstance(input_spec, Mapping):
        items = list(input_spec.items())
    else:
        values = list(input_spec)
        # The front end names the inputs; static stand-ins (1 for each
        # symbolic dim) let it apply its own rules for lists.
        stand_ins = []
        for v in values:
            shape, dtype = _shape_and_dtype(v, default_dtype)
            if isinstance(shape, (tuple, list)):
                v = TensorSpec(tuple(d if isinstance(d, int) else 1 for d in shape), dtype)
            stand_ins.append(v)
        if frontend.name == "numpy":
            fn = getattr(model, "__wrapped__", model)
            params = list(signature_of(fn).parameters) if signature_of(fn) else []
            names = params[: len(values)]
        else:
            names = list(frontend.input_spec(model, stand_ins, default_dtype))
        if len(names) != len(values):
            raise InputSpecError(
                f"{_DYNAMIC_API}: {len(values)} input specs for {len(names)} model inputs"
            )
        items = list(zip(names, values))
    specs = {}
    for name, value in items:
        shape, dtype = _shape_and_dtype(value, default_dtype)
        shape = tuple(shape) if isinstance(shape, list) else shape
        specs[name] = TensorSpec(
            _normalize_symbolic_shape(name, shape), _normalize_dtype(dtype, f"input '{name}'")
        )
    return specs


def normalize_input_spec(input_spec, default_dtype: str) -> dict[str, TensorSpec]:
    """A mapping of parameter names to shapes / ``(shape, dtype)`` / specs, as TensorSpecs."""
    if not isinstance(input_spec, Mapping):
        raise InputSpecError(
            f"{_API}: input_spec must map parameter names to shapes, e.g. "
            f"{{'x': (1, 3, 224, 224)}}; got a {type(input_spec).__name__}"
        )
    for key in input_spec:
        if not isinstance(key, str):
            raise InputSpecError(f"{_API}: input_spec keys must be parameter names, got {key!r}")
    return {key: _normalize_spec(key, value, default_dtype) for key, value in input_spec.items()}


def _signature_text(name: str, inputs: Mapping, outputs) -> str:
    ins = ", ".join(f"{key}: {spec}" for key, spec in inputs.items())
    return f"{name}({ins}) -> ({', '.join(str(spec) for spec in outputs)})"


def bind_inputs(label: str, names: list, args, kwargs) -> list:
    """The inputs called ``names``, given by position (``args``) and by name (``kwargs``), in
    order; ``TypeError`` naming ``label`` and the input for one missing, unknown or repeated."""
    if len(args) > len(names):
        raise TypeError(
            f"{label} takes {len(names)} input(s) ({_quoted(names)}) but {len(args)} were given"
        )
    given = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{label} has no input '{key}'; its inputs are {_quoted(names)}")
        if key in given:
            raise TypeError(f"{label} got input '{key}' both by position and by name")
        given[key] = value
    missing = [n for n in names if n not in given]
    if missing:
        raise TypeError(f"{label} is missing input(s) {_quoted(missing)}")
    return [given[n] for n in names]


#: optimize()'s optimization levels and the optional passes each turns off.
OPTIMIZATION_LEVELS = {
    "disable_all": ("cuvil-fold-batch-norm", "cuvil-fold-constants"),
    "basic": (),
    "all": (),
}


class IRModule:
    """Cuvil IR built by :func:`build_ir`: inspect its text, compile it, look at later stages.

    Attributes:
        name: the model's Python name; ``func_name`` is its symbol in the IR.
        text: the Cuvil IR as MLIR text, each op located at the user's ``file:line``.
        fingerprint: the structural SHA-256 of the IR (locations ignored), 64 hex digits.
        input_spec: input name -> :class:`TensorSpec`, in the compiled function's order.
        output_spec: the outputs' :class:`TensorSpec`, in the order the model returns them.
        target, mode: as given to :func:`build_ir`.
    """

    def __init__(self, program, name, source, input_spec, target, mode, fingerprint, device=0):
        self._program = program
        self.name = name
        self.source = source
        self._input_spec = dict(input_spec)
        self.output_spec = tuple(
            TensorSpec(s, dtype)
            for (_, s), dtype in zip(program.outputs, program.output_dtype_names())
        )
        self.target = target
        self.device = device
        self.mode = mode
        self.fingerprint = fingerprint
        self._compiled: dict[tuple, CompiledModel] = {}
        self._latest: CompiledModel | None = None
        self._lock = threading.Lock()
        self._enable_fusion = True
        # Optional passes optimize() turned off (optimization level, memory pattern).
        self._disabled: tuple[str, ...] = ()
        # input shapes -> (the output_spec they were evaluated for, output shapes)
        self._output_shapes: dict[tuple, tuple] = {}
        #: What :meth:`optimize` changed for a precision or quantization, else None.
        self.precision_report: dict | None = None

    @property
    def text(self) -> str:
        return self._program.mlir

    @property
    def func_name(self) -> str:
        return self._program.func_name

    @property
    def input_spec(self) -> dict[str, TensorSpec]:
        return dict(self._input_spec)

    @property
    def is_symbolic(self) -> bool:
        """True when an input has symbolic dims (see :func:`to_ir_with_dynamic_shape`)."""
        return any(_symbolic.is_symbolic(spec.shape) for spec in self._input_spec.values())

    def output_shapes(self, *inputs) -> tuple[tuple[int, ...], ...]:
        """The outputs' shapes for inputs of these shapes (arrays or shape tuples, in order).

        Binds each symbol to its size in the inputs (``ValueError`` when a
        static size differs or one symbol gets two sizes) and evaluates the
        output size expressions of :attr:`output_spec`.
        """
        shapes = tuple(
            tuple(np.shape(value) if hasattr(value, "shape") else value) for value in inputs
        )
        known = self._output_shapes.get(shapes)
        if known is not None and known[0] is self.output_spec:
            return known[1]  # the same input sizes as an earlier call: nothing to bind again
        specs = {name: spec.shape for name, spec in self._input_spec.items()}
        bindings = _symbolic.bind(specs, dict(zip(self._input_spec, shapes)))
        self._check_ranges(bindings)
        result = tuple(_symbolic.output_shape(spec.shape, bindings) for spec in self.output_spec)
        if len(self._output_shapes) >= 256:
            self._output_shapes.clear()
        self._output_shapes[shapes] = (self.output_spec, result)
        return result

    @property
    def symbol_ranges(self) -> dict[str, tuple[int, int | None]]:
        """Symbol name -> (lowest, highest or ``None``) size the model allows, where it bounds one.

        From the importer (torch.export's range constraints: a causal mask of 16
        rows bounds the sequence by 16); every call checks its sizes against them.
        """
        return dict(self._program.symbol_ranges)

    def _check_ranges(self, bindings) -> None:
        for symbol, (lowest, highest) in self._program.symbol_ranges.items():
            size = bindings.get(symbol)
            if size is None or (lowest <= size and (highest is None or size <= highest)):
                continue
            where = next(
                (
                    f"input '{name}' dim {axis}"
                    for name, spec in self._input_spec.items()
                    for axis, d in enumerate(spec.shape)
                    if d == symbol
                ),
                f"the size {symbol}",
            )
            bound = f"{lowest} <= {symbol}" + (f" <= {highest}" if highest is not None else "")
            raise ValueError(
                f"{where} is {size}, but the model allows {bound} (a size the model itself "
                f"bounds, such as a table of positions or a mask of that many rows); fix: call "
                f"it with {symbol} in that range"
            )

    def optimize(
        self,
        target: str | None = "cpu",
        precision: str = "fp32",
        enable_fuse: bool = True,
        calibrate_dataset=None,
        quantization: str | None = None,
        group_size: int = 128,
        calibration: str = "kl",
        optimization_level: str = "all",
        enable_mem_pattern: bool = True,
    ) -> IRModule:
        """This IR set up for ``target``, in a precision, with fusion on or off.

        The graph and fusion passes run when the returned module is compiled,
        so ``module.optimize(enable_fuse=False).compile()`` compiles without
        fusion.

        Args:
            optimization_level: which optional passes run, as ONNX Runtime's
                graph optimization levels: ``"disable_all"`` (no constant or
                batch-norm folding, no fusion; the canonicalization every
                lowering relies on still runs), ``"basic"`` (folding, no
                fusion), ``"all"`` (also elementwise and epilogue fusion;
                ``enable_fuse=False`` turns fusion off at any level).
            enable_mem_pattern: plan the intermediates into one arena reused
                by every call (``cuvil-plan-memory``); ``False`` allocates
                each buffer on its own.
            precision: ``"fp32"``, or ``"bf16"``/``"fp16"``: matmuls read their
                operands in that type (constant weights converted once) and
                accumulate in float32; the rest stays float32. ``"tf32"``
                changes no type: it allows the float32 matmuls to read their
                operands rounded to TF32 (10-bit mantissa) where a target has
                TF32 tensor cores (cuda); the CPU keeps them float32.
            quantization: ``None``; ``"int4"``: constant matmul weights become
                signed 4-bit codes, two per byte, with one scale per
                ``group_size`` rows and column, decoded inside the GEMM kernel;
                ``"int8"``: weights per column and activations with scales
                calibrated on ``calibrate_dataset``, int8 GEMMs with int32
                accumulation.
            calibrate_dataset: samples (dicts by input name, tuples in input
                order, or single arrays); required for int8, whose activation
                scales come from them (``calibration``: ``"kl"``, the threshold
                minimizing the KL divergence, or ``"percentile"``, 99.99th).
                When given, :attr:`precision_report` also has the accuracy of
                the result against float32 on these samples.

        The rewritten IR is this module's text with the narrow weights, so
        :meth:`save` and :meth:`CompiledModel.export` write them, smaller;
        :attr:`precision_report` says what changed (weight bytes before and
        after, matmuls quantized, those kept in float32 and why).
        """
        from . import _precision

        api = "IRModule.optimize"
        _precision.check_options(
            api, precision, quantization, group_size, calibration, calibrate_dataset
        )
        if optimization_level not in OPTIMIZATION_LEVELS:
            raise ValueError(
                f"cuvil: {api}: optimization_level={optimization_level!r} is not one of "
                f"{', '.join(map(repr, OPTIMIZATION_LEVELS))}"
            )
        target, device = resolve_target(target, api)
        program, fingerprint, report = self._program, self.fingerprint, None
        samples = None
        if precision != "fp32" or quantization is not None:
            program, samples, report = _precision.reduce_precision(
                self, precision, quantization, calibrate_dataset, group_size, calibration
            )
            from ._jit import _extension

            fingerprint = _extension().fingerprint(program.mlir)
        module = IRModule(
            program,
            self.name,
            self.source,
            self._input_spec,
            target,
            self.mode,
            fingerprint,
            device,
        )
        module._enable_fusion = bool(enable_fuse) and optimization_level == "all"
        module._disabled = tuple(
            OPTIMIZATION_LEVELS[optimization_level]
            + (() if enable_mem_pattern else ("cuvil-plan-memory",))
        )
        module.output_spec = self.output_spec  # symbolic sizes, if any
        module.precision_report = report if report is not None else self.precision_report
        if report is not None and samples is not None:
            report["accuracy"] = _precision.accuracy(
                self.optimize(target="cpu").compile(),
                module.optimize(target="cpu").compile(),
                samples[:32],
            )
        return module

    def compile(
        self, enable_fusion: bool | None = None, pipeline=None, target: str | None = None
    ) -> CompiledModel:
        """Compile for the target; the result is cached per target, ``enable_fusion`` and
        pipeline.

        ``enable_fusion`` defaults to the :meth:`optimize` setting (on).
        ``pipeline`` is an optional :class:`cuvil.PipelineBuilder` (its
        ``enable_fusion`` then wins). ``target`` (``"cuda:0"``, ``"wasm"``...)
        compiles for another target than the one the module was built for; the
        pipeline, if given, must be that target's.

        Raises :class:`cuvil.CompileError` for a ``mode="training"`` module:
        this version compiles inference graphs only.
        """
        if self.mode == "training":
            raise CompileError(
                f"cuvil: cannot compile {self.name}: it was built with mode='training', and "
                "training graphs cannot be compiled by this version (inference only). Its IR "
                "is still available as .text. Fix: build_ir(..., mode='inference'), which "
                "removes training-only ops such as cuvil.dropout when compiling."
            )
        if enable_fusion is None:
            enable_fusion = self._enable_fusion
        target_name, device = self.target, self.device
        if target is not None:
            from ._targets import resolve_target

            target_name, device = resolve_target(target, "IRModule.compile")
        if pipeline is not None and pipeline.target != target_name:
            raise ValueError(
                f"IRModule.compile: the pipeline was built for target {pipeline.target!r}, "
                f"not {target_name!r}; build it with cuvil.PipelineBuilder(target="
                f"{target_name!r})"
            )
        if pipeline is None and self._disabled:
            from ._passes import PipelineBuilder

            pipeline = PipelineBuilder(target=target_name, enable_fusion=enable_fusion)
            for name in self._disabled:
                pipeline.disable(name)
        fusion = bool(pipeline.enable_fusion if pipeline is not None else enable_fusion)
        key = (target_name, device, fusion, pipeline.cache_key() if pipeline is not None else None)
        with self._lock:
            model = self._compiled.get(key)
            if model is None:
                entry = compile_program(
                    self._program,
                    self.name,
                    self.source,
                    target_name,
                    fusion,
                    pipeline,
                    device=device,
                )
                model = self._compiled[key] = CompiledModel(self, entry)
            self._latest = model
        return model

    def save(self, path) -> None:
        """Write this IR as an IR package (``.irpkg``, ``docs/irpkg.md``) at ``path``.

        :func:`cuvil.load_irpkg` reads it back in any later Cuvil, which can
        compile it for any target; the package names the IR's fingerprint.
        """
        from ._packages import save_irpkg

        save_irpkg(self, path)

    def inspect(self, stage: str = "input") -> str:
        """IR at ``stage`` (one of ``cuvil.IR_STAGES``) of the latest compilation.

        Compiles with the default options first if :meth:`compile` was not called.
        """
        check_ir_stage(stage, "IRModule.inspect")
        model = self._latest or self.compile()
        return model.inspect(stage)

    def __repr__(self) -> str:
        return (
            f"<cuvil.IRModule {_signature_text(self.name, self._input_spec, self.output_spec)} "
            f"target={self.target!r} mode={self.mode!r} fingerprint={self.fingerprint[:12]}>"
        )


class CompiledModel:
    """An :class:`IRModule` compiled to machine code, called with NumPy arrays.

    Inputs are given positionally or by their ``input_spec`` names; each must
    be a NumPy array of exactly the spec's dtype and shape (a non-contiguous one
    is copied). Returns fresh NumPy arrays, arranged as the model returned them.
    """

    def __init__(self, module: IRModule, entry: CompiledProgram):
        self.module = module
        self._entry = entry
        self._names = list(module.input_spec)
        # float16 inputs and outputs of a model computed in float32 are converted
        # by the compiled program (CompiledProgram.run).
        self._types = [(np.dtype(s.dtype), s.shape) for s in module.input_spec.values()]

    @property
    def input_spec(self) -> dict[str, TensorSpec]:
        return self.module.input_spec

    @property
    def output_spec(self) -> tuple[TensorSpec, ...]:
        return self.module.output_spec

    @property
    def enable_fusion(self) -> bool:
        return self._entry.record.enable_fusion

    @property
    def compilation(self):
        """The :class:`cuvil.Compilation` record (also listed by ``cuvil.compilations()``)."""
        return self._entry.record

    @property
    def compile_ms(self) -> float:
        return self._entry.record.compile_ms

    @property
    def from_cache(self) -> bool:
        return self._entry.record.from_cache

    def inspect(self, stage: str = "input") -> str:
        """IR at ``stage``, one of ``cuvil.IR_STAGES`` (``"input"`` ... ``"asm"``)."""
        check_ir_stage(stage, "CompiledModel.inspect", self._entry.record.compiled)
        return self._entry.record.compiled.ir(stage)

    def emit(self, kind: str, path: str) -> None:
        """Write the compiled code as ``kind`` (mlir, llvm, asm, obj or so) to ``path``."""
        self._entry.record.compiled.emit(kind, str(path))

    def export(self, path) -> None:
        """Write an executable package (``.cuvil``) that :mod:`cuvil.runtime` and the C
        runtime load in another process: the code, its signature (entry ``main``), the
        symbolic-shape rules, the IR and its fingerprint (``docs/irpkg.md``). A target
        that writes files to deploy writes them into the folder ``path`` instead:
        ``c`` writes ``<name>.c`` and ``<name>.h``, ``wasm`` ``<name>.wasm`` and the ES
        module ``<name>.mjs`` that loads it in Node or a browser."""
        from ._packages import export_executable
        from ._sources import export_sources, source_kinds

        if source_kinds(self._entry.record):
            export_sources(self._entry.record, path)
        else:
            export_executable(self, path)

    def __call__(self, *args, **kwargs):
        inputs = self._bind(args, kwargs)
        if not self.module.is_symbolic:
            return self._entry.run(inputs)
        # One compilation serves every size: the outputs are sized from the
        # symbols' sizes in these inputs.
        try:
            shapes = self.module.output_shapes(*inputs)
        except ValueError as error:
            raise ValueError(f"compiled {self.module.name}: {error}") from None
        return self._entry.run(inputs, shapes)

    def _bind(self, args, kwargs) -> list:
        label = f"compiled {self.module.name}"
        given = bind_inputs(label, self._names, args, kwargs)
        return [
            self._check(label, n, value, dtype, shape)
            for n, value, (dtype, shape) in zip(self._names, given, self._types)
        ]

    @staticmethod
    def _check(label: str, name: str, value, dtype: np.dtype, shape: tuple) -> np.ndarray:
        if not isinstance(value, (np.ndarray, np.generic)):
            raise TypeError(
                f"{label}: input '{name}' must be a numpy.ndarray of dtype {dtype} and shape "
                f"{shape}, got {type(value).__name__}"
            )
        value = np.asarray(value)
        if value.dtype != dtype:
            raise TypeError(
                f"{label}: input '{name}' has dtype {value.dtype}, but the IR was built for "
                f"{dtype}; fix: pass {name}.astype(np.{dtype.name}) or build the IR for "
                f"{value.dtype}"
            )
        if not _symbolic.fits(shape, value.shape):
            raise ValueError(
                f"{label}: input '{name}' has shape {value.shape}, but the IR was built for "
                f"shape {shape}; fix: build the IR again with {{{name!r}: {value.shape}}}"
            )
        return np.require(value, requirements=("C", "A"))

    def __repr__(self) -> str:
        module = self.module
        signature = _signature_text(module.name, module.input_spec, module.output_spec)
        return (
            f"<cuvil.CompiledModel {signature} "
            f"target={module.target!r} enable_fusion={self.enable_fusion} "
            f"fingerprint={module.fingerprint[:12]}>"
        )
