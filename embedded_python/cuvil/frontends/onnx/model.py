"""Reading ONNX models (path, bytes or ModelProto) with errors that name the file and the problem.

Also turns initializers into NumPy arrays, reading external data eagerly or,
with ``use_mmap``, through read-only memory maps opened when a tensor is
first used, and reads the graph's declared inputs.
"""

from __future__ import annotations

import mmap
import os
import pathlib
from dataclasses import dataclass

import numpy as np

__all__ = ["OnnxModelError", "LoadedModel", "load", "is_onnx_model", "tensor_to_array", "np_dtype"]


class OnnxModelError(ValueError):
    """An ONNX model that cannot be read: the message names the file and what is wrong."""


def is_onnx_model(model) -> bool:
    """A path ending in ``.onnx``, serialized bytes, or an ``onnx.ModelProto`` (cheap check)."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model).lower().endswith(".onnx")
    if isinstance(model, (bytes, bytearray, memoryview)):
        return True
    onnx = _imported_onnx()
    return onnx is not None and isinstance(model, onnx.ModelProto)


def _imported_onnx():
    import sys

    return sys.modules.get("onnx")


@dataclass
class LoadedModel:
    """A parsed model, where it came from (``label`` for messages), and how to read its data."""

    proto: object
    label: str
    path: pathlib.Path | None = None
    use_mmap: bool = False

    @property
    def base_dir(self) -> pathlib.Path | None:
        return None if self.path is None else self.path.parent

    @property
    def opset(self) -> int:
        """The default domain's opset version (1 if the model declares none)."""
        for entry in self.proto.opset_import:
            if entry.domain in ("", "ai.onnx"):
                return int(entry.version)
        return 1


def load(model, *, use_mmap: bool = False, api: str = "cuvil.load_onnx") -> LoadedModel:
    """Parse ``model`` (a path, bytes or ``onnx.ModelProto``) and check it is a usable model.

    With ``use_mmap`` a file is memory-mapped for parsing and its external
    data files are mapped, not read, when a tensor is used. Raises
    :class:`OnnxModelError` naming the file and the problem (missing,
    truncated, not ONNX, invalid graph).
    """
    import onnx

    if isinstance(model, onnx.ModelProto):
        loaded = LoadedModel(model, f"<onnx.ModelProto {model.graph.name or 'graph'}>")
    elif isinstance(model, (bytes, bytearray, memoryview)):
        loaded = LoadedModel(_parse(bytes(model), f"<{len(model)} bytes>", api), "<bytes>")
    else:
        path = pathlib.Path(os.fspath(model))
        loaded = LoadedModel(_read_file(path, use_mmap, api), str(path), path, use_mmap)
    _check(loaded, api)
    return loaded


def _read_file(path: pathlib.Path, use_mmap: bool, api: str):
    try:
        with open(path, "rb") as file:
            if not use_mmap:
                return _parse(file.read(), str(path), api)
            if os.fstat(file.fileno()).st_size == 0:
                return _parse(b"", str(path), api)
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                view = memoryview(mapped)
                try:
                    return _parse(view, str(path), api)
                finally:
                    view.release()
    except FileNotFoundError:
        raise OnnxModelError(f"{api}: {path}: no such file") from None
    except IsADirectoryError:
        raise OnnxModelError(f"{api}: {path} is a directory, not an .onnx file") from None
    except PermissionError as error:
        raise OnnxModelError(f"{api}: {path}: cannot read it ({error.strerror})") from None


def _parse(data, label: str, api: str):
    import onnx
    from google.protobuf.message import DecodeError

    if len(data) == 0:
        raise OnnxModelError(f"{api}: {label} is empty (0 bytes), not an ONNX model")
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as error:
        raise OnnxModelError(
            f"{api}: {label} is not a valid ONNX model: the protobuf data cannot be decoded "
            f"({error}); the file is truncated or corrupted, or not an .onnx file. Fix: export "
            "the model again or copy the complete file."
        ) from None
    return proto


def _check(loaded: LoadedModel, api: str) -> None:
    import onnx

    proto, label = loaded.proto, loaded.label
    if not proto.HasField("graph") or (not proto.graph.node and not proto.graph.output):
        raise OnnxModelError(
            f"{api}: {label} holds no ONNX graph (no nodes, no outputs); it is truncated, "
            "corrupted or not an ONNX model"
        )
    external = [t.name for t in proto.graph.initializer if t.data_location == t.EXTERNAL]
    if external and loaded.path is None:
        raise OnnxModelError(
            f"{api}: {label} keeps tensor '{external[0]}' in an external data file, which a "
            "model given as bytes or a proto cannot locate; fix: load the model from its "
            ".onnx path"
        )
    try:
        # With external data the checker resolves the data files next to the model's path.
        onnx.checker.check_model(str(loaded.path) if external else proto)
    except Exception as error:  # hostile bytes also raise UnicodeDecodeError and others
        first = (str(error).strip().splitlines() or [type(error).__name__])[0].rstrip(".")
        raise OnnxModelError(
            f"{api}: {label} is not a valid ONNX model: {first}. It may be truncated or "
            "corrupted; onnx.checker.check_model gives the details."
        ) from None
    _check_names(proto.graph, f"{api}: {label}")
    produced = {name for node in proto.graph.node for name in node.output}
    produced |= {i.name for i in proto.graph.input} | {t.name for t in proto.graph.initializer}
    for output in proto.graph.output:
        if output.name not in produced:
            raise OnnxModelError(
                f"{api}: {label}: graph output '{output.name}' is produced by no node; the "
                "file is truncated or the graph is incomplete"
            )


def _check_names(graph, where: str) -> None:
    """Refuse a graph whose names or op types are not text (invalid UTF-8 reads as bytes)."""
    named = [
        ("the graph", [graph.name]),
        *(
            (f"node {i} ({n.op_type!r})", [n.name, n.op_type, n.domain, *n.input, *n.output])
            for i, n in enumerate(graph.node)
        ),
        *(
            (f"value {v.name!r}", [v.name, *(d.dim_param for d in v.type.tensor_type.shape.dim)])
            for v in [*graph.input, *graph.output]
        ),
        *((f"initializer {t.name!r}", [t.name]) for t in graph.initializer),
    ]
    for what, texts in named:
        if any(not isinstance(text, str) for text in texts):
            raise OnnxModelError(
                f"{where}: {what} has a name that is not valid UTF-8 text; the file is corrupted"
            )


def np_dtype(elem_type: int, what: str) -> np.dtype:
    """The NumPy dtype of an ONNX element type; ``OnnxModelError`` naming ``what`` otherwise."""
    from onnx import helper

    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        raise OnnxModelError(
            f"{what} has ONNX element type {elem_type}, which NumPy lacks"
        ) from None


def tensor_to_array(tensor, loaded: LoadedModel) -> np.ndarray:
    """An initializer or constant tensor as a NumPy array (external data read or mapped)."""
    from onnx import TensorProto, numpy_helper

    if tensor.data_location != TensorProto.EXTERNAL:
        try:
            return numpy_helper.to_array(tensor)
        except (ValueError, TypeError, KeyError, MemoryError) as error:
            raise OnnxModelError(
                f"{loaded.label}: tensor '{tensor.name}' (element type {tensor.data_type}, "
                f"shape {tuple(tensor.dims)}) holds data that does not make that tensor "
                f"({type(error).__name__}: {error}); the file is truncated or corrupted"
            ) from None
    info = {entry.key: entry.value for entry in tensor.external_data}
    if loaded.base_dir is None:
        raise OnnxModelError(
            f"{loaded.label}: tensor '{tensor.name}' keeps its data in the external file "
            f"'{info.get('location')}', which a model given as bytes or a proto cannot locate; "
            "fix: load the model from its .onnx path"
        )
    path = loaded.base_dir / info["location"]
    dtype = np_dtype(tensor.data_type, f"tensor '{tensor.name}'")
    shape = tuple(tensor.dims)
    offset = int(info.get("offset", 0))
    count = int(np.prod(shape, dtype=np.int64))
    if not path.is_file():
        raise OnnxModelError(
            f"{loaded.label}: the external data file {path} of tensor '{tensor.name}' is missing"
        )
    if path.stat().st_size < offset + count * dtype.itemsize:
        raise OnnxModelError(
            f"{loaded.label}: the external data file {path} is too short for tensor "
            f"'{tensor.name}' (needs {offset + count * dtype.itemsize} bytes); it is truncated"
        )
    if loaded.use_mmap:
        return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape)
    with open(path, "rb") as file:
        file.seek(offset)
        return np.frombuffer(file.read(count * dtype.itemsize), dtype=dtype).reshape(shape)
