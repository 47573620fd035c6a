"""Walks a TensorFlow concrete function's graph into Cuvil IR, folding what is known."""

from __future__ import annotations

import numpy as np

from ..._errors import UnsupportedConstructError
from ..base import compute_dtype, computed_array
from ..builder import IRBuilder, TensorType, Value
from ..locations import NameLoc
from ..symbolic_dims import SymbolicSizeError

__all__ = ["GraphImporter"]

# Nodes that carry no computation.
_SKIPPED = frozenset({"NoOp", "Placeholder"})


class GraphImporter:
    """Imports the operations of one ``tf.Graph`` through an :class:`IRBuilder`.

    Tensors known at import time (``Const`` nodes, captured variables read by
    ``ReadVariableOp``, shapes, anything computed only from them) stay NumPy
    arrays: a node whose inputs are all known is run eagerly by TensorFlow.
    The rest become cuvil ops inside ``NameLoc(<node name>)`` around ``source``
    (the ``tf.function``'s Python definition), or inside what ``locate(op)``
    gives: ``(node name, its child location)``.
    """

    def __init__(self, builder: IRBuilder, handlers: dict, source, locate=None):
        self.b = builder
        self.handlers = handlers
        self.source = source
        self.locate = locate or (lambda op: (op.name, source))
        self.op = None
        self.env: dict = {}  # graph tensor name -> Value or NumPy array

    # ----- values ----------------------------------------------------------------------
    def value(self, x) -> Value:
        """``x`` as an IR value: a known array becomes a ``cuvil.constant``."""
        if isinstance(x, Value):
            return x
        return self.b.constant(computed_array(x, self.unsupported))

    def known(self, x, what: str) -> np.ndarray:
        """``x`` as a NumPy array; an error naming ``what`` if it is computed at run time."""
        if isinstance(x, Value):
            raise self.unsupported(f"{what} computed at run time")
        return np.asarray(x)

    def attr(self, name: str, default=None):
        """The current node's attribute ``name`` (``default`` if it has none)."""
        try:
            value = self.op.get_attr(name)
        except ValueError:
            return default
        return value.decode() if isinstance(value, bytes) else value

    def out_type(self, index: int = 0) -> TensorType:
        tensor = self.op.outputs[index]
        dtype = compute_dtype(np.dtype(tensor.dtype.as_numpy_dtype).name)
        return TensorType.of(tensor.shape.as_list(), dtype)

    # ----- walking -----------------------------------------------------------------------
    def run(self, graph, inputs: dict) -> None:
        """Import every operation of ``graph``; ``inputs`` maps tensor names to Values/arrays."""
        self.env.update(inputs)
        for op in graph.get_operations():
            if op.type in _SKIPPED:
                continue
            self.node(op)

    def node(self, op) -> None:
        self.op = op
        ins = []
        for tensor in op.inputs:
            if tensor.name not in self.env:
                raise self.unsupported(f"input {tensor.name} (a {tensor.dtype.name} tensor)")
            ins.append(self.env[tensor.name])
        outs = None
        if all(not isinstance(x, Value) for x in ins):
            outs = self.fold(op, ins)
        if outs is None:
            handler = self.handlers.get(op.type)
            if handler is None:
                raise self.unsupported(f"TensorFlow op '{op.type}'")
            with self.b.node(*self.locate(op)):
                try:
                    result = handler(self, op, ins)
                except SymbolicSizeError as error:
                    raise self.unsupported(
                        f"a static size where the size {error.dim} is symbolic",
                        "give that dim a static size (an int in the tf.TensorSpec)",
                    ) from None
            outs = result if isinstance(result, list) else [result]
        for tensor, out in zip(op.outputs, outs):
            self.env[tensor.name] = out

    def fold(self, op, ins):
        """The node's outputs computed eagerly by TensorFlow, or ``None`` if it cannot run."""
        import tensorflow as tf

        if op.type == "Const":
            return [tf.make_ndarray(op.get_attr("value"))]
        if op.type in ("ReadVariableOp", "VarHandleOp") or op.op_def.is_stateful:
            return None
        try:
            # Typed tensors: raw ops infer attributes such as Tidx from their inputs' dtypes.
            ins = [tf.constant(x, dtype=t.dtype) for x, t in zip(ins, op.inputs)]
            out = getattr(tf.raw_ops, op.type)(**_raw_op_arguments(op, ins))
        except Exception:  # noqa: BLE001 - anything TF cannot run eagerly is imported instead
            return None
        outs = out if isinstance(out, (list, tuple)) else [out]
        return [np.asarray(o) for o in outs]

    def unsupported(self, what: str, fix: str = "") -> UnsupportedConstructError:
        """The error for ``what`` in the current node, at ``NameLoc(node, source)``."""
        name = self.op.name if self.op is not None else "?"
        kind = self.op.type if self.op is not None else "?"
        where = NameLoc(*self.locate(self.op)) if self.op is not None else self.source
        error = UnsupportedConstructError(
            f"cuvil: {what} in node '{name}' ({kind}) cannot be imported", where
        )
        error.add_note(
            fix
            or "Fix: express it with supported operations (see cuvil.frontends.tensorflow.ops) "
            "or compute it outside the imported function."
        )
        return error


def _raw_op_arguments(op, ins) -> dict:
    """Keyword arguments of ``tf.raw_ops.<type>`` for ``op``'s inputs and non-inferred attrs."""
    kwargs, position, inferred = {}, 0, set()
    for arg in op.op_def.input_arg:
        inferred.update(a for a in (arg.type_attr, arg.number_attr, arg.type_list_attr) if a)
        if arg.number_attr:
            count = op.get_attr(arg.number_attr)
        elif arg.type_list_attr:
            count = len(op.get_attr(arg.type_list_attr))
        else:
            count = None
        if count is None:
            kwargs[arg.name] = ins[position]
            position += 1
        else:
            kwargs[arg.name] = list(ins[position : position + count])
            position += count
    for attr in op.op_def.attr:
        if attr.name not in inferred:
            kwargs[_RAW_OP_RENAMES.get((op.type, attr.name), attr.name)] = op.get_attr(attr.name)
    return kwargs


# Attributes whose ``tf.raw_ops`` keyword differs from the op definition's name.
_RAW_OP_RENAMES = {("Squeeze", "squeeze_dims"): "axis"}
