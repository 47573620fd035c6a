"""Times one symbolic-shape compilation against static compilations at the same sizes.

Usage: python benchmarks/bench_symbolic.py [--runs N] [--warmup N] [--rounds N] [MODEL ...]

Each model (an MLP, a GPT-2-style attention block, a small ResNet-style CNN)
is compiled once with symbolic dims (``to_ir_with_dynamic_shape``) and, for
each size, once with that size static (``build_ir``). Both run in this
process on the same inputs, in ``--rounds`` interleaved rounds of ``--runs``
timed calls after ``--warmup`` untimed ones; a row shows the medians over the
rounds, the dynamic/static ratio, the compile times and the largest
difference between the two results. Differences are printed, not enforced.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

import numpy as np

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "embedded_python"))
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

from bench_examples import describe_environment, median_ms  # noqa: E402

import cuvil  # noqa: E402
from cuvil.frontend import build_ir, to_ir_with_dynamic_shape  # noqa: E402

RNG = np.random.default_rng(0)


def _weights(*shape, scale=0.1):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


W1, B1, W2, B2 = _weights(256, 512), _weights(512), _weights(512, 128), _weights(128)


def mlp(x):
    """(N, 256) -> 512 -> ReLU -> 128."""
    return np.maximum(x @ W1 + B1, 0.0) @ W2 + B2


C, HEADS = 128, 4
D = C // HEADS
LN = (np.ones(C, np.float32), np.zeros(C, np.float32))
WQ, WK, WV = (_weights(HEADS, C, D) for _ in range(3))
WO, F1, F2 = _weights(C, C), _weights(C, 4 * C), _weights(4 * C, C)


def attention_block(x):
    """Pre-norm GPT-2-style block over (B, T, C): per-head attention whose
    Q @ K^T has two dynamic operands, then a GELU MLP."""
    h = cuvil.layer_norm(x, *LN)
    heads = []
    for i in range(HEADS):
        q, k, v = h @ WQ[i], h @ WK[i], h @ WV[i]
        scores = (q @ k.transpose(0, 2, 1)) * np.float32(1.0 / np.sqrt(D))
        heads.append(cuvil.softmax(scores, axis=-1) @ v)
    x = x + np.concatenate(heads, axis=-1) @ WO
    return x + cuvil.gelu(cuvil.layer_norm(x, *LN) @ F1) @ F2


K1, K2, K3, KG = (
    _weights(16, 3, 3, 3),
    _weights(16, 16, 3, 3),
    _weights(16, 16, 3, 3),
    _weights(16, 8, 3, 3),
)
HEAD = _weights(32, 10)


def small_cnn(x):
    """Stem conv + ReLU + max pool, a residual block, a grouped strided conv
    and an average pool concatenated, global average pool, classifier."""
    y = cuvil.max_pool2d(cuvil.relu(cuvil.conv2d(x, K1, padding=1)), 3, strides=2, padding=1)
    r = cuvil.relu(cuvil.conv2d(y, K2, padding=1))
    y = cuvil.relu(cuvil.conv2d(r, K3, padding=1) + y)
    a = cuvil.conv2d(y, KG, strides=2, padding=1, groups=2)
    b = cuvil.avg_pool2d(y, 3, strides=2, padding=1)
    return np.concatenate([a, b], axis=1).mean(axis=(2, 3)) @ HEAD


MODELS = {
    "mlp": (mlp, ("N", 256), [(1, 256), (8, 256), (64, 256), (200, 256)]),
    "attention": (attention_block, ("B", "T", C), [(1, 16, C), (2, 64, C), (1, 128, C)]),
    "cnn": (small_cnn, ("N", 3, "h", "w"), [(1, 3, 32, 32), (4, 3, 32, 32), (2, 3, 56, 40)]),
}


def timed_compile(build):
    """`build()` and the milliseconds it took."""
    start = time.perf_counter()
    compiled = build()
    return compiled, (time.perf_counter() - start) * 1e3


def bench_model(name: str, runs: int, warmup: int, rounds: int) -> list[dict]:
    """One dynamic compilation of `name`, then a row per size against the static one."""
    fn, symbolic, sizes = MODELS[name]
    spec = cuvil.TensorSpec(symbolic, "float32")
    dynamic, dynamic_ms = timed_compile(to_ir_with_dynamic_shape(fn, [spec]).compile)
    rows = []
    for shape in sizes:
        x = RNG.standard_normal(shape).astype(np.float32)
        static, static_ms = timed_compile(build_ir(fn, {"x": shape}).compile)
        diff = float(np.max(np.abs(dynamic(x) - static(x))))
        dyn_times, static_times = [], []
        for _ in range(rounds):
            dyn_times.append(median_ms(dynamic, (x,), runs, warmup))
            static_times.append(median_ms(static, (x,), runs, warmup))
        rows.append(
            {
                "name": name,
                "shape": shape,
                "dynamic_ms": statistics.median(dyn_times),
                "static_ms": statistics.median(static_times),
                "dynamic_compile_ms": dynamic_ms,
                "static_compile_ms": static_ms,
                "max_diff": diff,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help=f"any of {', '.join(MODELS)} (default: all)")
    parser.add_argument("--runs", type=int, default=30, help="timed calls per measurement")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls before timing")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per size")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.models) - set(MODELS))
    if unknown:
        parser.error(f"unknown model {', '.join(unknown)}; choose from {', '.join(MODELS)}")
    for line in describe_environment():
        print(line)
    header = (
        f"{'model':<10} {'shape':<18} {'dynamic ms':>11} {'static ms':>10} {'dyn/static':>10}"
        f" {'compile dyn/static s':>21} {'max diff':>9}"
    )
    print(header)
    for name in args.models or list(MODELS):
        for row in bench_model(name, args.runs, args.warmup, args.rounds):
            ratio = row["dynamic_ms"] / row["static_ms"]
            compile_s = (
                f"{row['dynamic_compile_ms'] / 1e3:.2f} / {row['static_compile_ms'] / 1e3:.2f}"
            )
            print(
                f"{row['name']:<10} {str(row['shape']):<18} {row['dynamic_ms']:>11.3f}"
                f" {row['static_ms']:>10.3f} {ratio:>10.2f} {compile_s:>21}"
                f" {row['max_diff']:>9.1e}",
                flush=True,
            )
    print("dynamic compile: once per model (first row); static: once per size.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
