"""The PyTorch front end: an ``nn.Module`` (through ``torch.export``) or an FX graph to Cuvil IR.

Importing this module does not import PyTorch: :meth:`TorchFrontEnd.accepts`
looks for ``torch`` in ``sys.modules``, and everything else runs only for a
model that exists, i.e. once PyTorch is loaded.
"""

from __future__ import annotations

import inspect
import linecache
import re
import sys
from collections.abc import Mapping

import numpy as np

from ..._errors import UnsupportedConstructError
from ..._program import narrow_range
from ..._source import SourceLoc
from ..base import FrontEnd, register
from ..builder import IRBuilder, TensorType

__all__ = ["TorchFrontEnd", "to_aten_graph", "import_graph", "example_tensors"]

_API = "cuvil.frontend.build_ir"


@register
class TorchFrontEnd(FrontEnd):
    """Imports a ``torch.nn.Module`` or a ``torch.fx.GraphModule`` for inference.

    A module is exported with ``torch.export.export`` in eval mode and
    decomposed to core ATen; its parameters and buffers become constants. A
    GraphModule of ATen ops (from ``make_fx``, ``torch.export`` or Dynamo's AOT
    path) is walked as it is; any other FX graph is traced to ATen first.
    Every op is located at its FX node, ``nn.Module`` path and source line.
    """

    name = "torch"

    @classmethod
    def accepts(cls, model) -> bool:
        torch = sys.modules.get("torch")
        return torch is not None and isinstance(model, torch.nn.Module)

    def symbolic_dims(self, model, input_spec):
        """``torch.export.Dim`` dims become their names; their ranges are kept for export."""
        from .specs import plain_dims

        input_spec, self._dims = plain_dims(input_spec)
        return input_spec

    def input_spec(self, model, input_spec, default_dtype: str) -> dict:
        from .specs import normalize_torch_spec

        return normalize_torch_spec(model, input_spec, default_dtype)

    def describe(self, model) -> tuple[str, str]:
        cls = type(model)
        try:
            file = inspect.getsourcefile(cls)
            line = inspect.getsourcelines(cls)[1]
        except (OSError, TypeError):
            file, line = _class_line_from_forward(cls)
        return cls.__name__, f"{file}:{line}" if file else ""

    def import_model(self, model, input_spec: Mapping, mode: str = "inference"):
        import torch

        if mode != "inference":
            raise ValueError(
                f"{_API}: mode={mode!r} is not supported for PyTorch models: Cuvil imports "
                f"{type(model).__name__} for inference only (model.eval() semantics: dropout "
                "removed, batch norm on running statistics); use mode='inference' and train "
                "with PyTorch"
            )
        name, source = self.describe(model)
        outputs = None
        if isinstance(model, torch.fx.GraphModule):
            graph_module, constants = to_aten_graph(model, example_tensors(input_spec))
        else:
            dims = getattr(self, "_dims", {})
            graph_module, constants, outputs, ranges = _export(model, input_spec, name, dims)
        loc = _source_loc(source)
        program = import_graph(graph_module, constants, input_spec, name, loc, outputs)
        if not isinstance(model, torch.fx.GraphModule):
            for symbol, (lowest, highest) in ranges.items():
                narrow_range(program.symbol_ranges, symbol, lowest, highest)
        return program


def _class_line_from_forward(cls) -> tuple[str | None, int]:
    """The ``class`` line above ``forward``'s code: for classes of a finished ``__main__`` script.

    ``inspect`` finds a class through its module, which ``runpy`` removes after
    running a file (``cuvil compile model.py``); the method's code keeps its file.
    """
    code = getattr(getattr(cls, "forward", None), "__code__", None)
    if code is None:
        return None, 0
    lines = linecache.getlines(code.co_filename)
    for number in range(min(code.co_firstlineno, len(lines)), 0, -1):
        if re.match(rf"\s*class\s+{re.escape(cls.__name__)}\b", lines[number - 1]):
            return code.co_filename, number
    return code.co_filename, code.co_firstlineno


def _source_loc(source: str):
    file, _, line = source.rpartition(":")
    return SourceLoc(file, int(line), 0) if file and line.isdigit() else None


def example_tensors(input_spec: Mapping, hints: Mapping | None = None) -> list:
    """Zero tensors of the specs' shapes and dtypes (export and tracing read only those).

    A symbolic dim takes its example size from ``hints`` (symbol name -> size).
    """
    import torch

    from .aten import torch_dtype

    def size(d):
        return hints[d] if isinstance(d, str) else d

    return [
        torch.zeros(tuple(size(d) for d in s.shape), dtype=torch_dtype(s.dtype))
        for s in input_spec.values()
    ]


def _to_numpy(tensor, what: str) -> np.ndarray:
    import torch

    if tensor.dtype == torch.bfloat16:
        raise UnsupportedConstructError(f"{what} of dtype bfloat16 (NumPy has no bfloat16)")
    return tensor.detach().cpu().contiguous().numpy()


def _decompositions():
    """Export's core-ATen table, less the upsampling ops: Cuvil lowers them whole (one
    interpolation matrix per axis) where their decompositions index element by element."""
    import torch

    return _keep_upsampling(torch.export.default_decompositions())


def _keep_upsampling(table):
    """``table`` (a decomposition table) without the upsampling ops Cuvil lowers whole."""
    for op in list(table.keys()):
        if "upsample" in str(op) and "_aa" not in str(op):
            del table[op]
    return table


def _export(model, input_spec: Mapping, name: str, dims: Mapping):
    """``torch.export`` in eval mode, decomposed to core ATen.

    Symbol names in ``input_spec`` become ``torch.export`` dynamic dims (the
    user's ``torch.export.Dim`` from ``dims`` where given), so the graph keeps
    them symbolic. Returns the graph module, its constants and the indices of
    the user outputs.
    """
    was_training = model.training
    model.eval()
    try:
        program = _export_program(model, input_spec, dims)
    except Exception as error:  # export's errors have many types; all mean "cannot import"
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UnsupportedConstructError(
            f"torch.export could not export {name} ({type(error).__name__}: {first}); make "
            "forward exportable (no data-dependent Python control flow) or pass a "
            "torch.fx.GraphModule"
        ) from error
    finally:
        model.train(was_training)
    from torch.export.graph_signature import OutputKind

    # Buffer mutations are outputs of the exported graph too; the model's results are
    # the user outputs.
    specs = program.graph_signature.output_specs
    outputs = [i for i, spec in enumerate(specs) if spec.kind is OutputKind.USER_OUTPUT]
    ranges = _symbol_ranges(program, input_spec)
    return program.graph_module, _export_constants(program), outputs, ranges


def _symbol_ranges(program, input_spec: Mapping) -> dict:
    """Symbol name -> (lowest, highest or None) size, where the exported program bounds it.

    torch.export records a range per symbol (``s0: [2, 16]`` when a mask of 16
    rows is sliced to the sequence). Its floor of 2 is export's own: it
    specializes sizes 0 and 1, which the compiled code handles, so only a
    higher floor is kept.
    """
    import torch
    from torch.export.graph_signature import InputKind

    placeholders = {n.name: n for n in program.graph_module.graph.nodes if n.op == "placeholder"}
    specs = program.graph_signature.input_specs
    user = [s.arg.name for s in specs if s.kind is InputKind.USER_INPUT]
    ranges = {}
    for spec, placeholder in zip(input_spec.values(), user):
        value = placeholders[placeholder].meta.get("val")
        for axis, d in enumerate(spec.shape):
            if not isinstance(d, str) or value is None or d in ranges:
                continue
            size = value.shape[axis]
            if not isinstance(size, torch.SymInt):
                continue
            bounds = program.range_constraints.get(size.node.expr)
            if bounds is None:
                continue
            lowest, highest = _finite(bounds.lower), _finite(bounds.upper)
            lowest = lowest if lowest is not None and lowest > 2 else 1
            if lowest > 1 or highest is not None:
                ranges[d] = (lowest, highest)
    return ranges


def _export_program(model, input_spec: Mapping, dims: Mapping):
    """The exported, decomposed program; a symbol the model bounds (``seq <= 16``) is exported
    again with the range export infers for it."""
    import torch

    from .specs import export_dims

    def export(infer_ranges: bool):
        hints, dynamic_shapes = export_dims(input_spec, dims, infer_ranges)
        examples = dict(zip(input_spec, example_tensors(input_spec, hints)))
        bound = inspect.signature(model.forward).bind_partial(**examples)
        options = {"dynamic_shapes": dynamic_shapes} if hints else {}
        with torch.no_grad():
            program = torch.export.export(model, tuple(bound.args), dict(bound.kwargs), **options)
            return program.run_decompositions(_decompositions())

    try:
        return export(False)
    except torch._dynamo.exc.UserError as error:
        if "Constraints violated" not in str(error):
            raise
        return export(True)


def _finite(bound) -> int | None:
    """A range bound as an int; ``None`` for infinity (torch's ``int_oo`` says it is finite)."""
    from torch.utils._sympy.numbers import IntInfinity, NegativeIntInfinity

    if isinstance(bound, (IntInfinity, NegativeIntInfinity)) or not bound.is_finite:
        return None
    return int(bound)


def _export_constants(program) -> dict[str, np.ndarray]:
    """Placeholder name -> value of every parameter, buffer and constant tensor input."""
    from torch.export.graph_signature import InputKind

    state = {**program.state_dict, **program.constants}
    constants = {}
    for spec in program.graph_signature.input_specs:
        if spec.kind is InputKind.USER_INPUT:
            continue
        if spec.target not in state:
            raise UnsupportedConstructError(f"an exported input of kind {spec.kind.name}")
        constants[spec.arg.name] = _to_numpy(state[spec.target], f"'{spec.target}'")
    return constants


def _is_aten_graph(graph_module) -> bool:
    import operator

    from .aten import op_name

    for node in graph_module.graph.nodes:
        if node.op in ("call_module", "call_method"):
            return False
        if node.op == "call_function":
            if node.target is not operator.getitem and op_name(node.target) is None:
                return False
            if "val" not in node.meta:
                return False
    return True


def to_aten_graph(graph_module, examples: list):
    """``graph_module`` as a core-ATen graph with node metadata: (graph module, constants).

    An ATen graph with ``meta["val"]`` on its nodes is used as it is; any other
    (``symbolic_trace``, Dynamo's Torch-level graphs) is traced with ``make_fx``
    on fake tensors, keeping each node's ``nn_module_stack`` and ``stack_trace``.
    """
    import torch
    import torch.fx.traceback as fx_traceback
    from torch._decomp import core_aten_decompositions
    from torch.fx.experimental.proxy_tensor import make_fx

    if not _is_aten_graph(graph_module):
        with torch.no_grad(), fx_traceback.preserve_node_meta():
            graph_module = make_fx(
                torch.fx.Interpreter(graph_module).run,
                decomposition_table=_keep_upsampling(dict(core_aten_decompositions())),
                tracing_mode="fake",
                # Parameters held by the graph module (get_attr) stay real: they are constants.
                _allow_non_fake_inputs=True,
            )(*examples)
    constants = {}
    for node in graph_module.graph.nodes:
        if node.op == "get_attr":
            value = graph_module
            for part in node.target.split("."):
                value = getattr(value, part)
            if isinstance(value, torch.Tensor):
                constants[node.target] = _to_numpy(value, f"'{node.target}'")
    return graph_module, constants


def import_graph(
    graph_module, constants, input_spec: Mapping, name: str, loc=None, outputs=None, sizes=None
):
    """The :class:`TracedProgram` of an ATen graph whose non-constant placeholders are the inputs.

    The placeholders that are not in ``constants`` are, in order, the inputs of
    ``input_spec``; ``outputs`` selects the graph's results by index (``None``: all).
    With symbolic dims in ``input_spec`` the graph's SymInts stay symbolic
    (``sizes``: symbols pinned to static sizes, see :class:`GraphImporter`).
    """
    from .importer import GraphImporter

    builder = IRBuilder(name, loc) if loc is not None else IRBuilder(name)
    placeholders = [
        n.name
        for n in graph_module.graph.nodes
        if n.op == "placeholder" and n.name not in constants and n.target not in constants
    ]
    if len(placeholders) != len(input_spec):
        raise UnsupportedConstructError(
            f"a graph of {name} with {len(placeholders)} tensor inputs "
            f"({', '.join(placeholders)}) for {len(input_spec)} input specs"
        )
    arguments = {
        node: builder.argument(TensorType(tuple(spec.shape), spec.dtype))
        for node, spec in zip(placeholders, input_spec.values())
    }
    symbolic = any(not isinstance(d, int) for s in input_spec.values() for d in s.shape)
    if symbolic and sizes is None:
        sizes = {}
    importer = GraphImporter(builder, constants, sizes)
    results = importer.run(graph_module.graph, arguments, outputs)
    return builder.program(
        results, input_names=list(input_spec), output_dtypes=importer.output_dtypes
    )
