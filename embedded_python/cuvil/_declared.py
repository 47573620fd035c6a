"""The model a Python file declares, compiled for ``cuvil compile FILE.py`` and the Workbench.

A file declares a model with a function ``cuvil_model()`` returning
``(model, example_inputs)``, or with module-level variables ``model`` and
``example_inputs``. ``model`` is anything a registered front end other than
the NumPy tracer imports: a ``torch.nn.Module``, a ``jax.jit`` function, a
``tf.function`` or Keras model, an ONNX path. ``example_inputs`` is a tensor
or a tuple of tensors of the model's framework (or NumPy arrays).
"""

from __future__ import annotations

import ast
import contextlib
import os
import sys
from pathlib import Path

import numpy as np

from ._jit import set_snapshot_capture, snapshot_capture_enabled
from ._source import SourceLoc, declared_at, function_location


class DeclarationError(ValueError):
    """``cuvil_model()`` returned something else than ``(model, example_inputs)``."""


class DeclaredModel:
    """A declared model compiled for its example inputs.

    Attributes:
        model, examples: as the file declared them (``examples`` as a tuple).
        compiled: the :class:`cuvil.frontend.CompiledModel`.
        frontend: the name of the front end that imported it (``"torch"``, ...).
        framework: what :meth:`reference` runs (``"PyTorch"``, ``"ONNX Runtime"``, ...).
    """

    _FRAMEWORKS = {
        "torch": "PyTorch",
        "jax": "JAX",
        "tensorflow": "TensorFlow",
        "onnx": "ONNX Runtime",
    }

    def __init__(self, model, examples: tuple, compiled, frontend: str):
        self.model = model
        self.examples = examples
        self.compiled = compiled
        self.frontend = frontend
        self.framework = self._FRAMEWORKS.get(frontend, frontend)

    def inputs(self) -> list[np.ndarray]:
        """The example inputs as NumPy arrays, in the compiled function's order."""
        return [_to_numpy(example) for example in self.examples]

    def reference(self, inputs: list[np.ndarray]):
        """The framework's own outputs for ``inputs`` (NumPy arrays), as NumPy arrays."""
        if self.frontend == "onnx":
            return onnx_runtime_call(self.model, list(self.compiled.input_spec))(inputs)
        arguments = [_like(example, value) for example, value in zip(self.examples, inputs)]
        return _outputs_to_numpy(_framework_call(self.model, arguments))


def declaration(namespace: dict, path: str):
    """``(model, example_inputs)`` the file's globals declare, or None when they declare none.

    Raises :class:`DeclarationError` naming the file when ``cuvil_model()``
    returns something else than a pair.
    """
    if callable(namespace.get("cuvil_model")):
        declared = namespace["cuvil_model"]()
        if not (isinstance(declared, tuple) and len(declared) == 2):
            raise DeclarationError(
                f"{path}: cuvil_model() returned {type(declared).__name__!r}; it must return "
                "(model, example_inputs), e.g. (MyNet().eval(), (torch.randn(1, 3, 32, 32),))"
            )
        return declared
    if "model" in namespace and "example_inputs" in namespace:
        return namespace["model"], namespace["example_inputs"]
    return None


def declaration_line(namespace: dict, path: str) -> SourceLoc | None:
    """Where the file declares its model: ``def cuvil_model`` or the last top-level
    assignment to ``model``."""
    if callable(namespace.get("cuvil_model")):
        return function_location(namespace["cuvil_model"])
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), path)
    except (OSError, SyntaxError, ValueError):
        return None
    lines = [
        node.lineno
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        and any(
            isinstance(t, ast.Name) and t.id == "model"
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    ]
    return SourceLoc(os.path.abspath(path), lines[-1]) if lines else None


def compile_declared(namespace: dict, path: str, optimize=None) -> DeclaredModel | None:
    """Import and compile (with pass snapshots) the model the file's globals declare.

    None when they declare none, or when ``model`` is a plain callable (the
    NumPy tracer's, which the script compiles itself with ``@cuvil.jit``) or
    an object no front end imports. ``optimize``: keyword arguments of
    :meth:`IRModule.optimize` (a precision or quantization) applied before
    compiling. Import and compile errors propagate.
    """
    declared = declaration(namespace, path)
    if declared is None:
        return None
    model, examples = declared
    from . import frontend, frontends

    try:
        chosen = frontends.for_model(model)
    except TypeError:
        return None  # `model` is some other object of the script
    if chosen.name == "numpy":
        return None  # a plain callable named `model`: the script's own business
    examples = tuple(examples) if isinstance(examples, (tuple, list)) else (examples,)
    saved_capture = snapshot_capture_enabled()
    set_snapshot_capture(True)
    try:
        with contextlib.redirect_stdout(sys.stderr), declared_at(declaration_line(namespace, path)):
            spec = None if chosen.name == "onnx" and not examples else list(examples)
            module = frontend.build_ir(model, spec)
            compiled = (module.optimize(**optimize) if optimize else module).compile()
    finally:
        set_snapshot_capture(saved_capture)
    return DeclaredModel(model, examples, compiled, chosen.name)


def _to_numpy(value) -> np.ndarray:
    """A framework tensor (torch, JAX, TensorFlow) or array-like as a NumPy array."""
    if hasattr(value, "detach"):  # torch.Tensor
        value = value.detach().cpu()
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        return np.array(value.numpy(), copy=True)
    return np.array(value, copy=True)


def _like(example, value: np.ndarray):
    """``value`` as a tensor of ``example``'s framework (NumPy when it is no tensor)."""
    kind = type(example).__module__.split(".", 1)[0]
    if kind == "torch":
        import torch

        return torch.from_numpy(np.array(value, copy=True))
    if kind in ("jax", "jaxlib"):
        import jax.numpy as jnp

        return jnp.asarray(value)
    if kind in ("tensorflow", "tf_keras", "keras"):
        import tensorflow as tf

        return tf.convert_to_tensor(value)
    return value


def _framework_call(model, arguments: list):
    """``model(*arguments)`` for inference: a torch module in eval mode without autograd,
    a Keras model with ``training=False``."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(model, torch.nn.Module):
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                return model(*arguments)
        finally:
            model.train(was_training)
    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(model, tf.keras.Model):
        return model(arguments[0] if len(arguments) == 1 else arguments, training=False)
    return model(*arguments)


def _outputs_to_numpy(value):
    if isinstance(value, (tuple, list)):
        return tuple(_outputs_to_numpy(item) for item in value)
    if isinstance(value, dict):
        return {key: _outputs_to_numpy(item) for key, item in value.items()}
    return _to_numpy(value)


def onnx_runtime_call(model, input_names: list[str]):
    """``inputs -> outputs`` of an ONNX model (a path, its bytes or a ModelProto) in ONNX
    Runtime, the reference Cuvil's results are compared with."""
    import onnxruntime

    if isinstance(model, (str, os.PathLike)):
        source = os.fspath(model)
    else:
        source = model if isinstance(model, bytes) else model.SerializeToString()
    session = onnxruntime.InferenceSession(source, providers=["CPUExecutionProvider"])
    return lambda inputs: tuple(session.run(None, dict(zip(input_names, inputs))))
