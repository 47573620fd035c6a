"""Keras layer names and the user's source lines for the graph ops of a Keras model.

A Keras model is imported by tracing ``model(x, training=False)`` in a
``tf.function`` made by Cuvil, so the function's own definition is Cuvil's
code. Instead, each op gets ``NameLoc(<op name in its layer>, NameLoc(<layer
path>, <user's line>))``, e.g. ``loc("MatMul"("sequential/dense"("model.py":
14:0)))``, whose node name is ``"sequential/dense/MatMul"``:

* the layer path comes from recording, while the model is traced, which layer
  each graph name scope belongs to (graph scopes are numbered per process:
  ``sequential_1/dense_2`` is layer ``dense`` of ``sequential``);
* the line is the innermost frame of the op's creation traceback
  (``op.traceback``) outside TensorFlow, Keras, Cuvil and the standard
  library: the line in a user's ``call`` that made the op, else the model's
  ``call`` definition, else the line that asked Cuvil to import the model.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import sysconfig

from ..._source import SourceLoc, _is_internal, function_location, user_location
from ..locations import UNKNOWN, NameLoc

__all__ = ["KerasLayers", "model_class_location"]

# Packages whose frames are the framework's, not the user's.
_FRAMEWORKS = ("tensorflow", "keras", "tf_keras", "optree", "absl")


@functools.lru_cache(maxsize=1)
def _framework_dirs() -> tuple[str, ...]:
    dirs = [os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep]
    for name in _FRAMEWORKS:
        file = getattr(sys.modules.get(name), "__file__", None)
        if file:
            dirs.append(os.path.dirname(os.path.abspath(file)) + os.sep)
    return tuple(dirs)


@functools.lru_cache(maxsize=1024)
def _is_users(filename: str) -> bool:
    """Whether ``filename`` is user code: not a framework's, Cuvil's or generated code."""
    if filename.startswith("<"):
        return not filename.startswith("<frozen")
    if "__autograph_generated_file" in filename:
        return False
    path = os.path.abspath(filename)
    return not path.startswith(_framework_dirs()) and not _is_internal(path)


def _user_frame(op) -> SourceLoc | None:
    """The innermost frame of ``op``'s creation traceback in user code, if any."""
    for frame in reversed(op.traceback or ()):
        if _is_users(frame.filename):
            file = frame.filename
            return SourceLoc(file if file.startswith("<") else os.path.abspath(file), frame.lineno)
    return None


def model_class_location(model) -> SourceLoc | None:
    """The ``def call`` of ``model``'s class if the user wrote it (not a Keras class)."""
    try:
        file = inspect.getsourcefile(type(model))
    except TypeError:
        file = None
    if file and _is_users(file):
        return function_location(type(model).call)
    return None


def _importing_line():
    """The user's line importing the model; unknown where Cuvil's code did (``cuvil compile``)."""
    loc = user_location()
    return loc if loc.line and _is_users(loc.file) else UNKNOWN


class KerasLayers:
    """Which Keras layer made each graph op of a traced Keras model, and where."""

    def __init__(self, model):
        self.model = model
        #: Where ops without a user frame point: the model's ``def call``, else
        #: the line importing the model.
        self.source = model_class_location(model) or _importing_line()
        self._scopes: dict[str, str] = {}  # graph name scope -> layer path

    @contextlib.contextmanager
    def recording(self):
        """Trace the model inside this block: every layer's calls record their graph scope.

        Each layer's ``call`` is shadowed on the instance for the block's
        duration and restored afterwards, so the model is left as it was.
        """
        import tensorflow as tf

        path: list[str] = []
        patched = []

        def wrap(layer, call):
            @functools.wraps(call)
            def recorded(*args, **kwargs):
                path.append(layer.name)
                scope = tf.compat.v1.get_default_graph().get_name_scope()
                self._scopes.setdefault(scope, "/".join(path))
                try:
                    return call(*args, **kwargs)
                finally:
                    path.pop()

            return recorded

        try:
            for layer in self.model._flatten_layers(include_self=True, recursive=True):
                own = layer.__dict__.get("call")
                object.__setattr__(layer, "call", wrap(layer, layer.call))
                patched.append((layer, own))
            yield self
        finally:
            for layer, own in patched:
                if own is None:
                    object.__delattr__(layer, "call")
                else:
                    object.__setattr__(layer, "call", own)

    def locate(self, op) -> tuple[str, object]:
        """``(node name, its location)`` for ``builder.node`` of graph op ``op``."""
        where = _user_frame(op) or self.source
        scope = op.name.rpartition("/")[0]
        while scope:
            layer = self._scopes.get(scope)
            if layer is not None:
                return op.name[len(scope) + 1 :], NameLoc(layer, where)
            scope = scope.rpartition("/")[0]
        return op.name, where
