"""The ``torch.compile(model, backend="cuvil")`` backend: Dynamo's FX graphs compiled by Cuvil.

Each graph Dynamo captures is traced to core ATen and imported; when every
op is supported the whole graph is one Cuvil compilation. Otherwise the graph
is split: runs of supported ops are compiled, the other ops run in PyTorch
eager, and the reason is logged like ``cuvil.jit``'s fallback (a warning
once per reason on the ``cuvil`` logger, and :func:`fallback_reasons`). Each
compilation appears in ``cuvil.compilations()``.

Compiled code runs on CPU tensors for inference: a graph called with gradients
required or tensors on another device runs eagerly, with the reason logged. A
graph with symbolic sizes is compiled once per distinct size it is called with.
"""

from __future__ import annotations

import functools
import logging
import operator
import threading

import numpy as np
import torch

from ..._errors import CompileError, TraceError, UnsupportedConstructError
from ..._logging import logger
from ...frontend import TensorSpec
from .. import base
from ..symbolic_dims import SymDim
from . import aten
from .frontend import import_graph, to_aten_graph
from .importer import outer_frame

__all__ = ["cuvil_backend", "fallback_reasons", "last_fallback_reason"]

_CANNOT_COMPILE = (UnsupportedConstructError, TraceError, CompileError)
_reasons: list[tuple[str, str]] = []
_warned: set[str] = set()
_by_fingerprint: dict[tuple[str, str], object] = {}
_lock = threading.Lock()


def fallback_reasons() -> list[tuple[str, str]]:
    """``(graph, reason)`` for every part of a ``torch.compile`` graph that runs eagerly."""
    with _lock:
        return list(_reasons)


def last_fallback_reason() -> str | None:
    """Why the latest graph (or part of one) given to the backend runs in PyTorch eager."""
    with _lock:
        return _reasons[-1][1] if _reasons else None


def _fall_back(name: str, reason: str) -> None:
    with _lock:
        _reasons.append((name, reason))
        first = reason not in _warned
        _warned.add(reason)
    message = "%s: running PyTorch eager instead of compiled code: %s"
    (logger.warning if first else logger.debug)(message, name, reason)


def _graph_origin(graph_module) -> tuple[str, str]:
    """The function Dynamo captured (``forward``) and the ``file:line`` where the graph starts."""
    for node in graph_module.graph.nodes:
        frame = outer_frame(node.meta.get("stack_trace"))
        if frame is not None:
            return frame[0], str(frame[1])
    return "graph", ""


def _is_symbolic(value) -> bool:
    if isinstance(value, torch.Tensor):
        return not all(isinstance(d, int) for d in value.shape)
    return isinstance(value, torch.SymInt)


def _input_problem(example_inputs) -> str | None:
    for index, value in enumerate(example_inputs):
        if not isinstance(value, (torch.Tensor, int, float, bool)):
            return f"input {index} is a {type(value).__name__}, not a tensor or a number"
        if not isinstance(value, torch.Tensor):
            continue
        if value.device.type != "cpu":
            return f"input {index} is on {value.device}; Cuvil's torch.compile runs CPU tensors"
        if value.requires_grad and torch.is_grad_enabled():
            return (
                f"input {index} requires grad and grad mode is on; Cuvil compiles inference: "
                "call the model under torch.no_grad() or torch.inference_mode()"
            )
    return None


def cuvil_backend(graph_module, example_inputs, **options):
    """Dynamo backend: a callable computing ``graph_module`` with Cuvil-compiled code.

    A graph with symbolic sizes (``dynamic=True``, or Dynamo's automatic
    dynamic shapes after a recompilation) is compiled once with those sizes
    symbolic; the sizes Cuvil cannot keep symbolic are compiled per value
    (:func:`_compile_symbolic`), with the reason logged.
    """
    name, source = _graph_origin(graph_module)
    symbolic = any(_is_symbolic(v) for v in example_inputs)
    # Dynamo drops the placeholders' "grapharg" once the backend returns: read it now.
    scalars = _scalar_inputs(graph_module, example_inputs)
    compile_for = _compile_symbolic if symbolic else _compile_static
    compiled = compile_for(graph_module, list(example_inputs), name, source, scalars)
    if not scalars:
        return compiled
    recompile = functools.partial(
        compile_for, graph_module, name=name, source=source, scalars=scalars
    )
    return _ByScalars(recompile, scalars, example_inputs, compiled)


def _scalar_inputs(graph_module, example_inputs) -> frozenset:
    """The indices of the inputs that are Python numbers Dynamo passes as 0-d tensors."""
    scalars = set()
    for index, (node, value) in enumerate(zip(_placeholders(graph_module), example_inputs)):
        grapharg = node.meta.get("grapharg")
        if getattr(grapharg, "pass_arg_as_tensor", False) and isinstance(value, torch.Tensor):
            if value.dim() == 0 and not value.requires_grad:
                scalars.add(index)
    return frozenset(scalars)


def _scalars_as_constants(graph_module, example_inputs, scalars: frozenset):
    """``graph_module`` with each ``.item()`` of a scalar input (``scalars``: indices)
    replaced by its value in ``example_inputs``.

    Returns the graph module and input index -> value of those inputs, which
    the compiled graph then takes as constants (NumPy 0-d arrays) rather than
    as arguments. Without scalar inputs the graph module is returned as it is.
    """
    if not scalars:
        return graph_module, {}
    placeholders = _placeholders(graph_module)
    by_node = {placeholders[i]: example_inputs[i].item() for i in scalars}
    graph, env = torch.fx.Graph(), {}
    for node in graph_module.graph.nodes:
        if node.op == "call_method" and node.target == "item" and node.args[0] in by_node:
            env[node] = by_node[node.args[0]]
        else:
            env[node] = graph.node_copy(node, lambda n: env[n])
    return torch.fx.GraphModule(graph_module, graph), scalars


class _ByScalars:
    """The compiled graph for each set of values of its scalar inputs (usually just one)."""

    def __init__(self, compile_for, scalars: frozenset, example_inputs, compiled):
        self.compile_for, self.indices = compile_for, sorted(scalars)
        self._compiled = {self._key(example_inputs): compiled}

    def _key(self, args) -> tuple:
        return tuple(args[i].item() for i in self.indices)

    def __call__(self, *args):
        key = self._key(args)
        fn = self._compiled.get(key)
        if fn is None:
            logger.info("a number passed as a tensor changed (%s): compiling for it", key)
            fn = self._compiled[key] = self.compile_for(example_inputs=list(args))
        return fn(*args)


def _compile_symbolic(graph_module, example_inputs, name: str, source: str, scalars):
    """One compilation for many sizes of a graph with symbolic sizes, else :class:`_PerSizes`.

    Every symbolic size stays symbolic if Cuvil can compile the graph so. If
    not (an op that needs a static size, such as ``arange`` over a sequence
    length), the reason is logged and only the leading (batch) sizes stay
    symbolic: the others are pinned to this call's, and each new set of
    pinned sizes compiles once more, batch still symbolic (:class:`_Pinned`).
    """
    per_sizes = _PerSizes(graph_module, name, source, scalars)
    tensors = [v for v in example_inputs if not isinstance(v, torch.SymInt)]
    if _input_problem(tensors) is not None:
        return per_sizes
    try:
        aten_graph, constants = _symbolic_aten_graph(graph_module, example_inputs, scalars)
    except Exception as error:  # tracing to ATen has many failure types
        _specialize(name, "every size", f"tracing to ATen failed ({_reason(error)})")
        return per_sizes
    try:
        return _CompiledGraph(aten_graph, constants, name, source, pinned={})
    except Exception as error:  # noqa: BLE001 - any failure means: fewer symbolic sizes
        pinned = _pinned_sizes(graph_module, example_inputs)
        what = f"sizes {_describe_pinned(graph_module, pinned)}" if pinned else "every size"
        _specialize(name, what, _reason(error))
    if not pinned:
        return per_sizes
    try:
        compiled = _CompiledGraph(aten_graph, constants, name, source, pinned)
    except Exception as error:  # noqa: BLE001
        _specialize(name, "every size", _reason(error))
        return per_sizes
    return _Pinned(compiled, pinned, (aten_graph, constants, name, source), per_sizes)


def _reason(error: Exception) -> str:
    if isinstance(error, _CANNOT_COMPILE):
        return getattr(error, "reason", str(error))
    return f"{type(error).__name__}: {error}"


def _specialize(name: str, what: str, reason: str) -> None:
    """Log (a warning the first time per reason) why ``what`` is compiled per size."""
    with _lock:
        first = reason not in _warned
        _warned.add(reason)
    message = "%s: %s compiled per value, not symbolic: %s"
    (logger.warning if first else logger.debug)(message, name, what, reason)


def _describe_pinned(graph_module, pinned: dict) -> str:
    """``x.shape[1] (s27)`` for each pinned size: the graph input's name, the axis, the symbol."""
    placeholders = _placeholders(graph_module)
    parts = []
    for index, axes in sorted(pinned.items()):
        node = placeholders[index]
        shape = getattr(node.meta.get("example_value"), "shape", ())
        for axis in sorted(axes):
            symbol = f" ({shape[axis]})" if axis < len(shape) else ""
            parts.append(f"{node.name}.shape[{axis}]{symbol}")
    return ", ".join(parts)


def _symbolic_aten_graph(graph_module, example_inputs, scalars):
    """The ATen graph on Dynamo's fake inputs, whose sizes carry its symbolic decisions."""
    fakes = [
        n.meta.get("example_value", v) for n, v in zip(_placeholders(graph_module), example_inputs)
    ]
    graph_module, scalars = _scalars_as_constants(graph_module, example_inputs, scalars)
    aten_graph, constants = to_aten_graph(graph_module, fakes)
    # Sizes Dynamo passes as inputs stay symbolic (only their users' shapes matter).
    for index, (node, fake) in enumerate(zip(_placeholders(aten_graph), fakes)):
        if isinstance(fake, torch.SymInt):
            constants[node.name] = SymDim(str(fake))
        elif not isinstance(fake, torch.Tensor):
            constants[node.name] = fake
        elif index in scalars:
            constants[node.name] = np.asarray(example_inputs[index].numpy())
    return aten_graph, constants


def _pinned_sizes(graph_module, example_inputs) -> dict:
    """Input index -> {axis: size} of the symbolic sizes made static (all but the batch's)."""
    fakes = [n.meta.get("example_value") for n in _placeholders(graph_module)]
    shapes = [f.shape for f in fakes if isinstance(f, torch.Tensor) and len(f.shape)]
    # Dynamo gives equal sizes one symbol (duck sizing): a batch symbol is never pinned.
    batch = {d.node.expr for d in (s[0] for s in shapes) if isinstance(d, torch.SymInt)}
    pinned = {}
    for index, (fake, value) in enumerate(zip(fakes, example_inputs)):
        if isinstance(value, torch.Tensor) and fake is not None:
            axes = {
                axis: int(value.shape[axis])
                for axis, d in enumerate(fake.shape)
                if axis > 0 and isinstance(d, torch.SymInt) and d.node.expr not in batch
            }
            if axes:
                pinned[index] = axes
    return pinned


class _Pinned:
    """A graph compiled with its batch sizes symbolic and its other sizes pinned to one call's.

    A call with other pinned sizes compiles the graph for them once more,
    batch still symbolic (``graph``: the ATen graph, its constants, name and
    source); if that fails, ``per_sizes`` compiles it for every size.
    """

    def __init__(self, compiled, pinned: dict, graph: tuple, per_sizes):
        self.axes = {index: sorted(axes) for index, axes in sorted(pinned.items())}
        self.graph, self.per_sizes = graph, per_sizes
        self._compiled = {self._key(pinned): compiled}

    def _key(self, shapes) -> tuple:
        return tuple(int(shapes[i][a]) for i, axes in self.axes.items() for a in axes)

    def __call__(self, *args):
        key = self._key({i: args[i].shape for i in self.axes})
        fn = self._compiled.get(key)
        if fn is None:
            pinned = {i: {a: int(args[i].shape[a]) for a in axes} for i, axes in self.axes.items()}
            try:
                fn = _CompiledGraph(*self.graph, pinned)
            except _CANNOT_COMPILE as error:
                logger.info("pinned sizes %s not compiled: %s", key, error)
                fn = self.per_sizes
            self._compiled[key] = fn
        return fn(*args)


def _compile_static(graph_module, example_inputs, name: str, source: str, scalars=frozenset()):
    """A callable for ``graph_module`` on inputs of exactly these sizes (numbers included)."""
    problem = _input_problem(example_inputs)
    if problem is not None:
        _fall_back(name, problem)
        return graph_module.forward
    try:
        traced, scalars = _scalars_as_constants(graph_module, example_inputs, scalars)
        aten_graph, constants = to_aten_graph(traced, example_inputs)
    except Exception as error:  # tracing to ATen has many failure types; all mean eager
        _fall_back(name, f"tracing the graph to ATen failed ({type(error).__name__}: {error})")
        return graph_module.forward
    # Numbers (sizes Dynamo passes as inputs, and as 0-d tensors) are constants of
    # this specialization.
    for index, (node, value) in enumerate(zip(_placeholders(aten_graph), example_inputs)):
        if not isinstance(value, torch.Tensor):
            constants[node.name] = value
        elif index in scalars:
            constants[node.name] = np.asarray(value.numpy())
    try:
        return _CompiledGraph(aten_graph, constants, name, source)
    except _CANNOT_COMPILE as error:
        reason = getattr(error, "reason", str(error))
    return _partitioned(aten_graph, constants, name, source, reason)


class _PerSizes:
    """Compiles a graph with symbolic sizes for the concrete sizes of each call."""

    def __init__(self, graph_module, name: str, source: str, scalars: frozenset):
        self.graph_module, self.name, self.source = graph_module, name, source
        self.scalars = scalars
        self._compiled: dict[tuple, object] = {}

    def __call__(self, *args):
        key = tuple(
            (tuple(a.shape), a.dtype, a.requires_grad and torch.is_grad_enabled())
            if isinstance(a, torch.Tensor)
            else a
            for a in args
        )
        fn = self._compiled.get(key)
        if fn is None:
            fn = _compile_static(
                self.graph_module, list(args), self.name, self.source, self.scalars
            )
            self._compiled[key] = fn
        return fn(*args)


class _CompiledGraph(torch.nn.Module):
    """An ATen graph compiled by Cuvil, called with and returning torch tensors like the graph.

    A module, so that it can stand in for a part of a split graph (``call_module``).
    """

    def __init__(self, graph_module, constants, name: str, source: str, pinned=None):
        """``pinned``: ``None`` compiles for the sizes the graph was traced with; else the
        symbolic sizes stay symbolic but those pinned (input index -> {axis: size})."""
        super().__init__()
        specs, sizes = {}, None if pinned is None else {}
        #: The positions of the graph's arguments that are the compiled code's inputs.
        self._inputs = []
        for index, node in enumerate(_placeholders(graph_module)):
            if node.name not in constants and node.target not in constants:
                self._inputs.append(index)
                val = node.meta.get("val")
                if val is None or not hasattr(val, "shape"):
                    raise UnsupportedConstructError(f"graph input '{node.name}' of unknown shape")
                if pinned is None:
                    dims = [int(d) for d in val.shape]
                else:
                    dims = list(_dims(node.name, val.shape))
                    for axis, size in pinned.get(index, {}).items():
                        dims[axis] = size
                        _pin(sizes, val.shape[axis], size)
                specs[node.name] = TensorSpec(tuple(dims), _dtype(val))
        if sizes:  # sizes Dynamo passes as inputs take their pinned values too
            pinned_names = {str(symbol): size for symbol, size in sizes.items()}
            constants = {
                key: pinned_names.get(v.expr, v) if isinstance(v, SymDim) else v
                for key, v in constants.items()
            }
        program = import_graph(graph_module, constants, specs, name, sizes=sizes)
        module = base.to_ir_module(program, name=name, source=source)
        # Dynamo hands over the same graph again (a recompilation, the first size of a
        # dynamic graph): structurally equal IR reuses its compiled code.
        with _lock:
            self.compiled = _by_fingerprint.get((module.fingerprint, module.target))
        if self.compiled is None:
            self.compiled = module.compile()
            with _lock:
                _by_fingerprint[module.fingerprint, module.target] = self.compiled
        output = next(n for n in graph_module.graph.nodes if n.op == "output").args[0]
        self._container = type(output) if isinstance(output, (tuple, list)) else None

    def forward(self, *args):
        arrays = [args[index].detach().numpy() for index in self._inputs]
        result = self.compiled(*arrays)
        values = result if isinstance(result, tuple) else (result,)
        tensors = [torch.from_numpy(np.asarray(v)) for v in values]
        return tensors[0] if self._container is None else self._container(tensors)


def _placeholders(graph_module) -> list:
    return [n for n in graph_module.graph.nodes if n.op == "placeholder"]


def _pin(sizes: dict, dim, size: int) -> None:
    """Record that the symbol of ``dim`` (a SymInt of one symbol) has ``size``."""
    if isinstance(dim, torch.SymInt) and getattr(dim.node.expr, "is_Symbol", False):
        sizes[dim.node.expr] = size


def _dims(name: str, shape) -> tuple:
    """A placeholder's dims: ints, a SymInt's symbol (``s0``), or a name of its own."""
    dims = []
    for axis, d in enumerate(shape):
        if isinstance(d, torch.SymInt):
            expr = d.node.expr
            d = str(expr) if getattr(expr, "is_Symbol", False) else f"{name}_d{axis}"
        dims.append(d)
    return tuple(dims)


def _dtype(val) -> str:
    return aten.dtype_name(val.dtype)


def _is_supported(node) -> bool:
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        return True
    name = aten.op_name(node.target)
    if name is None:
        return False
    if aten.lowering(name) is not None:
        return True
    # Constructors (full, arange, ...) take no tensors: they are folded.
    return aten.foldable(name) and not node.all_input_nodes


def _partitioned(graph_module, constants, name: str, source: str, reason: str):
    """``graph_module`` with its runs of supported ops compiled and the rest left eager."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupport

    class Supported(OperatorSupport):
        def is_node_supported(self, submodules, node) -> bool:
            return _is_supported(node)

    partitioner = CapabilityBasedPartitioner(graph_module, Supported())
    split = partitioner.fuse_partitions(partitioner.propose_partitions())
    compiled = 0
    for child_name, child in list(split.named_children()):
        try:
            # Constants of the whole graph (get_attr) reach each part as its inputs.
            setattr(split, child_name, _CompiledGraph(child, {}, name, source))
            compiled += 1
        except _CANNOT_COMPILE as error:
            _fall_back(name, getattr(error, "reason", str(error)))
    eager = f"{reason}; {compiled} supported part(s) compiled, the rest runs eagerly"
    _fall_back(name, eager)
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("%s: split graph\n%s", name, split.graph)
    return split.forward
