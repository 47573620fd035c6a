"""The ONNX importer as a registered front end (``"onnx"``) and ``cuvil.load_onnx``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..base import FrontEnd, register
from .model import LoadedModel, is_onnx_model, load, np_dtype

__all__ = ["OnnxFrontEnd", "load_onnx"]

_API = "cuvil.frontend.build_ir"


@register
class OnnxFrontEnd(FrontEnd):
    """Imports an ONNX model: a path ending in ``.onnx``, its bytes or an ``onnx.ModelProto``.

    ``input_spec`` is optional: by default the graph's declared inputs
    (initializers excluded) give names, shapes and dtypes; a mapping replaces
    some of them (a bare shape keeps the declared dtype), a list gives them in
    the graph's order. Each node's ops carry ``NameLoc(node name, model file)``;
    static shape arithmetic is folded at import time. Only inference graphs
    are imported (``Dropout`` is the identity).
    """

    name = "onnx"

    def __init__(self, use_mmap: bool = False, api: str = _API):
        self.use_mmap = use_mmap
        self.api = api
        self._loaded: tuple[object, LoadedModel] | None = None

    @classmethod
    def accepts(cls, model) -> bool:
        return is_onnx_model(model)

    def load(self, model) -> LoadedModel:
        """The parsed model (parsed once per front-end instance and model)."""
        if self._loaded is None or self._loaded[0] is not model:
            self._loaded = (model, load(model, use_mmap=self.use_mmap, api=self.api))
        return self._loaded[1]

    def declared_inputs(self, model) -> list[tuple[str, tuple, str]]:
        """The graph's runtime inputs as (name, shape, dtype); symbolic dims are symbol names.

        A ``dim_param`` is its symbol (made an identifier); a dim with neither
        value nor param gets a fresh one, ``<input>_<axis>``.
        """
        graph = self.load(model).proto.graph
        weights = {t.name for t in graph.initializer}
        inputs = []
        for entry in graph.input:
            if entry.name in weights:
                continue
            tensor = entry.type.tensor_type
            shape = tuple(
                d.dim_value
                if d.HasField("dim_value")
                else _symbol(d.dim_param or f"{entry.name}_{axis}")
                for axis, d in enumerate(tensor.shape.dim)
            )
            inputs.append((entry.name, shape, np_dtype(tensor.elem_type, f"input '{entry.name}'")))
        return inputs

    def input_spec(self, model, input_spec, default_dtype: str) -> dict:
        """Given specs win; the other inputs keep their declared shapes, symbols included."""
        from ...frontend import InputSpecError, TensorSpec, _normalize_dtype, _normalize_spec

        declared = self.declared_inputs(model)
        names = [name for name, _, _ in declared]
        given: dict = {}
        if isinstance(input_spec, Mapping):
            unknown = [key for key in input_spec if key not in names]
            if unknown:
                raise InputSpecError(
                    f"{self.api}: input_spec names {unknown}, which are not inputs of "
                    f"{self.load(model).label}; its inputs are {names}"
                )
            given = dict(input_spec)
        elif isinstance(input_spec, Sequence) and not isinstance(input_spec, str):
            if len(input_spec) > len(names):
                raise InputSpecError(
                    f"{self.api}: input_spec lists {len(input_spec)} specs but "
                    f"{self.load(model).label} has {len(names)} input(s): {names}"
                )
            given = dict(zip(names, input_spec))
        elif input_spec is not None:
            raise InputSpecError(
                f"{self.api}: input_spec for an ONNX model is a mapping of input names to "
                f"shapes/specs, a list of specs, or None; got a {type(input_spec).__name__}"
            )
        specs = {}
        for name, shape, dtype in declared:
            if name in given:
                specs[name] = _normalize_spec(name, given[name], dtype.name)
            else:
                specs[name] = TensorSpec(shape, _normalize_dtype(dtype, f"input '{name}'"))
        return specs

    def describe(self, model) -> tuple[str, str]:
        loaded = self.load(model)
        if loaded.path is not None:
            return loaded.path.stem, str(loaded.path)
        return loaded.proto.graph.name or "onnx_model", loaded.label

    def import_model(self, model, input_spec: Mapping, mode: str = "inference"):
        from .importer import import_graph

        loaded = self.load(model)
        if mode == "training":
            raise ValueError(
                f"{self.api}: mode='training' is not supported for ONNX models "
                f"({loaded.label}): the importer builds inference graphs only (Dropout is "
                "dropped, BatchNormalization uses its running statistics). Fix: use "
                "mode='inference'."
            )
        return import_graph(loaded, input_spec, self.describe(model)[0])


def _symbol(text: str) -> str:
    """``text`` as a symbol name (a Python identifier): other characters become ``_``."""
    name = re.sub(r"\W", "_", text)
    return name if name.isidentifier() else f"d_{name}"


def load_onnx(path_or_bytes, *, use_mmap: bool = False, input_spec=None, target=None):
    """Import an ONNX model as a :class:`cuvil.IRModule` for inference.

    Args:
        path_or_bytes: a path to an ``.onnx`` file (``str`` or ``PathLike``),
            the serialized model as ``bytes``, or an ``onnx.ModelProto``.
        use_mmap: memory-map the file instead of reading it, and map external
            data files (weights saved next to the model) read-only when a
            tensor is used instead of reading them all up front: large models
            then cost no extra copy until their weights become IR constants.
        input_spec: optional; by default the graph's declared input shapes are
            used, and their symbolic dims (``dim_param``) stay symbolic: one
            compilation then serves every size. Give a mapping ``{name: shape}``
            (or ``cuvil.TensorSpec``) to import some inputs with static shapes.
        target: as for ``cuvil.frontend.build_ir`` (default: the default target).

    Raises :class:`cuvil.frontends.onnx.OnnxModelError` (a ``ValueError``)
    naming the file for missing, truncated or corrupted files,
    :class:`cuvil.UnsupportedConstructError` naming the op type, node name and
    file for operators Cuvil does not import or a node that needs a static size
    where the model has a symbolic one (it names the dim; fix: a static ``input_spec``).
    """
    from ...frontend import build_ir_with

    frontend = OnnxFrontEnd(use_mmap=use_mmap, api="cuvil.load_onnx")
    return build_ir_with(frontend, path_or_bytes, input_spec, target=target)
