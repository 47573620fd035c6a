"""Turns a Python function plus argument types into a traced Cuvil IR program."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _mlir
from ._dtypes import compute_dtype, is_traceable, supported_names
from ._errors import UnsupportedConstructError
from ._mlir import sanitize_symbol
from ._source import function_location
from .frontends.numpy_tracer.tracer import TraceContext, Tracer, unsupported

__all__ = [
    "ArgumentList",
    "TracedProgram",
    "bind_arguments",
    "signature_of",
    "trace_examples",
    "trace_function",
    "trace_to_mlir",
    "unwrap_jit",
]

# Read from the compiler's dtype table (loads the extension with the package).
SUPPORTED_NAMES = supported_names()


@dataclass
class ArgumentList:
    """A call's arguments flattened in parameter order, with a way to rebuild the call."""

    names: list[str]
    values: list[Any]
    _rebuild: Any

    def call(self, fn, replacements: Sequence[Any]):
        """Call ``fn`` with the flattened values replaced by ``replacements``."""
        args, kwargs = self._rebuild(list(replacements))
        return fn(*args, **kwargs)


def signature_of(fn) -> inspect.Signature | None:
    """``inspect.signature(fn)``, or ``None`` for callables without one."""
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def bind_arguments(fn, signature: inspect.Signature | None, args, kwargs) -> ArgumentList:
    """Flatten ``fn(*args, **kwargs)``'s arguments (``*args`` and ``**kwargs`` included).

    Raises ``TypeError`` exactly when calling ``fn`` would, e.g. a missing argument.
    """
    if signature is None:
        names = [f"arg{i}" for i in range(len(args))] + list(kwargs)
        n = len(args)

        def rebuild(values):
            return values[:n], dict(zip(kwargs, values[n:]))

        return ArgumentList(names, list(args) + list(kwargs.values()), rebuild)

    bound = signature.bind(*args, **kwargs)
    names, values, layout = [], [], []
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            layout.append((name, "args", len(value)))
            for i, item in enumerate(value):
                names.append(f"{name}[{i}]")
                values.append(item)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            layout.append((name, "kwargs", list(value)))
            for key, item in value.items():
                names.append(key)
                values.append(item)
        else:
            layout.append((name, "one", None))
            names.append(name)
            values.append(value)

    def rebuild(replacements):
        it = iter(replacements)
        arguments = {}
        for name, kind, extra in layout:
            if kind == "args":
                arguments[name] = tuple(next(it) for _ in range(extra))
            elif kind == "kwargs":
                arguments[name] = {key: next(it) for key in extra}
            else:
                arguments[name] = next(it)
        new = inspect.BoundArguments(signature, arguments)
        return new.args, new.kwargs

    return ArgumentList(names, values, rebuild)


def narrow_range(ranges: dict, symbol: str, lowest: int = 1, highest: int | None = None) -> None:
    """Intersect ``ranges[symbol]`` (lowest, highest or None) with ``[lowest, highest]``."""
    low, high = ranges.get(symbol, (1, None))
    low = max(low, lowest)
    high = highest if high is None else high if highest is None else min(high, highest)
    ranges[symbol] = (low, high)


@dataclass
class TracedProgram:
    """A traced function: its MLIR text and signature.

    ``inputs``/``outputs`` are ``(dtype, shape)`` pairs; ``structure`` is how the
    Python function returned its outputs (``"single"``, ``"tuple"`` or ``"list"``);
    ``input_names`` are the flattened argument names, in the order of ``inputs``.
    """

    func_name: str
    #: The MLIR text, or None until :attr:`mlir` formats it (see ``formatter``).
    text: str | None
    inputs: list[tuple[np.dtype, tuple[int, ...]]]
    outputs: list[tuple[np.dtype, tuple[int, ...]]]
    structure: str
    input_names: list[str] = field(default_factory=list)
    #: Arrays read from the function's scope and baked in (cuvil._captured).
    captured: list = field(default_factory=list)
    #: The dtype names the caller passes each input in and gets each output back in, where
    #: they differ from ``inputs``/``outputs`` (float16 computed in float32); empty: the same.
    boundary_inputs: list = field(default_factory=list)
    boundary_outputs: list = field(default_factory=list)
    #: Symbol name -> (lowest, highest or None) size the model allows, where it bounds one
    #: (a sequence no longer than the 16 positions a GPT-2 block embeds; torch.export's ranges).
    symbol_ranges: dict = field(default_factory=dict)
    #: For a program traced lazily (it holds large constants): formats its text
    #: (``large=None``; once, or twice when two threads race: the same text either way),
    #: its key text (``large=DIGEST``, see :meth:`key_text`) or the text the compiler
    #: takes with the constants' bytes (a list, see :meth:`compiler_input`). None when
    #: ``text`` is given.
    formatter: Callable[..., str] | None = field(default=None, repr=False, compare=False)

    @property
    def mlir(self) -> str:
        """The MLIR text (formatted on first use when the program was traced lazily)."""
        if self.text is None:
            self.text = self.formatter(large=None)
        return self.text

    def key_text(self) -> str:
        """What stands for the text in the index of compiled code: the text with each
        large constant as the digest of its bytes (``_mlir.format_module``), so a process
        finds code compiled before without formatting a model's weights; "" when the text
        is its own key."""
        return self.formatter(large=_mlir.DIGEST) if self.formatter is not None else ""

    def compiler_input(self) -> tuple[str, list]:
        """``(text, constants)`` to compile: the text with each large constant as
        ``dense_resource<name>`` and ``constants`` their ``(name, bytes)``, so neither
        side formats or parses a model's weights as hex; ``(mlir, [])`` when the program
        has no large constants (or its text is formatted already)."""
        if self.text is not None or self.formatter is None:
            return self.mlir, []
        constants: list = []
        text = self.formatter(large=constants)
        return text, constants

    def input_dtype_names(self) -> list[str]:
        """The dtype each input is given in (float16 for a float32 argument of a model)."""
        return self.boundary_inputs or [d.name for d, _ in self.inputs]

    def output_dtype_names(self) -> list[str]:
        """The dtype each output is returned in (float16 for a float32 result of a model)."""
        return self.boundary_outputs or [d.name for d, _ in self.outputs]

    def pack(self, values: list):
        """Arrange computed outputs the way the Python function returned them."""
        if self.structure == "single":
            return values[0]
        return tuple(values) if self.structure == "tuple" else list(values)


def _python_name(fn) -> str:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return getattr(fn, "__name__", None) or type(fn).__name__


def _collect_outputs(ctx: TraceContext, result) -> tuple[list[Tracer], str]:
    if type(result) in (tuple, list):
        structure = "tuple" if type(result) is tuple else "list"
        items = list(result)
        if not items:
            raise unsupported(f"returning an empty {structure}", ctx.func_loc)
    elif isinstance(result, tuple):
        raise unsupported(f"returning a {type(result).__name__}", ctx.func_loc)
    else:
        structure, items = "single", [result]
    outputs = []
    for item in items:
        if isinstance(item, Tracer):
            if item._ctx is not ctx:
                raise unsupported("returning a traced array from another trace", ctx.func_loc)
            outputs.append(item)
        elif isinstance(item, (np.ndarray, np.generic, bool, int, float)):
            outputs.append(ctx.constant(np.asarray(item), loc=ctx.func_loc))
        else:
            what = "None" if item is None else f"a {type(item).__name__}"
            raise unsupported(
                f"returning {what} (return arrays, or a tuple/list of them)", ctx.func_loc
            )
    return outputs, structure


def trace_function(
    fn, arguments: ArgumentList, func_name: str | None = None, constants=frozenset()
) -> TracedProgram:
    """Run ``fn`` once on tracers shaped like ``arguments.values`` and record its IR.

    ``arguments.values`` must be arrays (or objects with ``shape`` and ``dtype``)
    of supported dtypes, except those named in ``constants``: compiled in (an
    array as a constant, another value passed to ``fn`` as it is) rather than
    arguments of the traced function. Raises :class:`UnsupportedConstructError`
    for constructs Cuvil cannot compile and :class:`TraceError` for invalid programs.
    """
    name = func_name or sanitize_symbol(_python_name(fn))
    ctx = TraceContext(name, function_location(fn))
    kept = [(n, v) for n, v in zip(arguments.names, arguments.values) if n not in constants]

    def traced(name, value):
        if name not in constants:
            return ctx.new_argument(value.shape, value.dtype)
        if isinstance(value, np.ndarray):
            return ctx.constant(value, loc=ctx.func_loc)
        return value

    tracers = [traced(n, v) for n, v in zip(arguments.names, arguments.values)]
    random_state = _random_states()
    with ctx.active():
        try:
            result = arguments.call(fn, tracers)
            _check_no_random_draws(random_state, fn)
        except Exception:
            # Every unsupported construct is recorded on the trace, so one that user
            # code caught and turned into another error is still reported as the cause.
            if ctx.unsupported is not None:
                raise ctx.unsupported from None
            raise
        if ctx.unsupported is not None:
            raise ctx.unsupported
        outputs, structure = _collect_outputs(ctx, result)
        if ctx.unsupported is not None:
            raise ctx.unsupported
    # With large constants, the text waits until something needs it: a cached
    # compilation is found by the key text, which names them by digests.
    lazy = ctx.builder.digests_constants()
    program = TracedProgram(
        func_name=name,
        text=None if lazy else ctx.to_mlir(outputs, ctx.func_loc),
        formatter=functools.partial(ctx.to_mlir, outputs, ctx.func_loc) if lazy else None,
        inputs=[(np.dtype(v.dtype), tuple(v.shape)) for _, v in kept],
        outputs=[(t.dtype, t.shape) for t in outputs],
        structure=structure,
        input_names=[n for n, _ in kept],
        captured=ctx.captured,
        symbol_ranges=dict(ctx.builder.symbol_ranges),
    )
    # Every value of the IR is an argument or an op's result: their types say whether
    # float16 occurs (the text itself holds megabytes of weights to search otherwise).
    builder = ctx.builder
    types = [a.type for a in builder.arguments] + [op.result_type for op in builder.ops]
    if not any("xf16>" in t or "<f16>" in t for t in types):
        return program
    return _widened(program)


def _widened(program: TracedProgram) -> TracedProgram:
    """A program traced with float16 values, computed in float32 (``cuvil-widen-f16``):
    float16 arguments and results stay float16 at the boundary, where the compiled
    code's callers convert them."""
    from ._precision import run_passes

    text, _ = run_passes(program.mlir, ["cuvil-widen-f16"])

    def computed(pairs):
        return [(np.dtype(compute_dtype(d.name)), shape) for d, shape in pairs]

    return dataclasses.replace(
        program,
        text=text,
        formatter=None,
        inputs=computed(program.inputs),
        outputs=computed(program.outputs),
        boundary_inputs=[d.name for d, _ in program.inputs],
        boundary_outputs=[d.name for d, _ in program.outputs],
    )


def unwrap_jit(f):
    """The Python function behind a ``@cuvil.jit`` function; any other callable unchanged."""
    return getattr(f, "__cuvil_function__", f)


def _random_states() -> tuple:
    """The global random generators' states: NumPy's legacy one and Python's ``random``.

    NumPy's Mersenne Twister refills its 624-word key only every 624 draws, so
    the position in the key (and a cached Gaussian) is part of the state: a
    few draws move only the position. NumPy imports ``numpy.random`` on first
    use (15 ms): until something has, nothing can have drawn from it, and its
    state is None rather than an import on every trace.
    """
    module = sys.modules.get("numpy.random")
    if module is None:
        return None, random.getstate()
    state = module.get_state(legacy=False)
    mt = state["state"]
    numpy_state = (mt["key"].tobytes(), mt["pos"], state["has_gauss"], state["gauss"])
    return numpy_state, random.getstate()


def _drew_since(before: tuple, after: tuple) -> bool:
    """Whether ``after`` differs from ``before`` by draws from a generator."""
    if before[1] != after[1]:
        return True
    if before[0] is None and after[0] is not None:
        # numpy.random was first imported while tracing: a generator freshly
        # seeded from entropy is at its fresh position, without a cached
        # Gaussian, until something draws from it.
        fresh_pos = np.random.RandomState().get_state(legacy=False)["state"]["pos"]
        return after[0][1] != fresh_pos or bool(after[0][2])
    return before[0] != after[0]


def _check_no_random_draws(before: tuple, fn) -> None:
    """Refuse a trace during which the function drew from a global random generator.

    The numbers drawn while tracing would be frozen into the compiled code as
    constants, so every call would return the same "random" values.
    """
    if not _drew_since(before, _random_states()):
        return
    raise UnsupportedConstructError(
        f"{_python_name(fn)} draws random numbers (np.random or random) while it is traced; "
        "compiled code would repeat the values drawn once. Pass the random values in as "
        "arguments",
        function_location(fn),
    )


def trace_examples(f, example_args, example_kwargs, api: str) -> TracedProgram:
    """Trace ``f`` (a plain callable or a ``@cuvil.jit`` function) for example arguments.

    Each example is an array or any object with ``shape`` and ``dtype``; ``api``
    prefixes the ``TypeError`` raised for an unusable one. Tracing errors
    propagate as in :func:`trace_function`.
    """
    fn = unwrap_jit(f)
    arguments = bind_arguments(fn, signature_of(fn), example_args, example_kwargs)
    for name, value in zip(arguments.names, arguments.values):
        if not (hasattr(value, "shape") and hasattr(value, "dtype")):
            raise TypeError(
                f"{api}: argument '{name}' must be an array (or have shape and dtype), "
                f"got {type(value).__name__}"
            )
        if not is_traceable(value.dtype):
            raise TypeError(
                f"{api}: argument '{name}' has unsupported dtype {np.dtype(value.dtype)} "
                f"(supported: {SUPPORTED_NAMES}, and float16 computed in float32)"
            )
    return trace_function(fn, arguments)


def trace_to_mlir(f, *example_args, **example_kwargs) -> str:
    """The Cuvil IR (MLIR text) of ``f`` traced for these example arguments, without compiling.

    ``f`` may be a plain function or a ``@cuvil.jit`` function. Each example
    argument is a NumPy array (only its shape and dtype matter) or any object
    with ``shape`` and ``dtype``. Raises :class:`cuvil.UnsupportedConstructError`
    where ``cuvil.jit`` would fall back, and :class:`cuvil.TraceError` for
    invalid programs.
    """
    return trace_examples(f, example_args, example_kwargs, "trace_to_mlir").mlir
