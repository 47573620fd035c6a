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
    symbolic; if Cuvil cannot compile it so, it is compiled for the concrete
    sizes of each call, once per distinct set of sizes.
    """
    name, source = _graph_origin(graph_module)
    if any(_is_symbolic(v) for v in example_inputs):
        return _compile_symbolic(graph_module, list(example_inputs), name, source)
    return _compile_static(graph_module, list(example_inputs), name, source)


def _compile_symbolic(graph_module, example_inputs, name: str, source: str):
    """One compilation for many sizes of a graph with symbolic sizes, else :class:`_PerSizes`.

    Every symbolic size stays symbolic if Cuvil can compile the graph so. With
    ``dynamic=True`` Dynamo makes every size symbolic and relies on guards
    (``s0 * s1 == 12``) that Cuvil's symbol check refuses; then only the
    leading (batch) sizes stay symbolic and the others are pinned to this
    call's: calls with other pinned sizes compile per size.
    """
    per_sizes = _PerSizes(graph_module, name, source)
    tensors = [v for v in example_inputs if not isinstance(v, torch.SymInt)]
    if _input_problem(tensors) is not None:
        return per_sizes
    for batch_only in (False, True):
        pinned = _pinned_sizes(graph_module, example_inputs, batch_only)
        try:
            aten_graph, constants = _symbolic_aten_graph(graph_module, example_inputs)
            compiled = _CompiledGraph(aten_graph, constants, name, source, pinned or {})
            return _Pinned(compiled, pinned, per_sizes) if pinned else compiled
        except _CANNOT_COMPILE as error:
            reason = getattr(error, "reason", str(error))
        except Exception as error:  # tracing to ATen has many failure types
            reason = f"{type(error).__name__}: {error}"
        logger.info(
            "%s: symbolic sizes (batch only: %s) not compiled: %s", name, batch_only, reason
        )
    return per_sizes


def _symbolic_aten_graph(graph_module, example_inputs):
    """The ATen graph on Dynamo's fake inputs, whose sizes carry its symbolic decisions."""
    fakes = [
        n.meta.get("example_value", v) for n, v in zip(_placeholders(graph_module), example_inputs)
    ]
    aten_graph, constants = to_aten_graph(graph_module, fakes)
    # Sizes Dynamo passes as inputs stay symbolic (only their users' shapes matter).
    for node, value in zip(_placeholders(aten_graph), example_inputs):
        if isinstance(value, torch.SymInt):
            constants[node.name] = SymDim(str(value))
        elif not isinstance(value, torch.Tensor):
            constants[node.name] = value
    return aten_graph, constants


def _pinned_sizes(graph_module, example_inputs, batch_only: bool) -> dict:
    """Input index -> {axis: size} of the symbolic sizes made static (all but dim 0)."""
    if not batch_only:
        return {}
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
    """A graph compiled with its batch sizes symbolic and other sizes pinned to one call's."""

    def __init__(self, compiled, pinned: dict, per_sizes):
        self.compiled, self.pinned, self.per_sizes = compiled, pinned, per_sizes

    def __call__(self, *args):
        for index, axes in self.pinned.items():
            if any(args[index].shape[axis] != size for axis, size in axes.items()):
                return self.per_sizes(*args)
        return self.compiled(*args)


def _compile_static(graph_module, example_inputs, name: str, source: str):
    """A callable for ``graph_module`` on inputs of exactly these sizes (numbers included)."""
    problem = _input_problem(example_inputs)
    if problem is not None:
        _fall_back(name, problem)
        return graph_module.forward
    try:
        aten_graph, constants = to_aten_graph(graph_module, example_inputs)
    except Exception as error:  # tracing to ATen has many failure types; all mean eager
        _fall_back(name, f"tracing the graph to ATen failed ({type(error).__name__}: {error})")
        return graph_module.forward
    # Numbers (sizes Dynamo passes as inputs) are constants of this specialization.
    placeholders = [n for n in aten_graph.graph.nodes if n.op == "placeholder"]
    for node, value in zip(placeholders, example_inputs):
        if not isinstance(value, torch.Tensor):
            constants[node.name] = value
    try:
        return _CompiledGraph(aten_graph, constants, name, source)
    except _CANNOT_COMPILE as error:
        reason = getattr(error, "reason", str(error))
    return _partitioned(aten_graph, constants, name, source, reason)


class _PerSizes:
    """Compiles a graph with symbolic sizes for the concrete sizes of each call."""

    def __init__(self, graph_module, name: str, source: str):
        self.graph_module, self.name, self.source = graph_module, name, source
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
            fn = _compile_static(self.graph_module, list(args), self.name, self.source)
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
        for index, node in enumerate(_placeholders(graph_module)):
            if node.name not in constants:
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
        arrays = [arg.detach().numpy() for arg in args if isinstance(arg, torch.Tensor)]
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
