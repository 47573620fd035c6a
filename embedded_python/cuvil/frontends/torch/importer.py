"""Walks a core-ATen FX graph and builds its Cuvil IR, one located block of ops per FX node.

Every FX node's ops are built inside ``builder.node(<FX node name>, ...)``
whose child is the node's ``nn.Module`` path (from ``nn_module_stack``)
around the user's source line (the innermost ``stack_trace`` frame outside
PyTorch), e.g. ``loc("addmm"("layers.0.fc"("model.py":30:0)))``.

Values in the walk are IR :class:`~cuvil.frontends.Value` s, NumPy arrays
(parameters, buffers and anything computed from them alone: those are folded
by running the ATen op itself and become ``cuvil.constant`` only where an IR
op uses them), Python scalars (the shape arithmetic of ``sym_size``; a
symbolic size is a :class:`~cuvil.frontends.symbolic_dims.SymDim`), and
tuples of these for multi-result ops.
"""

from __future__ import annotations

import operator
import os
import re
from collections.abc import Mapping

import numpy as np

from ..._errors import UnsupportedConstructError
from ..._source import SourceLoc
from ..base import compute_dtype
from ..builder import IRBuilder, Value
from ..locations import NameLoc
from ..symbolic_dims import SymbolicSizeError, SymDim
from . import aten
from .merged_dims import Deferred

__all__ = ["GraphImporter", "node_location", "module_path", "user_frame", "outer_frame"]

# Values known only at run time: IR values, and merges kept for a matrix product.
_RUNTIME = (Value, Deferred)

# Ops on constants with symbolic sizes that are lowered rather than refused: a weight
# expanded over a symbolic batch for a matrix product (merged_dims.LeadingBroadcast).
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)')


def _torch_dir() -> str:
    import torch

    return os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


def user_frame(stack_trace: str | None) -> SourceLoc | None:
    """The innermost frame of ``stack_trace`` outside PyTorch (the user's line), if any."""
    if not stack_trace:
        return None
    torch_dir = _torch_dir()
    frames = [(m["file"], int(m["line"])) for m in _FRAME.finditer(stack_trace)]
    for file, line in reversed(frames):
        if not os.path.abspath(file).startswith(torch_dir):
            return SourceLoc(file, line, 0)
    return None


def outer_frame(stack_trace: str | None) -> tuple[str, SourceLoc] | None:
    """``(function, location)`` of the outermost frame of ``stack_trace`` (the compiled code)."""
    match = _FRAME.search(stack_trace or "")
    if match is None:
        return None
    return match["function"], SourceLoc(match["file"], int(match["line"]), 0)


def module_path(stack: Mapping | None) -> str:
    """The innermost ``nn.Module`` path of ``nn_module_stack`` (``"layers.0.attn"``), or ``""``.

    ``torch.export`` records ``"layers.0.attn"``; Dynamo ``"L['self'].layers[0].attn"``.
    """
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    path = re.sub(r"^L\['self'\]\.?", "", path)
    path = re.sub(r"^L__self__\.?", "", path)
    return re.sub(r"\[(\w+)\]", r".\1", path).replace("['", ".").replace("']", "").lstrip(".")


def node_location(node):
    """The structured location of an FX node's ops (the child of its ``NameLoc``)."""
    source = user_frame(node.meta.get("stack_trace"))
    path = module_path(node.meta.get("nn_module_stack"))
    if path:
        return NameLoc(path, source)
    return source


class GraphImporter:
    """Builds the IR of one FX graph with ATen ops.

    Args:
        builder: the IRBuilder to append to.
        constants: placeholder or ``get_attr`` target -> NumPy array, for the
            values baked into the IR (parameters and buffers of an exported module).
        sizes: ``None`` to import every SymInt of the graph's shapes as the size
            it was traced with (a graph compiled for one set of sizes); else the
            graph is imported symbolically, with these symbols (sympy Symbol ->
            int) pinned to static sizes.
    """

    def __init__(self, builder: IRBuilder, constants: Mapping[str, np.ndarray], sizes=None):
        self.b = builder
        self.constants = dict(constants)
        self.sizes = sizes
        self.env: dict = {}
        self.node = None
        #: The ATen op packet of the node being imported (``"aten.add"``), for messages.
        self.op = ""
        self._materialized: dict[int, tuple[np.ndarray, Value]] = {}

    # ----- the walk ------------------------------------------------------------------
    def run(self, graph, arguments: Mapping[str, Value], outputs=None) -> list[Value]:
        """Import ``graph``; ``arguments`` maps the placeholders that are inputs to IR arguments.

        ``outputs`` selects the graph's results to return by index (``None``: all).
        """
        selected = outputs
        outputs = None
        for node in graph.nodes:
            self.node = node
            if node.op == "placeholder":
                self.env[node] = self._placeholder(node, arguments)
            elif node.op == "get_attr":
                self.env[node] = self._constant(node, node.target)
            elif node.op == "call_function":
                if not node.users:
                    continue  # functional ATen: a result nobody reads has no effect
                with self.b.node(node.name, node_location(node)):
                    try:
                        self.env[node] = self._call(node)
                    except SymbolicSizeError as error:
                        raise self.unsupported(
                            f"{self.op or node.target} needs a static size but gets the symbolic "
                            f"size {error.dim}; fix: give that dim a static size (an int in "
                            "input_spec, or no torch.export.Dim for it)"
                        ) from None
            elif node.op == "output":
                outputs = self._outputs(node, selected)
            else:
                raise self.unsupported(f"FX {node.op} node {node.target}")
        if not outputs:
            raise UnsupportedConstructError("a graph without tensor outputs")
        return outputs

    def _outputs(self, node, selected) -> list[Value]:
        results = list(_flatten(self._resolve(node.args[0])))
        # The dtypes the graph returns (float16 results are computed in float32).
        dtypes = [_returned_dtype(n) for n in _flatten(node.args[0])]
        if selected is not None:
            results = [results[i] for i in selected]
            dtypes = [dtypes[i] for i in selected]
        for value in results:
            if isinstance(value, aten.NotComputed):
                raise self.unsupported(f"returning {value.what} (not computed by Cuvil)")
        with self.b.node(node.name, node_location(node)):
            values = [self.value(v) for v in results]
        self.output_dtypes = [
            d if d is not None and compute_dtype(d) == v.type.dtype else v.type.dtype
            for v, d in zip(values, dtypes)
        ]
        return values

    def _placeholder(self, node, arguments):
        if node.name in arguments:
            return arguments[node.name]
        if node.target in self.constants:
            return self.constants[node.target]
        if node.name in self.constants:
            return self.constants[node.name]
        raise self.unsupported(f"graph input {node.name!r} that is neither an input nor a constant")

    def _constant(self, node, target: str):
        if target in self.constants:
            return self.constants[target]
        raise self.unsupported(f"get_attr of {target!r}, which holds no tensor")

    def _resolve(self, arg):
        import torch.fx

        return torch.fx.node.map_arg(arg, lambda n: self.env[n])

    def _call(self, node):
        target = node.target
        args, kwargs = self._resolve(node.args), self._resolve(node.kwargs)
        if target is operator.getitem:
            return args[0][args[1]]
        if getattr(target, "__module__", None) in ("_operator", "operator", "math"):
            if any(isinstance(v, _RUNTIME) for v in _flatten((args, kwargs))):
                raise self.unsupported(f"Python {target.__name__} on a tensor")
            return target(*args, **kwargs)
        name = self.op = aten.op_name(target)
        for value in _flatten((args, kwargs)):
            if isinstance(value, aten.NotComputed):
                raise self.unsupported(f"{value.what}, which Cuvil does not compute")
        if name is None:
            raise self.unsupported(f"the call of {target!r}, which is not an ATen op")
        if aten.foldable(name) and not any(
            isinstance(v, _RUNTIME) for v in _flatten((args, kwargs))
        ):
            symbolic = [v for v in _flatten((args, kwargs)) if isinstance(v, SymDim)]
            if symbolic and aten.lowering(name) is None:
                raise SymbolicSizeError(symbolic[0])
            if symbolic:  # a constructor of a run-time size (arange(ids.shape[1]))
                return aten.lowering(name)(self, **aten.bind(target, args, kwargs))
            folded = aten.fold(target, args, kwargs)
            if folded is not None:
                return folded
        lowering = aten.lowering(name)
        if lowering is None:
            raise self.unsupported(f"ATen op {name}")
        return lowering(self, **aten.bind(target, args, kwargs))

    # ----- helpers for the lowerings ------------------------------------------------------
    def value(self, x, dtype: str | None = None) -> Value:
        """``x`` as an IR value (a NumPy constant becomes ``cuvil.constant`` once)."""
        if isinstance(x, Value):
            return x
        if isinstance(x, np.ndarray):
            key = id(x)
            cached = self._materialized.get(key)
            if cached is None:
                cached = (x, self.b.constant(aten.supported_constant(self, x)))
                self._materialized[key] = cached
            return cached[1]
        if isinstance(x, Deferred):
            raise self.unsupported(x.reason)
        raise self.unsupported(f"a {type(x).__name__} where a tensor is expected")

    def result_meta(self):
        """The FakeTensor ``meta["val"]`` of the node being imported (its shape and dtype)."""
        val = self.node.meta.get("val")
        if isinstance(val, (tuple, list)):
            val = val[0]
        return val

    def size_of(self, d):
        """A dim of a node's shape as an int, or ``None`` for a symbolic size."""
        if isinstance(d, int):
            return d
        if self.sizes is None:
            return int(d)  # the size this graph was traced with
        expr = d.node.expr
        expr = expr.xreplace(self.sizes) if hasattr(expr, "xreplace") else expr
        if isinstance(expr, int) or expr.is_Integer:
            return int(expr)
        return _guarded_constant(d)

    def unsupported(self, what: str) -> UnsupportedConstructError:
        """The error for something of the current node that Cuvil cannot import."""
        node = self.node
        where = user_frame(node.meta.get("stack_trace")) if node is not None else None
        path = module_path(node.meta.get("nn_module_stack")) if node is not None else ""
        name = f"FX node '{node.name}'" if node is not None else "the graph"
        if path:
            name += f" in module '{path}'"
        return UnsupportedConstructError(f"{what} ({name})", where)


def _returned_dtype(node) -> str | None:
    """The dtype-table name of what an output node returns (``None``: not a tensor node)."""
    val = node.meta.get("val") if hasattr(node, "meta") else None
    return aten.dtype_name(val.dtype) if hasattr(val, "dtype") else None


def _guarded_constant(d) -> int | None:
    """The int a SymInt is proven to equal by its shape environment's guards, else ``None``.

    Dynamo's guards relate symbols (``x.reshape(-1, 12)`` of ``[s0, s1, s2]``
    guards ``s2 * (s0 * s1 // (s0 * s1 * s2 // 12)) == 12``), so a size
    whose expression mixes symbols may still be a constant for every call
    the graph serves: the guards say so.
    """
    from torch.fx.experimental.symbolic_shapes import statically_known_true

    hint = getattr(d.node, "hint", None)
    if not isinstance(hint, int):
        return None
    try:
        return hint if statically_known_true(d == hint) else None
    except Exception:  # a size the shape environment cannot reason about stays symbolic
        return None


def _flatten(value):
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _flatten(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _flatten(item)
    else:
        yield value
