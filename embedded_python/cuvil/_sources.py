"""Source files a target writes for a compiled function (the c target: ``<name>.c``, ``.h``)."""

from __future__ import annotations

import os

from ._targets import artifact_extensions

# Artifact kinds that are source files, written together into one folder.
SOURCE_KINDS = ("c", "h")


def source_kinds(record) -> list[str]:
    """The source files ``record``'s target writes (empty: it writes none)."""
    return [kind for kind in SOURCE_KINDS if kind in record.compiled.artifacts]


def export_sources(record, directory) -> list[str]:
    """Write ``record``'s source files into ``directory`` (created if missing), each named
    after the compiled function (``mlp.c``, ``mlp.h``, which includes it); the paths."""
    kinds = source_kinds(record)
    if not kinds:
        raise ValueError(
            f"the {record.target} target writes no source files (it writes "
            f"{', '.join(record.compiled.artifacts)}); compile with target='c' for C"
        )
    os.makedirs(directory, exist_ok=True)
    extensions = artifact_extensions()
    paths = []
    for kind in kinds:
        path = os.path.join(directory, record.func_name + extensions[kind])
        record.compiled.emit(kind, path)
        paths.append(path)
    return paths
