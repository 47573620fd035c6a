"""Times the bundled examples compiled by Cuvil against the same functions run by NumPy.

Usage: python benchmarks/bench_examples.py [--runs N] [--warmup N] [EXAMPLE ...]

For each example the NumPy time is the undecorated function (``fn.__wrapped__``)
on the example's inputs; the Cuvil time is the compiled function after its
first (compiling) call. Both are medians of ``--runs`` timed calls after
``--warmup`` untimed ones. The 1024x512x256 float32 matmul is also reported in
GFLOP/s, and NumPy's BLAS is identified through threadpoolctl.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import platform
import sys
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_info

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES_DIR = REPO_ROOT / "resources" / "examples"
EXAMPLE_NAMES = ("matmul_inference", "mlp", "transformer_block")
sys.path.insert(0, str(REPO_ROOT / "embedded_python"))

import cuvil  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from timing import median_ms  # noqa: E402


def _load_module(name: str, path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_example(name: str):
    """Import ``resources/examples/<name>.py`` (a fresh copy on every call)."""
    return _load_module(f"cuvil_bench_{name}", EXAMPLES_DIR / f"{name}.py")


def load_zoo():
    """Import ``resources/examples/models/zoo.py`` (needs PyTorch)."""
    return _load_module("cuvil_bench_zoo", EXAMPLES_DIR / "models" / "zoo.py")


# Idle worker threads of OpenBLAS and of Cuvil's OpenMP runtime spin for a
# while after a call; on a small machine they would slow the other side's
# measurement. Each phase starts after they have gone to sleep.
SETTLE_SECONDS = 0.5


def settled_median_ms(fn, args, runs: int, warmup: int) -> float:
    """Median wall time of ``fn(*args)`` in milliseconds, once idle workers have slept."""
    time.sleep(SETTLE_SECONDS)
    return median_ms(fn, args, runs, warmup)


def describe_environment() -> list[str]:
    """Lines naming the machine, the versions and NumPy's BLAS."""
    try:
        from cuvil import _cuvil

        cuvil_version = _cuvil.version
    except ImportError as error:
        cuvil_version = f"unavailable ({error})"
    lines = [
        f"machine: {platform.machine()} {platform.processor() or ''}".rstrip(),
        f"python {platform.python_version()}, numpy {np.__version__}, cuvil {cuvil_version}",
    ]
    blas = [info for info in threadpool_info() if info.get("user_api") == "blas"]
    if not blas:
        lines.append("numpy BLAS: not detected by threadpoolctl")
    for info in blas:
        lines.append(
            "numpy BLAS: {internal_api} {version} ({arch}, {threads} threads) {path}".format(
                internal_api=info.get("internal_api"),
                version=info.get("version"),
                arch=info.get("architecture", "?"),
                threads=info.get("num_threads"),
                path=pathlib.Path(info.get("filepath", "")).name,
            )
        )
    return lines


def bench_example(name: str, runs: int, warmup: int) -> dict:
    """Time one example; returns the row to print (with ``error`` set when it could not run)."""
    module = load_example(name)
    fn = getattr(module, name)
    inputs = module.make_inputs()
    row = {"name": name, "inputs": inputs}
    start = time.perf_counter()
    try:
        result = fn(*inputs)
    except (cuvil.CompileError, ImportError) as error:
        row["error"] = str(error).strip().splitlines()[-1]
        return row
    row["first_call_ms"] = (time.perf_counter() - start) * 1e3
    reason = cuvil.last_fallback_reason(fn)
    if reason:
        row["error"] = f"fell back to NumPy: {reason}"
        return row
    row["max_abs_error"] = float(np.max(np.abs(result - module.reference(*inputs))))
    # Memory one call allocates: NumPy's traced peak (intermediates and the
    # result; inputs excluded) vs Cuvil's planned arena of intermediates
    # plus the result array.
    tracemalloc.start()
    fn.__wrapped__(*inputs)
    row["numpy_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    planned = fn._last_compiled.compiled.planned_peak_bytes
    row["cuvil_plan_mb"] = (planned + np.asarray(result).nbytes) / 2**20
    # The same model with the fusion passes off, to show what fusion buys.
    unfused = cuvil.jit(fn.__wrapped__, enable_fusion=False)
    unfused(*inputs)
    unfused_planned = unfused._last_compiled.compiled.planned_peak_bytes
    row["unfused_plan_mb"] = (unfused_planned + np.asarray(result).nbytes) / 2**20
    row["numpy_ms"] = settled_median_ms(fn.__wrapped__, inputs, runs, warmup)
    row["cuvil_ms"] = settled_median_ms(fn, inputs, runs, warmup)
    row["unfused_ms"] = settled_median_ms(unfused, inputs, runs, warmup)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "examples",
        nargs="*",
        default=list(EXAMPLE_NAMES),
        help=f"any of {', '.join(EXAMPLE_NAMES)}",
    )
    parser.add_argument("--runs", type=int, default=50, help="timed calls per measurement")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls before timing")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.examples) - set(EXAMPLE_NAMES))
    if unknown:
        parser.error(f"unknown example(s): {', '.join(unknown)}")

    for line in describe_environment():
        print(line)
    print(f"median of {args.runs} runs after {args.warmup} warm-up calls\n")
    header = (
        f"{'example':<20}{'numpy ms':>11}{'unfused ms':>12}{'cuvil ms':>11}{'speedup':>9}"
        f"{'1st call ms':>13}{'max abs err':>13}{'numpy MB':>10}{'unfused MB':>12}"
        f"{'cuvil MB':>10}"
    )
    print(header)
    print("-" * len(header))
    rows = [bench_example(name, args.runs, args.warmup) for name in args.examples]
    failed = False
    for row in rows:
        if "error" in row:
            failed = True
            print(f"{row['name']:<20}  {row['error']}")
            continue
        speedup = row["numpy_ms"] / row["cuvil_ms"]
        print(
            f"{row['name']:<20}{row['numpy_ms']:>11.3f}{row['unfused_ms']:>12.3f}"
            f"{row['cuvil_ms']:>11.3f}{speedup:>8.2f}x"
            f"{row['first_call_ms']:>13.1f}{row['max_abs_error']:>13.2e}"
            f"{row['numpy_peak_mb']:>10.2f}{row['unfused_plan_mb']:>12.2f}"
            f"{row['cuvil_plan_mb']:>10.2f}"
        )
    for row in rows:
        if row["name"] == "matmul_inference" and "error" not in row:
            a, b = row["inputs"]
            flops = 2.0 * a.shape[0] * a.shape[1] * b.shape[1]
            print(
                f"\nmatmul {a.shape[0]}x{a.shape[1]}x{b.shape[1]} float32: "
                f"numpy {flops / row['numpy_ms'] / 1e6:.1f} GFLOP/s, "
                f"cuvil {flops / row['cuvil_ms'] / 1e6:.1f} GFLOP/s"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
