"""Files a target writes for deploying a compiled function into a folder (the c target:
``<name>.c`` and ``.h``; the wasm target: ``<name>.wasm`` and the ES module ``<name>.mjs``)."""

from __future__ import annotations

import os

from ._targets import artifact_extensions

# Artifact kinds written together into one folder, each named after the function.
SOURCE_KINDS = ("c", "h", "wasm", "mjs")


def source_kinds(record) -> list[str]:
    """The deployment files ``record``'s target writes (empty: it writes none)."""
    return [kind for kind in SOURCE_KINDS if kind in record.compiled.artifacts]


def export_sources(record, directory) -> list[str]:
    """Write ``record``'s deployment files into ``directory`` (created if missing), each
    named after the compiled function (``mlp.c`` and ``mlp.h``; ``mlp.wasm`` and
    ``mlp.mjs``, which loads it); the paths."""
    kinds = source_kinds(record)
    if not kinds:
        raise ValueError(
            f"the {record.target} target writes no source files (it writes "
            f"{', '.join(record.compiled.artifacts)}); compile with target='c' for C or "
            "target='wasm' for WebAssembly"
        )
    os.makedirs(directory, exist_ok=True)
    extensions = artifact_extensions()
    paths = []
    for kind in kinds:
        path = os.path.join(directory, record.func_name + extensions[kind])
        record.compiled.emit(kind, path)
        paths.append(path)
    return paths
