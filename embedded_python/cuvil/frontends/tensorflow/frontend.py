"""The TensorFlow front end (``"tensorflow"``): ``tf.function`` and ``ConcreteFunction`` graphs.

``cuvil.frontend.build_ir(model=f, input_spec=[tf.TensorSpec([1, 28, 28, 1])])``
imports a ``tf.function`` traced for those specs; ``input_spec=None`` uses its
``input_signature``. A Keras model (TensorFlow backend) is imported through
``model(x, training=False)``; ``input_spec=None`` uses its ``Input`` shapes.
Captured variables become constants; each op carries ``NameLoc(<node name>)``
(e.g. ``"sequential_1/dense_1/MatMul"``) around the function's ``def`` line, or
for a Keras model its layer path and the user's line (see ``keras_layers``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping

import numpy as np

from ..._source import function_location
from ..base import FrontEnd, register, require_inference
from ..builder import IRBuilder, TensorType
from .keras_layers import KerasLayers, model_class_location

__all__ = ["TensorFlowFrontEnd"]

_API = "cuvil.frontend.build_ir"


def _python_function(model):
    return getattr(model, "python_function", None)


def _keras_model(model) -> bool:
    keras = sys.modules.get("keras")
    if keras is None or not isinstance(model, getattr(keras, "Model", ())):
        return False
    return keras.backend.backend() == "tensorflow"


def _inference_function(model):
    """A ``tf.function`` calling the Keras ``model`` in inference mode."""
    import tensorflow as tf

    def call(*inputs):
        return model(inputs[0] if len(inputs) == 1 else list(inputs), training=False)

    call.__name__ = model.name
    return tf.function(call)


def _declared_specs(model) -> list:
    """The declared input specs: ``input_signature``, the concrete function's, a Keras model's."""
    import tensorflow as tf

    if _keras_model(model):
        return list(model.inputs or ())
    if isinstance(model, tf.types.experimental.ConcreteFunction):
        return tf.nest.flatten(model.structured_input_signature[0])
    return list(model.input_signature or ())


def _parameter_names(model, count: int) -> list[str]:
    import inspect

    fn = _python_function(model)
    names = []
    if fn is not None:
        try:
            names = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            names = []
    names = names[:count]
    return names + [f"arg{i}" for i in range(len(names), count)]


class _Resource:
    """A captured variable's handle; ``ReadVariableOp`` reads its current value."""

    def __init__(self, handle):
        self.handle = handle


@register
class TensorFlowFrontEnd(FrontEnd):
    """Imports a ``tf.function``, ``ConcreteFunction`` or Keras model by walking its graph.

    ``input_spec`` is a list of specs (``tf.TensorSpec``, ``cuvil.TensorSpec``,
    arrays, ``(shape, dtype)``), a mapping from input names, or ``None`` for
    the function's own ``input_signature`` (a Keras model's ``Input`` shapes).
    With ``build_ir`` a ``None`` dim raises ``cuvil.ShapeSpecError`` ("Missing
    shape attr") naming the input and dim; ``to_ir_with_dynamic_shape`` keeps it
    symbolic (``input_spec=None`` there too means the declared signature).
    """

    name = "tensorflow"

    @classmethod
    def accepts(cls, model) -> bool:
        tf = sys.modules.get("tensorflow")
        if tf is None:
            return False
        kinds = (tf.types.experimental.GenericFunction, tf.types.experimental.ConcreteFunction)
        return isinstance(model, kinds) or _keras_model(model)

    def input_spec(self, model, input_spec, default_dtype: str) -> dict:
        from ...frontend import InputSpecError, _normalize_spec

        if input_spec is None:
            input_spec = _declared_specs(model)
            if not input_spec:
                raise InputSpecError(
                    f"{_API}: {self.describe(model)[0]} has no input_signature; fix: pass "
                    "input_spec=[tf.TensorSpec(shape, dtype), ...]"
                )
        if isinstance(input_spec, Mapping):
            items = list(input_spec.items())
        else:
            specs = list(input_spec)
            names = _parameter_names(model, len(specs))
            items = [(getattr(s, "name", None) or n, s) for n, s in zip(names, specs)]
        return {name: _normalize_spec(name, _plain(spec), default_dtype) for name, spec in items}

    def symbolic_dims(self, model, input_spec):
        """``tf.TensorSpec`` entries as ``cuvil.TensorSpec`` whose ``None`` dims stay symbolic."""
        from ...frontend import TensorSpec

        if input_spec is None:
            input_spec = _declared_specs(model)

        def plain(spec):
            entry = _plain(spec)
            if entry is spec or entry[0] is None:
                return spec
            return TensorSpec(tuple(entry[0]), entry[1].name)

        if isinstance(input_spec, Mapping):
            return {k: plain(v) for k, v in input_spec.items()}
        names = _parameter_names(model, len(input_spec))
        specs = [plain(s) for s in input_spec]
        # A tf.TensorSpec's name names its input, as for build_ir.
        return {getattr(s, "name", None) or n: p for n, s, p in zip(names, input_spec, specs)}

    def describe(self, model) -> tuple[str, str]:
        if _keras_model(model):
            return model.name, str(model_class_location(model) or "")
        fn = _python_function(model)
        if fn is not None:
            return getattr(fn, "__name__", "tf_function"), str(function_location(fn))
        name = model.name.decode() if isinstance(model.name, bytes) else str(model.name)
        return re.sub(r"^__inference_|_\d+$", "", name), ""

    def import_model(self, model, input_spec: Mapping, mode: str = "inference"):
        import tensorflow as tf

        from . import nn  # noqa: F401 - registers the neural-network ops
        from .importer import GraphImporter
        from .ops import OPS

        name, _ = self.describe(model)
        require_inference(mode, name, "TensorFlow")
        if _keras_model(model):
            # Traced through Cuvil's own tf.function: locations come from the layers.
            layers = KerasLayers(model)
            with layers.recording():
                concrete = _concrete(_inference_function(model), input_spec)
            source, locate = layers.source, layers.locate
        else:
            concrete = _concrete(model, input_spec)
            fn = _python_function(model)
            source = function_location(fn) if fn is not None else None
            locate = None
        builder = IRBuilder(name, source or _unknown())
        args = [builder.argument(TensorType.of(s.shape, s.dtype)) for s in input_spec.values()]
        graph = concrete.graph
        captured = list(concrete.captured_inputs)
        user = graph.inputs[: len(graph.inputs) - len(captured)]
        if len(user) != len(args):
            raise TypeError(
                f"{_API}: {name} takes {len(user)} input tensor(s) but input_spec describes "
                f"{len(args)}"
            )
        inputs = {t.name: a for t, a in zip(user, args)}
        for internal, external in zip(graph.inputs[len(user) :], captured):
            is_resource = external.dtype == tf.resource
            inputs[internal.name] = _Resource(external) if is_resource else external.numpy()
        importer = GraphImporter(builder, OPS, source, locate)
        importer.run(graph, inputs)
        results = [importer.value(importer.env[t.name]) for t in graph.outputs]
        dtypes = [np.dtype(t.dtype.as_numpy_dtype).name for t in graph.outputs]
        return builder.program(results, input_names=list(input_spec), output_dtypes=dtypes)


def _concrete(model, input_spec: Mapping):
    """The concrete function of ``model`` for ``input_spec`` (``model`` itself if it is one)."""
    import tensorflow as tf

    if isinstance(model, tf.types.experimental.ConcreteFunction):
        return model
    # A symbolic dim is None for TensorFlow: the graph is traced for every size.
    specs = [
        tf.TensorSpec([d if isinstance(d, int) else None for d in s.shape], s.dtype)
        for s in input_spec.values()
    ]
    return model.get_concrete_function(*specs)


def _unknown():
    from ..locations import UNKNOWN

    return UNKNOWN


def _plain(spec):
    """A ``tf.TensorSpec`` as ``(shape list with None, numpy dtype)``; other specs unchanged."""
    shape = getattr(spec, "shape", None)
    if shape is not None and hasattr(shape, "as_list"):
        dims = shape.as_list() if shape.rank is not None else None
        return (dims, np.dtype(spec.dtype.as_numpy_dtype))
    return spec
