"""IR packages (``.irpkg``) and executable packages (``.cuvil``): writing and reading.

The container, its checks and the code loading are C++ (``cuvil._cuvil.packages``;
the format is specified in ``docs/irpkg.md``). This module turns an
:class:`~cuvil.IRModule` or :class:`~cuvil.frontend.CompiledModel` into the
metadata those packages carry, and an IR package back into an ``IRModule``.
"""

from __future__ import annotations

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
    "package_error",
]

#: The name an exported model's entry function has in every executable package.
ENTRY = "main"


def _packages():
    return _native.load().packages


class PackageError(ValueError):
    """A package is damaged, of another kind, from a newer Cuvil, or does not describe its
    contents; the message names the file, the field and what was wrong."""


def package_error(error: Exception) -> PackageError:
    """The extension's package error as a :class:`PackageError` (same message)."""
    return PackageError(str(error))


def _shape(shape) -> list:
    return [d if isinstance(d, (int, str)) or d is None else int(d) for d in shape]


def _dtype_name(dtype) -> str:
    return dtype if isinstance(dtype, str) else np.dtype(dtype).name


def _metadata(program, name, source, target, device, mode, input_spec, output_spec) -> dict:
    """What a package records of a compiled program beyond its IR.

    ``input_spec`` (name -> TensorSpec) and ``output_spec`` (TensorSpecs) carry the
    model's dtypes and symbolic sizes (output sizes as expressions of the input symbols).
    """
    return {
        "name": name,
        "func_name": program.func_name,
        "source": source,
        "target": target,
        "device": device,
        "mode": mode,
        "structure": program.structure,
        "inputs": [
            {
                "name": key,
                "dtype": _dtype_name(spec.dtype),
                "compute_dtype": dtype.name,
                "shape": _shape(spec.shape),
            }
            for (key, spec), (dtype, _) in zip(input_spec.items(), program.inputs)
        ],
        "outputs": [
            {
                "dtype": _dtype_name(spec.dtype),
                "compute_dtype": dtype.name,
                "shape": _shape(spec.shape),
            }
            for spec, (dtype, _) in zip(output_spec, program.outputs)
        ],
        "symbol_ranges": {k: list(v) for k, v in program.symbol_ranges.items()},
    }


def _module_metadata(module) -> dict:
    return _metadata(
        module._program,
        module.name,
        module.source,
        module.target,
        module.device,
        module.mode,
        module.input_spec,
        module.output_spec,
    )


def _record_metadata(record) -> dict:
    """The metadata of a compilation record (a ``cuvil.jit`` function or a declared model)."""
    from .frontend import TensorSpec

    program = record.program
    if program is None:
        raise PackageError(
            f"cuvil: {record.function}: this compilation keeps no program to package"
        )
    names = program.input_names or [f"arg{i}" for i in range(len(program.inputs))]
    inputs = {
        key: TensorSpec(shape, given)
        for key, (_, shape), given in zip(names, program.inputs, program.input_dtype_names())
    }
    outputs = tuple(
        TensorSpec(shape, given)
        for (_, shape), given in zip(program.outputs, program.output_dtype_names())
    )
    if any(not isinstance(d, int) for spec in inputs.values() for d in spec.shape):
        symbols = _native.load().result_symbols(program.mlir, program.func_name)
        outputs = tuple(
            TensorSpec(tuple(d if d >= 0 else next(exprs) for d in shape), spec.dtype)
            for spec, (_, shape), exprs in zip(
                outputs, record.output_types, (iter(e) for e in symbols)
            )
        )
    return _metadata(
        program,
        record.function,
        record.source,
        record.target,
        record.device,
        "inference",
        inputs,
        outputs,
    )


def save_irpkg(module, path) -> None:
    """Write ``module``'s IR, signature and fingerprint as an IR package at ``path``."""
    _save_irpkg(module.text, _module_metadata(module), path)


def save_record_irpkg(record, path) -> None:
    """Write the IR of a compilation record as an IR package (``cuvil compile --emit irpkg``)."""
    _save_irpkg(record.mlir, _record_metadata(record), path)


def _save_irpkg(text: str, metadata: dict, path) -> None:
    try:
        _packages().save_irpkg(text, json.dumps(metadata), os.fspath(path))
    except _packages().PackageError as error:
        raise package_error(error) from None


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
    try:
        text, metadata_text, _form = _packages().load_irpkg(path)
    except _packages().PackageError as error:
        raise package_error(error) from None
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
        mlir=text,
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
    module = model.module
    _export(model.compilation, module.text, module.fingerprint, _module_metadata(module), path)


def export_record(record, path) -> None:
    """Write a compilation record as an executable package (``cuvil compile --emit cuvil``)."""
    fingerprint = _native.load().fingerprint(record.mlir)
    _export(record, record.mlir, fingerprint, _record_metadata(record), path)


def _export(record, text: str, fingerprint: str, metadata: dict, path) -> None:
    compiled = record.compiled
    name, target = metadata["name"], metadata["target"]
    if "so" not in compiled.artifacts:
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
        "fingerprint": fingerprint,
        "host": {"cpu": cpu, "features": features},
        "functions": [function],
        "model": {k: metadata[k] for k in ("name", "source", "mode")},
    }
    entries = [
        (code_entry, code, True),
        ("ir/module.mlir", text.encode(), True),
    ]
    try:
        _packages().write(os.fspath(path), "executable", json.dumps(package), entries)
    except _packages().PackageError as error:
        raise package_error(error) from None
