"""Registers ``"cuvil"`` as a ``torch.compile`` backend, whether ``torch`` or ``cuvil`` comes first.

Dynamo's backend registry (``torch._dynamo.backends.registry``) is imported
lazily, by the first ``torch.compile``, not by ``import torch``. So at
``import cuvil`` the backend is registered at once if the registry is loaded,
and otherwise a meta-path finder registers it right after the registry module
executes. The finder then removes itself; no PyTorch module is imported early.
(The ``torch_dynamo_backends`` entry point would need Cuvil installed by pip;
this works from a source tree too.)
"""

from __future__ import annotations

import importlib.abc
import sys

__all__ = ["BACKEND_NAME", "install", "registered"]

BACKEND_NAME = "cuvil"
_REGISTRY_MODULE = "torch._dynamo.backends.registry"


def _backend(graph_module, example_inputs, **options):
    # Imported on first use: the backend module imports PyTorch.
    from .dynamo import cuvil_backend

    return cuvil_backend(graph_module, example_inputs, **options)


def _register(registry) -> None:
    if BACKEND_NAME not in getattr(registry, "_COMPILER_FNS", {}):
        registry.register_backend(compiler_fn=_backend, name=BACKEND_NAME)


def registered() -> bool:
    """Whether Dynamo's registry (if loaded) has the backend, or will get it when it loads."""
    registry = sys.modules.get(_REGISTRY_MODULE)
    if registry is None:
        return any(isinstance(f, _RegisterOnImport) for f in sys.meta_path)
    return BACKEND_NAME in getattr(registry, "_COMPILER_FNS", {})


class _RegisteringLoader(importlib.abc.Loader):
    """Runs the registry module with its own loader, then registers the backend in it."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _register(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Finds Dynamo's registry module with the other finders and wraps its loader."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _REGISTRY_MODULE:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(fullname, path, target) if find_spec else None
            if spec is not None and spec.loader is not None:
                spec.loader = _RegisteringLoader(spec.loader)
                return spec
        return None


def install() -> None:
    """Make ``torch.compile(..., backend="cuvil")`` work now or once Dynamo loads."""
    registry = sys.modules.get(_REGISTRY_MODULE)
    if registry is not None:
        _register(registry)
    elif not registered():
        sys.meta_path.insert(0, _RegisterOnImport())
