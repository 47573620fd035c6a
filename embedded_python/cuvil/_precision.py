"""Reduced precision and quantization of an IR module (``IRModule.optimize``).

bf16/fp16 run the matmuls on narrow operands with float32 accumulation
(``cuvil-reduce-precision``); int4 stores constant weights as 4-bit codes
with group-wise scales (``cuvil-quantize-weights{bits=4}``); int8 quantizes
weights per column and activations with scales calibrated on samples
(``cuvil-quantize-weights{bits=8}``). The rewrites are graph passes on the IR,
so the returned module's text, fingerprint, ``.irpkg`` and exported package
carry the narrow weights.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

import numpy as np

from ._dtypes import by_mlir
from ._logging import logger
from ._symbolic import fits

PRECISIONS = ("fp32", "bf16", "fp16", "tf32")
QUANTIZATIONS = (None, "int8", "int4")
CALIBRATIONS = ("kl", "percentile")
#: Samples a calibration or an accuracy report reads at most.
MAX_SAMPLES = 512

_CONSTANT = re.compile(r"cuvil\.constant\b.*:\s*tensor<([0-9x]*)([a-z]+[0-9]+)>")


def constant_bytes(text: str) -> int:
    """Bytes of the constants (weights) in Cuvil IR text (item sizes from the dtype table)."""
    total = 0
    for match in _CONSTANT.finditer(text):
        count = 1
        for dim in filter(None, match.group(1).split("x")):
            count *= int(dim)
        total += count * by_mlir(match.group(2)).itemsize
    return total


def check_options(api, precision, quantization, group_size, calibration, calibrate_dataset):
    """Raise ``ValueError`` naming the argument for an option this version does not have."""
    if precision not in PRECISIONS:
        raise ValueError(
            f"cuvil: {api}: precision={precision!r} is not one of "
            f"{', '.join(map(repr, PRECISIONS))}"
        )
    if quantization not in QUANTIZATIONS:
        raise ValueError(
            f"cuvil: {api}: quantization={quantization!r} is not one of "
            f"{', '.join(map(repr, QUANTIZATIONS))}"
        )
    if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size <= 0:
        raise ValueError(f"cuvil: {api}: group_size must be a positive int, got {group_size!r}")
    if calibration not in CALIBRATIONS:
        raise ValueError(
            f"cuvil: {api}: calibration={calibration!r} is not one of "
            f"{', '.join(map(repr, CALIBRATIONS))}"
        )
    if calibrate_dataset is not None and precision == "fp32" and quantization is None:
        raise ValueError(
            f"cuvil: {api}: calibrate_dataset is read by a precision or quantization (int8 "
            "calibrates on it; any other reports its accuracy on it), but this call asks for "
            "float32 and no quantization; fix: add precision= or quantization=, or drop "
            "calibrate_dataset"
        )
    if quantization == "int8" and calibrate_dataset is None:
        raise ValueError(
            f"cuvil: {api}: quantization='int8' is static quantization: the activations' "
            "scales come from a calibration; fix: pass calibrate_dataset=[sample, ...] "
            "(about 128 inputs like the ones the model will see)"
        )


def samples_of(module, dataset) -> list[list[np.ndarray]]:
    """The calibration samples as argument lists in the module's input order.

    A sample is a dict (input name -> array), a tuple/list of arrays in input
    order, or one array for a model with a single input.
    """
    names = list(module.input_spec)
    specs = module.input_spec
    samples = []
    for index, sample in enumerate(dataset):
        if index >= MAX_SAMPLES:
            break
        if isinstance(sample, Mapping):
            missing = [n for n in names if n not in sample]
            if missing:
                raise ValueError(
                    f"cuvil: calibrate_dataset sample {index} lacks input(s) "
                    f"{', '.join(map(repr, missing))}"
                )
            values = [sample[n] for n in names]
        elif isinstance(sample, (tuple, list)):
            values = list(sample)
        else:
            values = [sample]
        if len(values) != len(names):
            raise ValueError(
                f"cuvil: calibrate_dataset sample {index} has {len(values)} array(s), the "
                f"model takes {len(names)} ({', '.join(names)}); give a tuple in that order "
                "or a dict by name"
            )
        arrays = []
        for name, value in zip(names, values):
            spec = specs[name]
            array = np.asarray(value, dtype=np.dtype(spec.dtype))
            if not fits(tuple(spec.shape), array.shape):
                raise ValueError(
                    f"cuvil: calibrate_dataset sample {index}: input '{name}' has shape "
                    f"{array.shape}, the model takes {spec.shape}"
                )
            arrays.append(np.ascontiguousarray(array))
        samples.append(arrays)
    if not samples:
        raise ValueError("cuvil: calibrate_dataset is empty; give at least one sample")
    return samples


def run_passes(text: str, passes: list[str]) -> tuple[str, list[str]]:
    """Cuvil IR ``text`` after the function passes ``passes``, and the remarks they made."""
    from ._jit import _extension

    pipeline = "func.func(" + ",".join(passes) + ")"
    new_text, report = _extension().transform_ir(text, pipeline)
    return new_text, [line for line in report.splitlines() if line.strip()]


def kl_threshold(values: np.ndarray, bins: int = 2048, levels: int = 128) -> float:
    """The clipping threshold of |values| that minimizes the KL divergence between
    the clipped distribution and its ``levels``-level quantization (entropy
    calibration)."""
    magnitudes = np.abs(values.ravel()).astype(np.float64)
    # Exact zeros (half of a ReLU's outputs) are exact at every scale: as a
    # spike in the first bin they would only pull the threshold down.
    magnitudes = magnitudes[magnitudes > 0]
    top = float(magnitudes.max()) if magnitudes.size else 0.0
    if top == 0.0:
        return 0.0
    histogram, edges = np.histogram(magnitudes, bins=bins, range=(0.0, top))
    histogram = histogram.astype(np.float64)
    best, best_divergence = bins, np.inf
    for cut in range(levels, bins + 1):
        reference = histogram[:cut].copy()
        reference[cut - 1] += histogram[cut:].sum()
        # Merge the cut bins into `levels` groups and spread each group's count
        # evenly over its non-empty bins: what the quantized values can show.
        starts = (np.arange(levels) * cut) // levels
        sizes = np.diff(np.append(starts, cut))
        counts = histogram[:cut]
        nonzero = counts > 0
        group_sum = np.add.reduceat(counts, starts)
        group_nonzero = np.add.reduceat(nonzero.astype(np.float64), starts)
        per_bin = np.divide(group_sum, group_nonzero, out=np.zeros(levels), where=group_nonzero > 0)
        quantized = np.where(nonzero, np.repeat(per_bin, sizes), 0.0)
        total = quantized.sum()
        if total == 0:
            continue
        p = reference / reference.sum()
        q = quantized / total
        mask = p > 0
        # Where the reference has mass the quantized form cannot show, a tiny q.
        divergence = float(np.sum(p[mask] * np.log(p[mask] / np.maximum(q[mask], 1e-12))))
        if divergence < best_divergence:
            best, best_divergence = cut, divergence
    return float(edges[best])


def activation_scale(values: list[np.ndarray], method: str) -> float:
    """The int8 scale (threshold / 127) of one matmul's activations."""
    data = np.concatenate([v.ravel() for v in values])
    if method == "percentile":
        threshold = float(np.percentile(np.abs(data), 99.99))
    else:
        threshold = kl_threshold(data)
    if not threshold > 0:
        threshold = float(np.abs(data).max()) or 1.0
    return threshold / 127.0


def calibrate(module, samples, method: str) -> list[float]:
    """Run the float32 model with each int8 candidate's activation exposed and
    compute one scale per candidate."""
    from ._jit import _extension

    if module.is_symbolic:
        raise NotImplementedError(
            f"cuvil: int8 calibration of {module.name} needs static shapes; its inputs "
            "have symbolic dims. Fix: build the IR with fixed shapes for quantization, or "
            "use quantization='int4' (weight-only, no calibration)"
        )
    probe, _ = run_passes(
        module.text, ["cuvil-fold-constants", "cuvil-quantize-weights{bits=8 probe=1}"]
    )
    ext = _extension()
    compiled = ext.compile(probe, module.func_name, target="cpu")
    types = compiled.output_types
    first = len(module.output_spec)
    seen: list[list[np.ndarray]] = [[] for _ in types[first:]]
    for inputs in samples:
        outputs = [np.empty(shape, np.dtype(dtype)) for dtype, shape in types]
        compiled(inputs, outputs)
        for slot, value in zip(seen, outputs[first:]):
            slot.append(value)
    return [activation_scale(values, method) for values in seen]


def reduce_precision(module, precision, quantization, dataset, group_size, calibration):
    """The module's program rewritten for ``precision``/``quantization``, and a report."""
    passes = ["cuvil-fold-constants"]
    samples = samples_of(module, dataset) if dataset is not None else None
    scales: list[float] = []
    if quantization == "int4":
        passes.append(f"cuvil-quantize-weights{{bits=4 group-size={group_size}}}")
    elif quantization == "int8":
        scales = calibrate(module, samples, calibration)
        listed = ",".join(repr(s) for s in scales)
        passes.append(
            "cuvil-quantize-weights{bits=8"
            + (f" activation-scales={listed}" if scales else "")
            + "}"
        )
    if precision != "fp32":
        passes.append(f"cuvil-reduce-precision{{precision={precision}}}")
    text, remarks = run_passes(module.text, passes)
    for remark in remarks:
        logger.info("%s", remark)
    report = {
        "precision": precision,
        "quantization": quantization,
        "group_size": group_size if quantization == "int4" else None,
        "calibration": calibration if quantization == "int8" else None,
        "activation_scales": scales,
        "weight_bytes": constant_bytes(module.text),
        "quantized_weight_bytes": constant_bytes(text),
        "quantized_matmuls": text.count("cuvil.quantized_matmul")
        if quantization == "int4"
        else len(scales),
        "remarks": remarks,
    }
    program = dataclasses.replace(module._program, text=text, formatter=None)
    return program, samples, report


def accuracy(reference_model, model, samples) -> dict:
    """Errors of ``model`` against ``reference_model`` (float32) on ``samples``."""
    worst, squared_error, squared_norm = 0.0, 0.0, 0.0
    for inputs in samples:
        expected = _flat(reference_model(*inputs))
        got = _flat(model(*inputs))
        for e, g in zip(expected, got):
            e64, g64 = np.asarray(e, np.float64), np.asarray(g, np.float64)
            worst = max(worst, float(np.max(np.abs(e64 - g64), initial=0.0)))
            squared_error += float(np.sum((e64 - g64) ** 2))
            squared_norm += float(np.sum(e64**2))
    relative = (squared_error / squared_norm) ** 0.5 if squared_norm else 0.0
    return {"samples": len(samples), "max_abs_error": worst, "relative_l2_error": relative}


def _flat(result) -> list:
    return list(result) if isinstance(result, (tuple, list)) else [result]
