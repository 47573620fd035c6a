"""Walks an ONNX graph node by node, building Cuvil IR and folding static values with NumPy.

Every tensor of the graph is either a runtime :class:`~cuvil.frontends.Value`
or a NumPy array known at import time (initializers, ``Constant`` nodes and
anything computed only from them, including the shape arithmetic exporters
emit: ``Shape`` of a static tensor is a constant). Op handlers (``ops_*.py``)
fold when all their inputs are known and emit cuvil ops otherwise; a
constant reaches the IR only when a runtime op uses it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ... import _dtypes
from ..._dtypes import is_supported
from ..._errors import TraceError, UnsupportedConstructError
from ..base import compute_dtype, op_registrar
from ..builder import IRBuilder, TensorType, Value
from ..locations import FileLineColLoc
from ..symbolic_dims import SymbolicSizeError, SymDim, folded_sizes, is_shape_value
from .model import LoadedModel, OnnxModelError, tensor_to_array

__all__ = ["OPS", "op", "NodeContext", "import_graph"]

# op_type -> handler(ctx) returning one entry (Value or ndarray) per node output.
OPS: dict[str, Callable] = {}


# ``@op("Add", "Sub")`` registers the handler of those op types (default domain).
op = op_registrar(OPS)


class NodeContext:
    """One node being imported: its inputs (Values or arrays), attributes, builder and opset."""

    def __init__(self, importer: _Importer, node, name: str, loc):
        self.importer = importer
        self.node = node
        self.name = name
        self.loc = loc
        self.b: IRBuilder = importer.builder
        self.opset: int = importer.model.opset
        self.op_type: str = node.op_type
        self.inputs = [importer.lookup(n, node, name) if n else None for n in node.input]
        self.attrs = {a.name: a for a in node.attribute}

    # ----- attributes and inputs ---------------------------------------------------------
    def attr(self, name: str, default=None):
        """Attribute ``name`` as a Python value (ints, floats, strings, lists, arrays)."""
        from onnx import helper

        proto = self.attrs.get(name)
        if proto is None:
            return default
        value = helper.get_attribute_value(proto)
        if isinstance(value, bytes):
            return value.decode()
        if hasattr(value, "data_type"):
            return tensor_to_array(value, self.importer.model)
        return list(value) if isinstance(value, (list, tuple)) else value

    def has(self, index: int) -> bool:
        """Whether optional input ``index`` is given (present and not the empty name)."""
        return index < len(self.inputs) and self.inputs[index] is not None

    def is_constant(self, index: int) -> bool:
        return self.has(index) and not isinstance(self.inputs[index], Value)

    def all_constant(self) -> bool:
        return all(not isinstance(v, Value) for v in self.inputs if v is not None)

    def value(self, index: int) -> Value:
        """Input ``index`` as an IR value (a constant becomes a ``cuvil.constant`` once)."""
        return self.importer.materialize(self.node.input[index], self.inputs[index])

    def constant(self, index: int, what: str) -> np.ndarray:
        """Input ``index``'s value at import time; unsupported if only known at run time."""
        item = self.inputs[index]
        if isinstance(item, Value):
            raise self.unsupported(
                f"{what} (input {index}, '{self.node.input[index]}') computed at run time; "
                "Cuvil needs it known when the model is imported"
            )
        return item

    def ints(self, attr: str, index: int, default=None) -> list[int] | None:
        """A list of ints from attribute ``attr`` (older opsets) or constant input ``index``."""
        if attr in self.attrs:
            return [int(v) for v in self.attr(attr)]
        if self.has(index):
            return [int(v) for v in np.asarray(self.constant(index, attr)).reshape(-1)]
        return default

    def rank(self, index: int = 0) -> int:
        return len(self.shape(index))

    def shape(self, index: int = 0) -> tuple:
        """Input ``index``'s shape: ints, and a :class:`SymDim` for each dynamic dimension."""
        item = self.inputs[index]
        if not isinstance(item, Value):
            return np.shape(item)
        return self.importer.dims(item)

    def dtype(self, index: int = 0) -> str:
        item = self.inputs[index]
        if isinstance(item, Value):
            return item.type.dtype
        return "int64" if is_shape_value(item) else np.asarray(item).dtype.name

    # ----- errors ----------------------------------------------------------------------
    def unsupported(self, what: str) -> UnsupportedConstructError:
        """An error naming the op type, the node and where the model came from."""
        return UnsupportedConstructError(
            f"ONNX {self.op_type} node '{self.name}': {what}", self.importer.model.label
        )

    def static_size_needed(self, error: SymbolicSizeError) -> UnsupportedConstructError:
        """The error for a symbolic size used where this node needs a static one."""
        return UnsupportedConstructError(
            f"ONNX {self.op_type} node '{self.name}' needs a static size but gets the symbolic "
            f"dimension {error.dim} (inputs {', '.join(n for n in self.node.input if n)}); "
            "Cuvil keeps dims declared with dim_param symbolic. Fix: pass a static input_spec, "
            "e.g. cuvil.load_onnx(path, input_spec={name: (1, 3, 224, 224)})",
            self.importer.model.label,
        )

    def require_float(self, index: int = 0) -> None:
        if self.dtype(index) not in ("float16", "bfloat16", "float32", "float64"):
            raise self.unsupported(f"input of type {self.dtype(index)} (a float type is needed)")


class _Importer:
    def __init__(self, model: LoadedModel, builder: IRBuilder):
        self.model = model
        self.builder = builder
        self.env: dict[str, Value | np.ndarray] = {}
        self._materialized: dict[str, Value] = {}
        # Prefix of the node names of an inlined subgraph ("loop/iteration_2/").
        self.scope = ""
        self._dims: dict[str, tuple] = {}

    def dims(self, value: Value) -> tuple:
        """``value``'s dims: ints, and a :class:`SymDim` per dynamic dim (named lazily)."""
        cached = self._dims.get(value.name)
        if cached is None:
            names = None

            def named(axis: int) -> str:
                nonlocal names
                if names is None:
                    names = self._symbol_expressions(value)
                return names[axis]

            cached = self._dims[value.name] = tuple(
                d
                if isinstance(d, int)
                else SymDim(d, (value, axis))
                if isinstance(d, str)
                else SymDim(origin=(value, axis), resolve=lambda a=axis: named(a))
                for axis, d in enumerate(value.type.shape)
            )
        return cached

    def _symbol_expressions(self, value: Value) -> dict[int, str]:
        """The compiler's expression for each dynamic dim of ``value`` (axis -> text)."""
        ext = _dtypes.extension()
        text = self.builder.module([value])
        try:
            exprs = ext.result_symbols(text, self.builder.func_name)[0]
        except ext.CompileError:
            exprs = []
        axes = [i for i, d in enumerate(value.type.shape) if not isinstance(d, int)]
        return dict(zip(axes, list(exprs) + ["?"] * len(axes)))

    def lookup(self, name: str, node, node_name: str):
        try:
            return self.env[name]
        except KeyError:
            raise OnnxModelError(
                f"{self.model.label}: {node.op_type} node '{node_name}' reads '{name}', which no "
                "earlier node, input or initializer defines (the graph is not in order or is "
                "incomplete)"
            ) from None

    def materialize(self, name: str, item) -> Value:
        if isinstance(item, Value):
            return item
        cached = self._materialized.get(name)
        if cached is None:
            array = np.asarray(item)
            if is_shape_value(array):
                symbolic = next((e for e in array.flat if isinstance(e, SymDim)), None)
                if symbolic is None:
                    raise UnsupportedConstructError(
                        f"ONNX tensor '{name}' of non-numeric values used at run time"
                    )
                raise SymbolicSizeError(symbolic)
            array = array.astype(compute_dtype(array.dtype.name), copy=False)
            if not is_supported(array.dtype):
                raise UnsupportedConstructError(
                    f"ONNX tensor '{name}' of type {array.dtype} used at run time"
                )
            cached = self._materialized[name] = self.builder.constant(np.ascontiguousarray(array))
        return cached

    def run_node(self, index: int, node) -> None:
        name = self.scope + (node.name or f"{node.op_type}_{index}")
        source = FileLineColLoc(self.model.label, 0, 0)
        with self.builder.node(name, source) as loc:
            ctx = NodeContext(self, node, name, loc)
            if node.domain not in ("", "ai.onnx"):
                raise ctx.unsupported(f"the operator domain '{node.domain}' (custom op)")
            handler = OPS.get(node.op_type)
            if handler is None:
                raise ctx.unsupported(
                    "this operator is not supported by Cuvil's ONNX importer; "
                    "supported: " + ", ".join(sorted(OPS))
                )
            try:
                outputs = handler(ctx)
            except TraceError as error:
                raise TraceError(f"ONNX {node.op_type} node '{name}': {error}") from None
            except OnnxModelError:
                raise
            except SymbolicSizeError as error:
                raise ctx.static_size_needed(error) from None
            except MemoryError:
                # Folding a constant of declared sizes (2^40 elements) at import time.
                raise ctx.unsupported(
                    "its result, computed at import time from constant inputs, is too large "
                    "to hold in memory; the sizes in the model are likely corrupted"
                ) from None
            except (ValueError, IndexError, TypeError, KeyError) as error:
                # Malformed attributes or inputs (a missing weight, an axis out of range).
                raise TraceError(
                    f"ONNX {node.op_type} node '{name}' in {self.model.label}: cannot import it: "
                    f"{type(error).__name__}: {error}"
                ) from error
        for out_name, value in zip(node.output, outputs):
            if out_name:
                self.env[out_name] = value if isinstance(value, Value) else folded_sizes(value)
        unused = [n for n in node.output[len(outputs) :] if n]
        if unused:
            raise ctx.unsupported(f"the optional output(s) {', '.join(unused)}")

    def run_subgraph(self, graph, inputs: dict, scope: str) -> list:
        """Inline ``graph`` (an If branch, a Loop body): its inputs bound to ``inputs`` (name ->
        Value or array), outer names visible, its node names prefixed with ``scope``; returns
        its outputs. Its own names leave no trace in the outer scope."""
        saved = self.env, self._materialized, self.scope
        self.env, self._materialized = {**self.env, **inputs}, dict(self._materialized)
        self.scope = scope
        try:
            for tensor in graph.initializer:
                self.env[tensor.name] = tensor_to_array(tensor, self.model)
            for index, node in enumerate(graph.node):
                self.run_node(index, node)
            return [self.env[output.name] for output in graph.output]
        finally:
            self.env, self._materialized, self.scope = saved


def onnx_float16() -> int:
    from onnx import TensorProto

    return TensorProto.FLOAT16


def import_graph(model: LoadedModel, input_spec, func_name: str):
    """Import ``model``'s graph for inputs ``input_spec`` (name -> TensorSpec) as a program."""
    from . import ops_control, ops_nn, ops_tensor  # noqa: F401  (registers the handlers)

    graph = model.proto.graph
    builder = IRBuilder(func_name, FileLineColLoc(model.label, 0, 0))
    importer = _Importer(model, builder)
    for tensor in graph.initializer:
        importer.env[tensor.name] = tensor_to_array(tensor, model)
    for name, spec in input_spec.items():
        with builder.node(name, FileLineColLoc(model.label, 0, 0)):
            importer.env[name] = builder.argument(TensorType.of(spec.shape, spec.dtype))
    for index, node in enumerate(graph.node):
        importer.run_node(index, node)
    results, dtypes = [], []
    for output in graph.output:
        with builder.node(output.name, FileLineColLoc(model.label, 0, 0)):
            value = importer.materialize(output.name, importer.env[output.name])
        results.append(value)
        # A declared float16 output, computed in float32, is returned in float16.
        float16 = output.type.tensor_type.elem_type == onnx_float16()
        dtypes.append("float16" if float16 and value.type.dtype == "float32" else value.type.dtype)
    return builder.program(results, input_names=list(input_spec), output_dtypes=dtypes)
