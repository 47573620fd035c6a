"""IR packages (``.irpkg``) and executable packages (``.cuvil``): writing and reading.

The container, its checks and the code loading are C++ (``cuvil._cuvil.packages``;
the format is specified in ``docs/irpkg.md``). This module turns an
:class:`~cuvil.IRModule` or :class:`~cuvil.frontend.CompiledModel` into the
metadata those packages carry, and an IR package back into an ``IRModule``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile

import numpy as np

from . import _native
from ._dtypes import dtype_from_name
from ._program import TracedProgram

__all__ = [
    "PackageError",
    "save_irpkg",
    "save_record_irpkg",
    "load_irpkg",
    "export_executable",
    "export_record",
    "package_kinds",
    "translated",
]

#: The name an exported model's entry function has in every executable package.
ENTRY = "main"


def _packages():
    return _native.load().packages


class PackageError(ValueError):
    """A package is damaged, of another kind, from a newer Cuvil, or does not describe its
    contents; the message names the file, the field and what was wrong."""


@contextlib.contextmanager
def translated():
    """Raises the extension's package errors as :class:`PackageError` (same message)."""
    try:
        yield
    except _packages().PackageError as error:
        raise PackageError(str(error)) from None


def package_kinds(artifacts) -> list[str]:
    """What a compiled function with these target artifacts can be packaged as: an IR
    package always, an executable package where the target writes loadable code."""
    return (["cuvil"] if "so" in artifacts else []) + ["irpkg"]


def _shape(shape) -> list:
    return [d if isinstance(d, (int, str)) or d is None else int(d) for d in shape]


def _dtype_name(dtype) -> str:
    return dtype if isinstance(dtype, str) else np.dtype(dtype).name


def _module_metadata(module) -> dict:
    """What a package records of ``module`` beyond its IR: the model's dtypes and
    symbolic sizes (output sizes as expressions of the input symbols)."""
    program = module._program
    return {
        "name": module.name,
        "func_name": program.func_name,
        "source": module.source,
        "target": module.target,
        "device": module.device,
        "mode": module.mode,
        "structure": program.structure,
        "inputs": [
            {
                "name": key,
                "dtype": _dtype_name(spec.dtype),
                "compute_dtype": dtype.name,
                "shape": _shape(spec.shape),
            }
            for (key, spec), (dtype, _) in zip(module.input_spec.items(), program.inputs)
        ],
        "outputs": [
            {
                "dtype": _dtype_name(spec.dtype),
                "compute_dtype": dtype.name,
                "shape": _shape(spec.shape),
            }
            for spec, (dtype, _) in zip(module.output_spec, program.outputs)
        ],
        "symbol_ranges": {k: list(v) for k, v in program.symbol_ranges.items()},
    }


def _record_module(record):
    """The :class:`~cuvil.IRModule` of a compilation record (a ``cuvil.jit`` function or a
    declared model), built as every front end builds one."""
    from .frontends.base import to_ir_module

    program = record.program
    if program is None:
        raise PackageError(
            f"cuvil: {record.function}: this compilation keeps no program to package"
        )
    if not program.input_names:
        names = [f"arg{i}" for i in range(len(program.inputs))]
        program = dataclasses.replace(program, input_names=names)
    return to_ir_module(
        program,
        name=record.function,
        source=record.source,
        target=record.target,
        device=record.device,
    )


def save_irpkg(module, path) -> None:
    """Write ``module``'s IR, signature and fingerprint as an IR package at ``path``."""
    with translated():
        _packages().save_irpkg(module.text, json.dumps(_module_metadata(module)), os.fspath(path))


def save_record_irpkg(record, path) -> None:
    """Write the IR of a compilation record as an IR package (``cuvil compile --emit irpkg``)."""
    save_irpkg(_record_module(record), path)


def _field(metadata: dict, key: str, kind, path: str):
    value = metadata.get(key)
    if not isinstance(value, kind):
        raise PackageError(
            f"{path}: metadata field {key}: missing or not a {getattr(kind, '__name__', kind)}"
        )
    return value


def _dims(shape, path: str, what: str) -> tuple:
    if not isinstance(shape, list) or not all(
        d is None or isinstance(d, str) or (isinstance(d, int) and d >= 0) for d in shape
    ):
        raise PackageError(f"{path}: metadata field {what}.shape: not a list of sizes and symbols")
    return tuple(shape)


def _dtype(name, path: str, what: str) -> np.dtype:
    try:
        return dtype_from_name(name)
    except (KeyError, TypeError, ValueError):
        raise PackageError(
            f"{path}: metadata field {what}.dtype: {name!r} is not a dtype"
        ) from None


def load_irpkg(path):
    """The :class:`~cuvil.IRModule` saved in the IR package at ``path``.

    The IR is read from its bytecode when this Cuvil's MLIR wrote it, from its
    text otherwise, and its structural fingerprint is checked against the one
    the package names. Raises :class:`PackageError` (file, field, what) for a
    damaged package, or one from a newer Cuvil.
    """
    from .frontend import IRModule, TensorSpec

    path = os.fspath(path)
    with translated():
        text, metadata_text, _form = _packages().load_irpkg(path)
    metadata = json.loads(metadata_text)
    inputs = _field(metadata, "inputs", list, path)
    outputs = _field(metadata, "outputs", list, path)
    if not outputs or not all(isinstance(x, dict) for x in inputs + outputs):
        raise PackageError(f"{path}: metadata fields inputs/outputs: not lists of tensors")
    structure = metadata.get("structure", "single" if len(outputs) == 1 else "tuple")
    if structure not in ("single", "tuple", "list"):
        raise PackageError(f"{path}: metadata field structure: {structure!r}")
    names = [_field(x, "name", str, path) for x in inputs]
    input_shapes = [_dims(x.get("shape"), path, f"inputs[{i}]") for i, x in enumerate(inputs)]
    output_shapes = [_dims(x.get("shape"), path, f"outputs[{i}]") for i, x in enumerate(outputs)]

    def computed(items, shapes, what):
        return [
            (_dtype(x.get("compute_dtype", x.get("dtype")), path, f"{what}[{i}]"), shape)
            for i, (x, shape) in enumerate(zip(items, shapes))
        ]

    program = TracedProgram(
        func_name=_field(metadata, "func_name", str, path),
        text=text,
        inputs=computed(inputs, input_shapes, "inputs"),
        outputs=computed(outputs, output_shapes, "outputs"),
        structure=structure,
        input_names=names,
        boundary_inputs=[_dtype(x.get("dtype"), path, "inputs").name for x in inputs],
        boundary_outputs=[_dtype(x.get("dtype"), path, "outputs").name for x in outputs],
        symbol_ranges={
            str(k): (int(v[0]), None if v[1] is None else int(v[1]))
            for k, v in metadata.get("symbol_ranges", {}).items()
        },
    )
    module = IRModule(
        program,
        metadata.get("name", program.func_name),
        metadata.get("source", path),
        {
            name: TensorSpec(shape, x["dtype"])
            for name, shape, x in zip(names, input_shapes, inputs)
        },
        metadata.get("target", "cpu"),
        metadata.get("mode", "inference"),
        _field(metadata, "fingerprint", str, path),
        int(metadata.get("device", 0)),
    )
    module.output_spec = tuple(
        TensorSpec(shape, x["dtype"]) for shape, x in zip(output_shapes, outputs)
    )
    return module


def _tensor(name, dtype, shape) -> dict:
    entry = {"dtype": dtype, "shape": _shape(shape)}
    if name is not None:
        entry = {"name": name, **entry}
    return entry


def export_executable(model, path) -> None:
    """Write ``model`` (a compiled model) as an executable package at ``path``.

    The package holds the CPU code as a shared library, the entry function
    ``main`` (also reachable by the model's name) with its signature as the
    code takes it, the model's dtypes where they differ (float16 inputs), the
    symbolic-shape rules, the host CPU it was compiled for, the IR (so it can
    be compiled again) and the IR's fingerprint.
    """
    _export(model.compilation, model.module, path)


def export_record(record, path) -> None:
    """Write a compilation record as an executable package (``cuvil compile --emit cuvil``)."""
    _export(record, _record_module(record), path)


def _export(record, module, path) -> None:
    compiled = record.compiled
    metadata = _module_metadata(module)
    # The code's target: a module compiled for another target than its own
    # (IRModule.compile(target=...)) packages that one.
    metadata["target"], metadata["device"] = record.target, record.device
    name, target = metadata["name"], metadata["target"]
    if "cuvil" not in package_kinds(compiled.artifacts):
        raise PackageError(
            f"cuvil: exporting {name}: target {target!r} has no loadable code "
            f"to package (it writes {', '.join(compiled.artifacts)})"
        )
    cpu, features = _packages().host_cpu()
    with tempfile.TemporaryDirectory(prefix="cuvil-export-") as folder:
        library = os.path.join(folder, "code.so")
        compiled.emit("so", library)
        with open(library, "rb") as handle:
            code = handle.read()
    code_entry = f"code/{target}/{ENTRY}.so"
    function = {
        "name": ENTRY,
        "aliases": sorted({name, metadata["func_name"]} - {ENTRY}),
        "symbol": f"cuvil_{metadata['func_name']}",
        "target": target,
        "code": code_entry,
        "instrumented": bool(compiled.instrumented),
        "inputs": [_tensor(x["name"], x["compute_dtype"], x["shape"]) for x in metadata["inputs"]],
        "outputs": [_tensor(None, x["compute_dtype"], x["shape"]) for x in metadata["outputs"]],
        "given_inputs": [x["dtype"] for x in metadata["inputs"]],
        "given_outputs": [x["dtype"] for x in metadata["outputs"]],
        "structure": metadata["structure"],
        "symbol_ranges": metadata["symbol_ranges"],
        "enable_fusion": bool(record.enable_fusion),
    }
    package = {
        "format": "cuvil-executable",
        "cuvil_version": _native.load().version,
        "fingerprint": module.fingerprint,
        "host": {"cpu": cpu, "features": features},
        "functions": [function],
        "model": {k: metadata[k] for k in ("name", "source", "mode")},
    }
    entries = [
        (code_entry, code, True),
        ("ir/module.mlir", module.text.encode(), True),
    ]
    with translated():
        _packages().write(os.fspath(path), "executable", json.dumps(package), entries)
