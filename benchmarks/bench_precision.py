"""Reduced precision and quantization against float32: accuracy, size and speed.

Usage: python benchmarks/bench_precision.py [--rounds N] [--runs N] [--threads N]
                                           [--markdown] [WORKLOAD ...]

Each workload is built with its weights as constants (what quantization
needs: an exported model's weights) and optimized as float32, bf16, fp16,
int8 (static, KL calibration on 32 samples) and int4 (weight-only, groups of
128, and of 32: more scales, less error). Per variant:

- error: relative L2 error of the output against the float32 model, and the
  largest absolute error against a float64 reference, on 8 inputs that are
  not among the calibration samples;
- weights: bytes of the constants in the IR, and the size of the exported
  executable package (.cuvil, zstd-compressed);
- time: median ms per call, from ``--rounds`` interleaved rounds of
  ``--runs`` calls each (every variant in every round, order rotating), all
  in this process on ``--threads`` OpenMP threads.
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import statistics
import sys
import tempfile

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "embedded_python"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

VARIANTS = {
    "fp32": {},
    "bf16": {"precision": "bf16"},
    "fp16": {"precision": "fp16"},
    "int8": {"quantization": "int8"},
    "int4": {"quantization": "int4"},
    "int4-g32": {"quantization": "int4", "group_size": 32},
}


def _workloads():
    import numpy as np
    from bench_examples import load_example

    def example(name):
        module = load_example(name)
        inputs = module.make_inputs()
        fn = getattr(module, name).__cuvil_function__
        x, weights = inputs[0], inputs[1:]

        def model(x):
            return fn(x, *weights)

        def reference(x):
            return module.reference(x, *weights)

        return model, x.shape, reference

    def wide_mlp():
        # Batch 8 through 1024 -> 4096 -> 1024: 32 MB of float32 weights read
        # for little arithmetic per call, the case narrow weights are for.
        rng = np.random.default_rng(0)
        w1 = rng.standard_normal((1024, 4096), dtype=np.float32) / np.float32(32.0)
        w2 = rng.standard_normal((4096, 1024), dtype=np.float32) / np.float32(64.0)

        def model(x):
            return np.maximum(x @ w1, 0.0) @ w2

        def reference(x):
            x64 = x.astype(np.float64)
            return np.maximum(x64 @ w1, 0.0) @ w2

        return model, (8, 1024), reference

    return {
        "mlp": lambda: example("mlp"),
        "transformer_block": lambda: example("transformer_block"),
        "wide_mlp": wide_mlp,
    }


def _samples(shape, count, seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape, dtype=np.float32) for _ in range(count)]


def measure(name, build, args):
    import numpy as np
    from timing import interleaved_rounds, median_ms

    import cuvil

    model, shape, reference = build()
    module = cuvil.frontend.build_ir(model, {"x": shape})
    calibration = _samples(shape, 32, seed=1)
    evaluation = _samples(shape, 8, seed=2)
    compiled, rows = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for variant, options in VARIANTS.items():
            kwargs = dict(options)
            if variant == "int8":
                kwargs["calibrate_dataset"] = calibration
            reduced = module.optimize(**kwargs)
            fn = compiled[variant] = reduced.compile()
            package = pathlib.Path(tmp) / f"{variant}.cuvil"
            fn.export(package)
            report = reduced.precision_report or {}
            rows[variant] = {
                "weights": report.get("quantized_weight_bytes")
                or cuvil._precision.constant_bytes(module.text),
                "package": package.stat().st_size,
            }
    baseline = compiled["fp32"]
    for variant, fn in compiled.items():
        err2 = norm2 = worst = 0.0
        for x in evaluation:
            base = baseline(x).astype(np.float64)
            got = fn(x).astype(np.float64)
            err2 += float(np.sum((got - base) ** 2))
            norm2 += float(np.sum(base**2))
            worst = max(worst, float(np.max(np.abs(got - reference(x)))))
        rows[variant]["relative"] = math.sqrt(err2 / norm2)
        rows[variant]["max_abs"] = worst
    x = evaluation[0]
    timers = {
        variant: (lambda fn=fn: median_ms(fn, (x,), runs=args.runs, warmup=3))
        for variant, fn in compiled.items()
    }
    times = interleaved_rounds(timers, args.rounds)
    for variant, samples in times.items():
        rows[variant]["ms"] = statistics.median(samples)
    return rows


def _size(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--markdown", action="store_true", help="print a README table")
    parser.add_argument("workloads", nargs="*")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    workloads = _workloads()
    names = args.workloads or list(workloads)
    unknown = [n for n in names if n not in workloads]
    if unknown:
        parser.error(
            f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(workloads)}"
        )
    print(f"threads={args.threads} rounds={args.rounds} runs={args.runs}")
    if args.markdown:
        print(
            "| workload | variant | rel. error vs fp32 | max abs error vs float64 "
            "| weights | .cuvil | ms/call | speed vs fp32 |"
        )
        print("|---|---|---|---|---|---|---|---|")
    for name in names:
        rows = measure(name, workloads[name], args)
        base = rows["fp32"]["ms"]
        for variant, row in rows.items():
            cells = (
                f"{row['relative']:.2e}" if variant != "fp32" else "–",
                f"{row['max_abs']:.2e}",
                _size(row["weights"]),
                _size(row["package"]),
                f"{row['ms']:.3f}",
                f"{base / row['ms']:.2f}×",
            )
            if args.markdown:
                print(f"| {name} | {variant} | " + " | ".join(cells) + " |")
            else:
                print(f"{name:18} {variant:5} " + "  ".join(f"{c:>10}" for c in cells))


if __name__ == "__main__":
    main()
