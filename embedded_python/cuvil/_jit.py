"""``cuvil.jit``: trace on first call, compile per signature, run machine code or fall back."""

from __future__ import annotations

import collections
import functools
import inspect
import logging
import os
import threading
import time
import types
from dataclasses import dataclass, field

import numpy as np

from . import _native, nd
from ._cache import SignatureCache, disk_cache_dir
from ._captured import changed as captured_changed
from ._dtypes import dtype_from_name, is_traceable, traceable_dtypes
from ._errors import CompileError, UnsupportedConstructError
from ._jit_constants import ConstantSets, constant_key, constant_names, constant_problem
from ._logging import logger
from ._mlir import tensor_type
from ._program import (
    SUPPORTED_NAMES,
    ArgumentList,
    _python_name,
    bind_arguments,
    signature_of,
    trace_function,
)
from ._source import function_location, user_location
from .frontends.numpy_tracer.tracer import Tracer

__all__ = [
    "jit",
    "JitFunction",
    "Compilation",
    "CompiledProgram",
    "compile_program",
    "compilations",
    "inspect_ir",
    "last_fallback_reason",
    "device_copies",
    "set_snapshot_capture",
    "snapshot_capture_enabled",
]

_capture_snapshots = os.environ.get("CUVIL_CAPTURE_SNAPSHOTS", "").strip() not in ("", "0")


def _history_limit() -> int:
    """How many compilations :func:`compilations` keeps (``CUVIL_COMPILATION_HISTORY``)."""
    value = os.environ.get("CUVIL_COMPILATION_HISTORY", "")
    try:
        return max(1, int(value)) if value else 512
    except ValueError:
        return 512


# The newest compilations only: each record keeps its IR (and snapshots) and
# its loaded code alive, so an unbounded list grew without end in processes
# that compile many functions.
_registry: collections.deque[Compilation] = collections.deque(maxlen=_history_limit())
_registry_lock = threading.Lock()


# The compiled ``cuvil._cuvil`` module, imported on first use.
_extension = _native.load


def set_snapshot_capture(enabled: bool) -> None:
    """Make later compilations record the IR after every pass (``CompiledFunction.snapshots``).

    Used by ``cuvil compile --print-ir-after-all`` and the Workbench; also enabled
    by the environment variable ``CUVIL_CAPTURE_SNAPSHOTS=1``. While enabled the
    on-disk cache is bypassed so that every pass really runs.
    """
    global _capture_snapshots
    _capture_snapshots = bool(enabled)


def snapshot_capture_enabled() -> bool:
    """Whether compilations currently capture per-pass IR snapshots."""
    return _capture_snapshots


@dataclass(frozen=True)
class Compilation:
    """One compilation done in this process, as listed by :func:`compilations`.

    ``input_types``/``output_types`` are ``(dtype_name, shape)`` pairs and
    ``compiled`` is the extension's ``CompiledFunction`` (``ir()``, ``emit()``,
    ``snapshots``, ``compile_ms``, ``from_cache``).
    """

    function: str
    func_name: str
    source: str
    input_types: tuple
    output_types: tuple
    target: str
    enable_fusion: bool
    compiled: object = field(repr=False)
    device: int = 0
    #: The traced program compiled (signature, input names, output structure), for packages.
    program: object = field(default=None, repr=False, compare=False)

    @property
    def mlir(self) -> str:
        """The traced MLIR text (formatted on first use for a program with large constants
        whose code came from the cache)."""
        return self.program.mlir

    @property
    def compile_ms(self) -> float:
        return float(self.compiled.compile_ms)

    @property
    def from_cache(self) -> bool:
        return bool(self.compiled.from_cache)

    @property
    def signature(self) -> str:
        """``name(tensor<...>, ...) -> (tensor<...>)`` for headers and listings."""
        ins = ", ".join(tensor_type(s, d) for d, s in self.input_types)
        outs = ", ".join(tensor_type(s, d) for d, s in self.output_types)
        return f"{self.function}({ins}) -> ({outs})"


def compilations() -> list[Compilation]:
    """The compilations done in this process, oldest first.

    The newest 512 are kept (``CUVIL_COMPILATION_HISTORY=N`` changes the
    number): a record holds its IR and keeps its code loaded, and code no
    function and no record refers to any more is unloaded.
    """
    with _registry_lock:
        return list(_registry)


@dataclass
class CompiledProgram:
    """A traced program compiled to machine code: the callable shared by ``jit`` and ``frontend``.

    ``run(inputs)`` takes inputs already checked against ``program.inputs``
    (C-contiguous arrays of the exact dtypes and shapes), allocates the outputs
    and returns them arranged the way the Python function returned them.
    """

    program: object
    record: Compilation
    output_dtypes: list

    def run(self, inputs: list, output_shapes=None):
        """Run the machine code on ``inputs`` and return the packed outputs.

        ``output_shapes`` sizes the outputs of a program with symbolic dims
        (the sizes its inputs' symbols determine); by default the traced ones.
        """
        program = self.program
        if program.boundary_inputs:  # float16 arguments of code computing in float32
            inputs = [np.asarray(x, dtype=d) for x, (d, _) in zip(inputs, program.inputs)]
        shapes = output_shapes or [shape for _, shape in program.outputs]
        outputs = [np.empty(shape, dtype) for dtype, shape in zip(self.output_dtypes, shapes)]
        self.record.compiled(inputs, outputs)
        if program.boundary_outputs:
            outputs = [o.astype(d, copy=False) for o, d in zip(outputs, program.boundary_outputs)]
        return program.pack([o[()] if o.ndim == 0 else o for o in outputs])


def compile_program(
    program,
    function: str,
    source: str,
    target: str,
    enable_fusion: bool,
    pipeline=None,
    device: int = 0,
) -> CompiledProgram:
    """Compile a :class:`TracedProgram` and record it in :func:`compilations`.

    ``function`` is the name used in messages and listings, ``source`` the
    ``file:line`` of its definition; ``pipeline`` an optional
    :class:`cuvil.PipelineBuilder` replacing the default passes. Raises
    :class:`CompileError` with the compiler's diagnostics when the compiler
    rejects the program (:class:`cuvil.PassError` when a Python pass failed).
    """
    ext = _extension()
    capture = _capture_snapshots
    cache_dir = "" if capture else disk_cache_dir()
    compile_error = getattr(ext, "CompileError", RuntimeError)
    started = time.perf_counter()
    steps = None
    if pipeline is not None:
        steps = pipeline.extension_steps()
        enable_fusion = pipeline.enable_fusion
    options = dict(
        enable_fusion=enable_fusion,
        capture_snapshots=capture,
        cache_dir=cache_dir,
        steps=steps,
        target=target,
        device=device,
    )
    try:
        compiled = None
        key = program.key_text() if cache_dir else ""
        if key:
            # Code compiled before is found by the key text; the weights' hex is
            # formatted only if the compiler needs the text.
            compiled = ext.load_indexed(key, program.func_name, **options)
        if compiled is None:
            text, constants = program.compiler_input()
            compiled = ext.compile(
                text, program.func_name, index_text=key, constants=constants, **options
            )
        if program.formatter is not None:
            # Found by its key text, or compiled without the weights' hex: the whole
            # text is formatted if an IR stage is asked for.
            compiled.set_source_provider(lambda: program.mlir)
    except compile_error as error:
        failure = pipeline.take_pass_failure() if pipeline is not None else None
        if failure is not None:
            raise failure from failure.__cause__
        raise CompileError(f"cuvil: compiling {function} failed:\n{error}") from error
    wall_ms = (time.perf_counter() - started) * 1000.0
    record = Compilation(
        function=function,
        func_name=program.func_name,
        source=source,
        input_types=tuple((d.name, s) for d, s in program.inputs),
        output_types=tuple((d.name, s) for d, s in program.outputs),
        target=target,
        enable_fusion=enable_fusion,
        compiled=compiled,
        device=device,
        program=program,
    )
    with _registry_lock:
        _registry.append(record)
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug(
            "%s: compiled %s in %.2f ms (compiler %.2f ms, %s), IR fingerprint %s",
            function,
            record.signature,
            wall_ms,
            record.compile_ms,
            "disk cache hit" if record.from_cache else "no disk cache hit",
            compiled.fingerprint,
        )
    dtypes = [dtype_from_name(name) for name, _ in record.output_types]
    return CompiledProgram(program, record, dtypes)


@dataclass
class _Fallback:
    reason: str


def _plain_key(names, args, constants=frozenset()) -> tuple | None:
    """The in-memory cache key of ``args`` when each is what compiled code takes as it
    is: a contiguous, aligned, non-empty ndarray of a dtype the tracer follows; else
    ``None`` (:func:`_argument_problem` then says which argument and why). One pass over
    the arguments, on every call: a 13-argument call spent 10 µs checking them and
    building the key separately. An argument named in ``constants`` is keyed by
    identity (an ndarray: ``(name, dtype, shape, id)``) or by value (``(name, None,
    value)``, a hashable Python value)."""
    dtypes = traceable_dtypes()
    key = []
    for name, value in zip(names, args):
        if constants and name in constants:
            item = constant_key(name, value)
            if item is None:
                return None
            key.append(item)
            continue
        if type(value) is not np.ndarray:
            return None
        dtype = value.dtype
        flags = value.flags
        if dtype not in dtypes or not (flags.c_contiguous and flags.aligned and value.size):
            return None
        key.append((name, dtype, value.shape))
    return tuple(key)


def _argument_problem(name: str, value, constants=frozenset()) -> tuple[str, str] | None:
    """``(problem, fix)`` when an argument forces the fallback path (one that
    :func:`_plain_key` refuses), else ``None``."""
    if name in constants:
        return constant_problem(name, value)
    array_fix = f"pass a C-contiguous NumPy array, e.g. np.ascontiguousarray({name})"
    if not isinstance(value, np.ndarray):
        return f"argument '{name}' is a {type(value).__name__}, not a numpy.ndarray", array_fix
    if type(value) is not np.ndarray:
        return (
            f"argument '{name}' is a {type(value).__name__} (an ndarray subclass)",
            f"pass np.asarray({name})",
        )
    if not is_traceable(value.dtype):
        return (
            f"argument '{name}' has unsupported dtype {value.dtype}",
            f"convert it to one of {SUPPORTED_NAMES} with .astype(...)",
        )
    if not value.flags.c_contiguous:
        return f"argument '{name}' is not C-contiguous", array_fix
    if not value.flags.aligned:
        return f"argument '{name}' is not aligned in memory", f"pass {name}.copy()"
    if value.size == 0:
        return f"argument '{name}' is empty (shape {value.shape})", "nothing to compile"
    return None


class JitFunction:
    """A function compiled by Cuvil on its first call for each argument signature.

    Calling it with C-contiguous NumPy arrays of supported dtypes runs compiled
    machine code; anything else, or code Cuvil cannot trace, runs the original
    Python function (see :func:`last_fallback_reason`).
    """

    def __init__(
        self,
        fn,
        target: str | None = None,
        enable_fusion: bool = True,
        pipeline=None,
        fallback_target: str | None = None,
        constants=None,
    ):
        from ._targets import resolve_target

        self.target, self.device = resolve_target(target, "cuvil.jit")
        self.fallback_target = None
        if fallback_target is not None:
            self.fallback_target = resolve_target(fallback_target, "cuvil.jit")
        if pipeline is not None and pipeline.target != self.target:
            raise ValueError(
                f"cuvil.jit: the pipeline was built for target {pipeline.target!r} but "
                f"target={target!r}; build it with cuvil.PipelineBuilder(target={target!r})"
            )
        functools.update_wrapper(self, fn)
        if not hasattr(self, "__qualname__"):
            self.__name__ = self.__qualname__ = _python_name(fn)
        self.__cuvil_function__ = fn
        self.pipeline = pipeline
        self.enable_fusion = bool(pipeline.enable_fusion if pipeline else enable_fusion)
        self._signature = signature_of(fn)
        self._constants = constant_names(constants, self._signature, fn)
        self._cache = SignatureCache()
        self._constant_sets = ConstantSets(self._constants, self._cache)
        self._last_compiled: Compilation | None = None
        self._last_fallback_reason: str | None = None
        self._warned: set[str] = set()
        self._simple_names = self._positional_names()

    def _positional_names(self):
        """Parameter names when every parameter is plain positional-or-keyword (fast path)."""
        if self._signature is None:
            return None
        params = list(self._signature.parameters.values())
        if all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params):
            return [p.name for p in params]
        return None

    def __get__(self, instance, owner=None):
        return self if instance is None else types.MethodType(self, instance)

    def __repr__(self) -> str:
        return f"<cuvil.jit {getattr(self, '__qualname__', '?')} target={self.target!r}>"

    # ----- calling ------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        # The common call: plain arrays by position, code already built. Every
        # other case (tracers, device arrays, arguments that need converting,
        # a first call, captured globals to recheck) takes the full path below.
        names = self._simple_names
        constants = self._constants
        if names is not None and not kwargs and len(args) == len(names):
            key = _plain_key(names, args, constants)
            entry = self._cache.get(key) if key is not None else None
            if type(entry) is CompiledProgram and not entry.program.captured:
                if logger.isEnabledFor(logging.DEBUG):
                    logger.debug(
                        "%s: in-memory cache hit for %s", self.__qualname__, _describe(key)
                    )
                return self._run(entry, list(args), names)
        fn = self.__cuvil_function__
        if any(isinstance(a, Tracer) for a in args) or any(
            isinstance(v, Tracer) for v in kwargs.values()
        ):
            # Called from inside another traced function: trace straight through.
            return fn(*args, **kwargs)
        names = self._simple_names
        if names is not None and not kwargs and len(args) == len(names):
            arguments = ArgumentList(names, list(args), lambda values: (values, {}))
        else:
            arguments = bind_arguments(fn, self._signature, args, kwargs)
        if self.target == "cuda" and any(map(nd.is_cuda_tensor, arguments.values)):
            return self._call_on_device(arguments)
        key = _plain_key(arguments.names, arguments.values, constants)
        if key is None:
            # Some argument is not plain: the first one, named.
            problems = (
                _argument_problem(n, v, constants)
                for n, v in zip(arguments.names, arguments.values)
            )
            what, fix = next(p for p in problems if p is not None)
            reason = f"{what} (called at {user_location()}); fix: {fix}"
            return self._fall_back(reason, args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            with self._cache.build_lock:
                entry = self._cache.get(key)
                if entry is None:
                    entry = self._build(arguments, key)
        elif logger.isEnabledFor(logging.DEBUG):
            logger.debug("%s: in-memory cache hit for %s", self.__qualname__, _describe(key))
        if isinstance(entry, _Fallback):
            return self._fall_back(entry.reason, args, kwargs)
        if entry.program.captured and (stale := captured_changed(entry.program.captured)):
            entry = self._retrace(arguments, key, stale)
            if isinstance(entry, _Fallback):
                return self._fall_back(entry.reason, args, kwargs)
        return self._run(entry, arguments.values, arguments.names)

    def _call_on_device(self, arguments: ArgumentList):
        """Arrays already on the GPU (``cuvil.nd`` arrays, DLPack tensors of PyTorch or
        CuPy): no copies, results as ``cuvil.nd`` arrays on the same device."""
        constants = self._constants
        named = [
            (n, nd.from_dlpack(v))
            for n, v in zip(arguments.names, arguments.values)
            if n not in constants
        ]
        arrays = [a for _, a in named]
        device = next(a.device for a in arrays if a.is_cuda)
        constant_items = []
        for name, value in zip(arguments.names, arguments.values):
            if name not in constants:
                continue
            item = constant_key(name, value)
            if item is None:  # constants are compiled in from host values
                what, fix = constant_problem(name, value)
                raise TypeError(f"{self.__qualname__}: {what}; fix: {fix}")
            constant_items.append(item)
        for name, a in named:
            if a.device != device:
                raise TypeError(
                    f"{self.__qualname__}: argument '{name}' is on {a.device} while others "
                    f"are on {device}; fix: put every argument on one device, e.g. "
                    f"cuvil.nd.array({name}, device='{device}')"
                )
            if not is_traceable(a.dtype):
                raise TypeError(f"{self.__qualname__}: argument '{name}' has dtype {a.dtype}")
        key = (
            ("device", device),
            *((n, a.dtype, a.shape) for n, a in named),
            *constant_items,
        )
        entry = self._cache.get(key)
        if entry is None:
            with self._cache.build_lock:
                entry = self._cache.get(key)
                if entry is None:
                    # Traced on empty host arrays: tracing reads shapes and dtypes only
                    # (constants, compiled in, are traced with their values).
                    shapes = dict(named)
                    placeholders = [
                        v if n in constants else np.empty(shapes[n].shape, shapes[n].dtype)
                        for n, v in zip(arguments.names, arguments.values)
                    ]
                    entry = self._build(
                        ArgumentList(arguments.names, placeholders, arguments._rebuild), key
                    )
        if isinstance(entry, _Fallback):
            raise RuntimeError(
                f"{self.__qualname__}: cannot run on {device} arrays: {entry.reason}"
            )
        program = entry.program
        if program.boundary_inputs or program.boundary_outputs:
            raise TypeError(
                f"{self.__qualname__}: float16 arguments or results are computed in float32 "
                "and cannot stay on the GPU; fix: pass NumPy arrays"
            )
        outputs = [nd.empty(shape, dtype.name, device) for dtype, shape in program.outputs]
        entry.record.compiled.call_device(
            [a.data_ptr for a in arrays], [o.data_ptr for o in outputs]
        )
        self._last_compiled = entry.record
        self._last_fallback_reason = None
        return program.pack(outputs)

    def _retrace(self, arguments: ArgumentList, key, stale):
        """Trace and compile again: an array the compiled code baked in has changed."""
        logger.warning(
            "%s: an array it reads from its scope (shape %s) changed after it was traced; "
            "compiling it again with the new values (pass arrays that change as arguments "
            "to avoid recompiling)",
            self.__qualname__,
            stale.shape,
        )
        with self._cache.build_lock:
            return self._build(arguments, key)

    def _build(self, arguments: ArgumentList, key):
        if self._constants:
            self._constant_sets.adopt(arguments, key, self.__qualname__)
        try:
            program = trace_function(self.__cuvil_function__, arguments, constants=self._constants)
        except UnsupportedConstructError as error:
            entry = _Fallback(error.reason)
        else:
            entry = self._compile(program)
        self._cache.put(key, entry)
        return entry

    def _compile(self, program):
        from ._targets import compiling_only, unavailable_reason

        entry = compile_program(
            program,
            self.__qualname__,
            str(function_location(self.__cuvil_function__)),
            self.target,
            self.enable_fusion,
            self.pipeline,
            device=self.device,
        )
        self._last_compiled = entry.record
        reason = unavailable_reason(self.target, self.device)
        if reason is None:
            return entry
        # Compiled for a target that cannot run here (no GPU driver): the IR
        # and artifacts are there; the call runs elsewhere if asked to.
        where = f"{self.target}:{self.device}"
        if self.fallback_target is not None:
            target, device = self.fallback_target
            logger.warning(
                "%s: compiled for %s, which cannot run here (%s); running it on %s:%d",
                self.__qualname__,
                where,
                reason,
                target,
                device,
            )
            return compile_program(
                program,
                self.__qualname__,
                str(function_location(self.__cuvil_function__)),
                target,
                self.enable_fusion,
                None,
                device=device,
            )
        if compiling_only():
            return _Fallback(f"it was compiled for {where}, which cannot run here: {reason}")
        return entry

    def _run(self, entry: CompiledProgram, inputs: list, names=()):
        if self._constants:
            inputs = [v for n, v in zip(names, inputs) if n not in self._constants]
        result = entry.run(inputs)
        self._last_compiled = entry.record
        self._last_fallback_reason = None
        return result

    def _fall_back(self, reason: str, args, kwargs):
        self._last_fallback_reason = reason
        message = "%s: running the Python function instead of compiled code: %s"
        if reason in self._warned:
            logger.debug(message, self.__qualname__, reason)
        else:
            self._warned.add(reason)
            logger.warning(message, self.__qualname__, reason)
        return self.__cuvil_function__(*args, **kwargs)


def _describe(key) -> str:
    def one(item):
        if len(item) == 4:
            return f"{item[0]}: constant {item[1].name}{list(item[2])}"
        if len(item) == 2 or item[1] is None:
            return f"{item[0]}={item[-1]!r}"
        return f"{item[0]}: {item[1].name}{list(item[2])}"

    return ", ".join(map(one, key))


def jit(
    fn=None,
    *,
    target: str | None = None,
    enable_fusion: bool = True,
    pipeline=None,
    fallback_target: str | None = None,
    constants=None,
):
    """Compile a NumPy function with Cuvil; usable as ``@cuvil.jit`` or ``@cuvil.jit(...)``.

    Args:
        fn: the function (when used without parentheses).
        target: a registered target (``cuvil.available_targets()``), optionally
            with a device index (``"cpu"``, ``"cuda:0"``); ``None`` is
            ``cuvil.default_target()`` (``"cpu"`` unless set otherwise).
        enable_fusion: run the elementwise and epilogue fusion passes.
        pipeline: a :class:`cuvil.PipelineBuilder` to compile with instead of
            the default passes (its ``enable_fusion`` wins); it is read when a
            signature is first compiled.
        fallback_target: where to run when ``target`` cannot run in this
            process (``target="cuda"`` without a GPU driver): e.g. ``"cpu"``.
            The function is still compiled for ``target`` (its IR, PTX and
            artifacts are there) and then for the fallback, and a warning says
            why. ``None``: calls raise a ``RuntimeError`` with the reason.
        constants: parameter names (one or a sequence) whose values are compiled
            into the code, as a model's weights are: folded where they meet other
            constants, and laid out for the kernels that read them (a GEMM's
            right operand in the register tile's panels). An array is taken by
            identity and made read-only (``flags.writeable`` cleared, so that a
            change in place raises instead of going unseen); passing another
            array compiles again and forgets the old one. A hashable Python
            value (a number, a tuple) is keyed by its value, as JAX's static
            arguments are, and may steer Python control flow.

    The first call for each combination of argument shapes and dtypes traces
    the function and compiles it; later calls run the machine code directly.
    """
    options = dict(
        target=target,
        enable_fusion=enable_fusion,
        pipeline=pipeline,
        fallback_target=fallback_target,
        constants=constants,
    )
    if fn is None:
        return lambda f: JitFunction(f, **options)
    return JitFunction(fn, **options)


def _as_jit_function(f, api: str) -> JitFunction:
    if isinstance(f, types.MethodType) and isinstance(f.__func__, JitFunction):
        return f.__func__
    if not isinstance(f, JitFunction):
        raise TypeError(f"{api} expects a function decorated with @cuvil.jit, got {f!r}")
    return f


def device_copies(f) -> dict[str, int]:
    """Host<->device copies made by the calls of ``f``'s latest compilation, e.g.
    ``{"host_to_device": 2, "host_to_device_bytes": 8192, "device_to_host": 1, ...,
    "calls": 1}`` for the cuda target (NumPy in, NumPy out: each input is copied to
    the GPU and each output back, constants once); ``{}`` for targets that copy nothing
    or before the first call."""
    record = _as_jit_function(f, "cuvil.device_copies")._last_compiled
    return dict(record.compiled.counters) if record is not None else {}


def last_fallback_reason(f) -> str | None:
    """Why the last call of jitted ``f`` ran plain Python, or ``None`` if it ran compiled code."""
    return _as_jit_function(f, "cuvil.last_fallback_reason")._last_fallback_reason


def inspect_ir(f, stage: str = "input") -> str:
    """IR of the most recent compilation of jitted ``f`` at ``stage``.

    Stages: ``"input"`` (traced Cuvil IR), ``"optimized"`` (after the
    target-neutral passes), then the target's own (on the CPU
    ``"llvm-dialect"``, ``"llvm"`` (LLVM IR) and ``"asm"``); see
    ``cuvil.IR_STAGES`` and ``Compilation.compiled.stages``.
    """
    jf = _as_jit_function(f, "cuvil.inspect_ir")
    check_ir_stage(stage, "cuvil.inspect_ir")
    record = jf._last_compiled
    if record is None:
        message = (
            f"cuvil.inspect_ir: {jf.__qualname__} has not been compiled yet. Call it once "
            "with NumPy arrays (the first call compiles it), then inspect its IR."
        )
        if jf._last_fallback_reason:
            message += f" Its last call ran plain Python because {jf._last_fallback_reason}."
        raise RuntimeError(message)
    check_ir_stage(stage, "cuvil.inspect_ir", record.compiled)
    return record.compiled.ir(stage)


def ir_stage_names() -> tuple[str, ...]:
    """Every IR stage name, from the compiler's table."""
    return tuple(name for name, _description in _extension().ir_stages())


def check_ir_stage(stage: str, api: str, compiled=None) -> None:
    """``ValueError`` naming the valid stages (of ``compiled``'s target if given)."""
    names = tuple(compiled.stages) if compiled is not None else ir_stage_names()
    if stage not in names:
        where = f" for target {compiled.target!r}" if compiled is not None else ""
        raise ValueError(f"{api}: unknown stage {stage!r}{where}; use one of {', '.join(names)}")
