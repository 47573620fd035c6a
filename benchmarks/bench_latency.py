"""Latency of one compiled call under the patterns real programs make: p50/p90/p99.

Usage: python benchmarks/bench_latency.py [--calls N] [--example NAME ...] [--markdown]

The same compiled function (the bundled examples: the 1024×512·512×256 GEMM,
the MLP, the Transformer block) is called right after each of these:
nothing (back to back), a NumPy matmul (OpenBLAS's threads then spin for a
while), the same product in NumPy, 1 ms and 20 ms asleep, and 0.2 ms of
Python work. Each configuration runs in a fresh process, because the
settings it varies are read once when their library starts: the defaults,
OPENBLAS_THREAD_TIMEOUT=4 (OpenBLAS's workers sleep at once instead of
spinning for about 2^28 cycles) and one thread for Cuvil's parallel regions
(OMP_NUM_THREADS=1). Unset OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE when running it (``make bench`` does).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
CONFIGURATIONS = {
    "default": {},
    "OPENBLAS_THREAD_TIMEOUT=4": {"OPENBLAS_THREAD_TIMEOUT": "4"},
    "OMP_NUM_THREADS=1": {"OMP_NUM_THREADS": "1"},
}
PATTERNS = (
    "back to back",
    "after a NumPy matmul 256³",
    "after the same product in NumPy",
    "after 1 ms asleep",
    "after 20 ms asleep",
    "after 0.2 ms of Python",
)


def _measure(example: str, calls: int) -> dict:
    """In this process: percentiles of ``example``'s compiled call per pattern."""
    import numpy as np

    sys.path.insert(0, str(HERE))
    from bench_examples import load_example

    module = load_example(example)
    fn, inputs = getattr(module, example), module.make_inputs()
    fn(*inputs)  # compiled (or loaded from the cache) before timing
    square = np.random.default_rng(0).standard_normal((256, 256), dtype=np.float32)
    a, b = inputs[0], inputs[1]
    same = (lambda: a @ b) if a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0] else None
    before = {
        PATTERNS[0]: lambda: None,
        PATTERNS[1]: lambda: square @ square,
        PATTERNS[2]: same,
        PATTERNS[3]: lambda: time.sleep(0.001),
        PATTERNS[4]: lambda: time.sleep(0.02),
        PATTERNS[5]: lambda: sum(range(3000)),
    }
    result = {}
    for pattern, prepare in before.items():
        if prepare is None:
            continue
        n = calls // 5 if "20 ms" in pattern else calls
        samples = []
        for _ in range(n):
            prepare()
            start = time.perf_counter()
            fn(*inputs)
            samples.append((time.perf_counter() - start) * 1e3)
        p50, p90, p99 = np.percentile(samples, [50, 90, 99])
        result[pattern] = {"p50": p50, "p90": p90, "p99": p99, "calls": n}
    return result


def _run_configuration(example: str, calls: int, env: dict) -> dict:
    command = [sys.executable, __file__, "--child", example, "--calls", str(calls)]
    done = subprocess.run(
        command, env={**os.environ, **env}, capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _markdown(example: str, results: dict) -> str:
    names = list(results)
    lines = [
        f"`{example}`, ms, p50 / p99:",
        "",
        "| pattern | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for pattern in PATTERNS:
        cells = []
        for name in names:
            row = results[name].get(pattern)
            cells.append(f"{row['p50']:.3f} / {row['p99']:.3f}" if row else "–")
        if any(c != "–" for c in cells):
            lines.append(f"| {pattern} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="calls per pattern")
    parser.add_argument(
        "--example", action="append", help="bundled example (default: matmul_inference, mlp)"
    )
    parser.add_argument("--markdown", action="store_true", help="print the README tables")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure(args.child, args.calls)))
        return 0
    for example in args.example or ["matmul_inference", "mlp"]:
        results = {}
        for name, env in CONFIGURATIONS.items():
            results[name] = _run_configuration(example, args.calls, env)
            if "error" in results[name]:
                print(f"{example} [{name}]: {results[name]['error']}", file=sys.stderr)
                return 1
            for pattern, row in results[name].items():
                print(
                    f"{example:18s} {name:26s} {pattern:32s} p50 {row['p50']:7.3f}"
                    f"  p90 {row['p90']:7.3f}  p99 {row['p99']:7.3f} ms  ({row['calls']} calls)"
                )
        if args.markdown:
            print()
            print(_markdown(example, results))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
