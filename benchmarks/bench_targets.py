"""Times the bundled examples on Cuvil's targets (cpu, c, wasm in Node) and NumPy, on one thread.

Usage: python benchmarks/bench_targets.py [--runs N] [--warmup N] [EXAMPLE ...]

WebAssembly has no threads here, so every side runs on one: NumPy's BLAS is
limited to one thread (threadpoolctl) and Cuvil's OpenMP runtime to one
(OMP_NUM_THREADS=1, set before it loads). "cpu" is the native code of the
cpu target; "c" the c target's C compiled by the system's ``cc -O2``; "wasm"
the wasm module exported with its ES module and timed inside Node
(``performance.now()`` around each call of the loaded function: no process
start, no copies through Python). Each figure is the median of ``--runs``
calls after ``--warmup``; results are checked against NumPy first.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_examples import EXAMPLE_NAMES, load_example  # noqa: E402
from timing import median_ms  # noqa: E402

import cuvil  # noqa: E402
from cuvil._sources import export_sources  # noqa: E402

NODE_TIMER = """
import {{ readFileSync }} from 'node:fs';
import {{ load }} from './{name}.mjs';

const model = await load();
const {{ inputs }} = model.signature.{name};
const args = inputs.map((v, i) => {{
  const data = readFileSync(`in${{i}}.bin`);
  return new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
}});
const out = model.{name}(...args);
for (let i = 0; i < {warmup}; ++i) model.{name}(...args);
const times = [];
for (let i = 0; i < {runs}; ++i) {{
  const start = performance.now();
  model.{name}(...args);
  times.push(performance.now() - start);
}}
times.sort((a, b) => a - b);
console.log(JSON.stringify({{ ms: times[Math.floor(times.length / 2)], first: Array.from(out) }}));
"""


def wasm_in_node_ms(name: str, fn, inputs, runs: int, warmup: int, folder: pathlib.Path):
    """Median ms of one call of the exported module inside Node, and its output."""
    compiled = cuvil.jit(fn, target="wasm")
    compiled(*inputs)  # compiles (and runs once in Node)
    export_sources(cuvil.compilations()[-1], folder)  # <name>.wasm and <name>.mjs
    for i, x in enumerate(inputs):
        np.ascontiguousarray(x, dtype=np.float32).tofile(folder / f"in{i}.bin")
    script = folder / "time.mjs"
    script.write_text(NODE_TIMER.format(name=name, runs=runs, warmup=warmup))
    node = shutil.which("node") or shutil.which("nodejs")
    done = subprocess.run([node, str(script)], cwd=folder, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"node failed on {name}: {done.stderr}")
    report = json.loads(done.stdout)
    return report["ms"], np.array(report["first"], dtype=np.float32)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="*", metavar="EXAMPLE", help=", ".join(EXAMPLE_NAMES))
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args(argv)
    names = args.examples or list(EXAMPLE_NAMES)
    print(
        "| example | NumPy | Cuvil cpu | Cuvil c | Cuvil wasm (Node) "
        "| wasm vs NumPy | wasm vs cpu |"
    )
    print("|---|---|---|---|---|---|---|")
    with threadpool_limits(limits=1), tempfile.TemporaryDirectory() as tmp:
        for name in names:
            example = load_example(name)
            fn = getattr(example, name).__cuvil_function__
            inputs = example.make_inputs()
            expected = example.reference(*inputs)
            tolerance = 1e-4 * float(np.abs(expected).max())
            times = {"NumPy": median_ms(fn, inputs, args.runs, args.warmup)}
            for target in ("cpu", "c"):
                compiled = cuvil.jit(fn, target=target)
                result = compiled(*inputs)
                assert np.abs(result - expected).max() <= tolerance, (name, target)
                times[target] = median_ms(compiled, inputs, args.runs, args.warmup)
            ms, result = wasm_in_node_ms(
                name, fn, inputs, args.runs, args.warmup, pathlib.Path(tmp) / name
            )
            assert np.abs(result.reshape(expected.shape) - expected).max() <= tolerance, name
            times["wasm"] = ms
            cells = [f"{times[k]:.3f} ms" for k in ("NumPy", "cpu", "c", "wasm")]
            ratios = [f"{times['NumPy'] / ms:.2f}×", f"{times['cpu'] / ms:.2f}×"]
            print(f"| {name} | " + " | ".join(cells + ratios) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
