"""Targets, devices and the compiler's name tables, read from the compiler.

Python keeps no list of its own: the registered targets, the pipeline
phases, the IR stages and the artifact kinds all come from the C++ tables
(``cuvil/Pipelines/Phases.h`` and the target registry), so a new backend or
stage shows up here without a Python change.
"""

from __future__ import annotations

import os

from ._jit import _extension

__all__ = [
    "available_targets",
    "artifact_extensions",
    "artifact_kinds",
    "binary_artifact_kinds",
    "default_target",
    "set_default_target",
    "set_target_override",
    "load_target_plugin",
    "parse_device",
    "phases",
    "resolve_target",
]


def available_targets() -> list[str]:
    """Names of the registered targets, e.g. ``["cpu"]``; ``target=`` takes these."""
    return [name for name, _description, _devices in _extension().available_targets()]


def parse_device(device: str) -> tuple[str, int]:
    """``"cuda:1"`` -> ``("cuda", 1)``; ``"cpu"`` -> ``("cpu", 0)``.

    Raises ``ValueError`` listing the registered targets when ``device``
    names none, or the target's devices when the index is out of range.
    """
    if not isinstance(device, str):
        raise TypeError(f"a device is a string such as 'cpu' or 'cuda:0', not {device!r}")
    return tuple(_extension().parse_device(device))


_default_target = os.environ.get("CUVIL_TARGET", "").strip() or "cpu"


def default_target() -> str:
    """The target of ``jit``/``build_ir``/``PipelineBuilder`` calls that name none.

    ``"cpu"`` unless the ``CUVIL_TARGET`` environment variable,
    ``cuvil compile --target`` or :func:`set_default_target` chose another.
    """
    return _default_target


def set_default_target(target: str) -> str:
    """Sets the default target (checked against the registry); returns the previous one."""
    global _default_target
    parse_device(target)
    previous, _default_target = _default_target, target
    return previous


_target_override: str | None = None


def set_target_override(target: str | None) -> str | None:
    """Make every compilation use ``target``, even one naming another (``cuvil compile
    --target``: the command line beats the file's decorators); ``None`` ends it. Returns the
    previous override."""
    global _target_override
    if target is not None:
        parse_device(target)
    previous, _target_override = _target_override, target
    return previous


def resolve_target(target: str | None, api: str) -> tuple[str, int]:
    """``parse_device`` with the error prefixed by the API that was called.

    ``None`` means :func:`default_target`; an override (:func:`set_target_override`)
    replaces any target.
    """
    if _target_override is not None:
        target = _target_override
    elif target is None:
        target = _default_target
    try:
        return parse_device(target)
    except (ValueError, TypeError) as error:
        raise type(error)(f"{api}: {error}") from None


_unavailable: dict[tuple[str, int], str | None] = {}


def unavailable_reason(target: str, device: int = 0) -> str | None:
    """Why code compiled for ``target`` device ``device`` cannot run in this process
    (no GPU driver, no device), or ``None`` when it can. Asked once per device."""
    key = (target, device)
    if key not in _unavailable:
        _unavailable[key] = _extension().target_unavailable_reason(target, device) or None
    return _unavailable[key]


def compiling_only() -> bool:
    """True while ``cuvil compile --target`` runs a file to compile its functions: calls
    that cannot run on that target run the Python function instead."""
    return _target_override is not None


def load_target_plugin(path: str) -> list[str]:
    """Loads a target plugin (a shared library; see ``cuvil/Target/TargetPlugin.h``).

    Returns the names of the targets now available.
    """
    _extension().load_target_plugin(str(path))
    return available_targets()


def phases() -> list[str]:
    """Pipeline phase names in run order (``"cuvil"``, ``"linalg"``, ...)."""
    return [name for name, _description, _neutral in _extension().phases()]


def artifact_kinds() -> tuple[str, ...]:
    """Every artifact kind name ``emit`` may write (targets write a subset)."""
    return tuple(row[0] for row in _extension().artifact_kinds())


def artifact_extensions() -> dict[str, str]:
    """Each artifact kind's file name extension, with the dot (``{"c": ".c", ...}``)."""
    return {row[0]: row[2] for row in _extension().artifact_kinds()}


def binary_artifact_kinds() -> tuple[str, ...]:
    """Artifact kinds that are binary files (never printed to a terminal)."""
    return tuple(row[0] for row in _extension().artifact_kinds() if row[3])
