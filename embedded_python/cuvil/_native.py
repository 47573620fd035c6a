"""Loading the compiled extension ``cuvil._cuvil`` so that it keeps to its own LLVM.

TensorFlow (and other frameworks that bundle LLVM or MLIR) load their copies
with their symbols in the process's global scope. A library loaded after them
normally binds to the first definition of each symbol, so Cuvil's LLVM 19
would call into TensorFlow's LLVM and crash. Loading the extension with
``RTLD_DEEPBIND`` makes it and its dependencies prefer their own definitions,
whatever was imported before. ``CUVIL_DEEPBIND=0`` turns this off (address
sanitizer builds cannot use it). ``CUVIL_EXTENSION_DIR`` names a folder holding
another build of the extension to load instead (``make test-asan``'s).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading

__all__ = ["load"]

_lock = threading.Lock()
_module = None


def load():
    """The ``cuvil._cuvil`` module, imported once with the right loader flags."""
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            _module = _import()
    return _module


def _import():
    deepbind = getattr(os, "RTLD_DEEPBIND", 0)
    if os.environ.get("CUVIL_DEEPBIND", "1") == "0" or "cuvil._cuvil" in sys.modules:
        deepbind = 0
    flags = sys.getdlopenflags()
    if deepbind:
        sys.setdlopenflags(os.RTLD_NOW | os.RTLD_LOCAL | deepbind)
    try:
        folder = os.environ.get("CUVIL_EXTENSION_DIR")
        if folder and "cuvil._cuvil" not in sys.modules:
            return _import_from(folder)
        return importlib.import_module("cuvil._cuvil")
    except ImportError as error:
        raise ImportError(
            f"cuvil: the compiler extension cuvil._cuvil is not available ({error}). "
            "Build it by running `make` at the root of the Cuvil source tree."
        ) from error
    finally:
        sys.setdlopenflags(flags)


def _import_from(folder: str):
    """``cuvil._cuvil`` from the build in ``folder`` (CUVIL_EXTENSION_DIR)."""
    import glob
    import importlib.util

    found = sorted(glob.glob(os.path.join(folder, "_cuvil*.so")))
    if not found:
        raise ImportError(f"CUVIL_EXTENSION_DIR={folder} holds no _cuvil*.so")
    spec = importlib.util.spec_from_file_location("cuvil._cuvil", found[0])
    module = importlib.util.module_from_spec(spec)
    sys.modules["cuvil._cuvil"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["cuvil._cuvil"]
        raise
    return module
