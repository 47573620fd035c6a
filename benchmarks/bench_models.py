"""Times the zoo models (ResNet-style CNN, GPT-2 block, BERT layer) in Cuvil and the frameworks.

Usage: python benchmarks/bench_models.py [--runs N] [--warmup N] [--threads N]
       [--no-torch-compile] [--no-jax] [--tensorflow] [MODEL ...]

Each model (``resources/examples/models/zoo.py``) is exported to ONNX once,
then timed in one process with the same thread count for every engine:
PyTorch eager, ``torch.compile`` (inductor), ONNX Runtime (CPU provider) and
Cuvil (``cuvil.load_onnx(...).compile()``). Times are medians of ``--runs``
calls after ``--warmup`` untimed ones; each engine's largest difference
from PyTorch eager's output is printed next to its time.

The GPT-2 block and the BERT layer also run as JAX and TensorFlow code with
the same weights (``framework_ports.py``): ``jax.jit``, Cuvil's import of
that JAX function, and with ``--tensorflow`` ``tf.function`` with and without XLA
(``jit_compile``) and Cuvil's import of that ``tf.function``. TensorFlow
and Triton (which ``torch.compile`` loads) both bundle LLVM and cannot share
a process, so ``--tensorflow`` drops the ``torch.compile`` row. TensorFlow
gets the same thread count; JAX (XLA's CPU client has no thread-count
setting) runs on one thread with ``--threads 1`` and on all cores otherwise.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

import numpy as np

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "embedded_python"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import framework_ports  # noqa: E402

import cuvil  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_examples import load_zoo  # noqa: E402
from timing import median_ms  # noqa: E402

MODEL_NAMES = ("resnet", "gpt2", "bert")


def _engines(model, inputs, onnx_path, feeds, threads: int, torch_compile: bool):
    """name -> a callable returning the output as a NumPy array (or the reason it is missing)."""
    import onnxruntime as ort
    import torch

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    compiled = cuvil.load_onnx(onnx_path).compile()
    arrays = list(feeds.values())

    def eager():
        with torch.no_grad():
            return model(*inputs).numpy()

    engines = {
        "pytorch eager": eager,
        "onnxruntime": lambda: session.run(None, feeds)[0],
        "cuvil": lambda: compiled(*arrays),
    }
    if torch_compile:
        try:
            optimized = torch.compile(model)
            with torch.no_grad():
                optimized(*inputs)  # compiles

            def inductor():
                with torch.no_grad():
                    return optimized(*inputs).numpy()

            engines["torch.compile"] = inductor
        except Exception as error:  # no C++ toolchain, unsupported op...
            engines["torch.compile"] = f"n/a ({type(error).__name__})"
    return engines


def bench_model(zoo, name: str, folder: pathlib.Path, args) -> list[tuple[str, str]]:
    import torch

    model, inputs = zoo.build(name)
    onnx_path = zoo.export_onnx(name, folder / f"{name}.onnx")
    feeds = {zoo.INPUT_NAMES[name][0]: inputs[0].numpy()}
    with torch.no_grad():
        expected = model(*inputs).numpy()
    rows = []
    engines = _engines(model, inputs, onnx_path, feeds, args.threads, args.torch_compile)
    if name in framework_ports.PORTED:
        ids = inputs[0].numpy()
        ids = ids.astype(np.int32) if ids.dtype == np.int64 else ids  # JAX's default ints
        if args.jax:
            engines.update(framework_ports.jax_engines(name, model, ids))
        if args.tensorflow:
            engines.update(framework_ports.tensorflow_engines(name, model, ids))
    for engine, fn in engines.items():
        if isinstance(fn, str):
            rows.append((engine, fn))
            continue
        error = float(np.max(np.abs(fn() - expected)))
        ms = median_ms(fn, (), args.runs, args.warmup)
        rows.append((engine, f"{ms:9.3f} ms  (max |diff| vs eager {error:.1e})"))
    return rows


def _limit_framework_threads(args) -> None:
    """Give XLA (JAX) and TensorFlow the thread count PyTorch and ORT get; before their import."""
    import os

    if args.threads == 1:  # XLA's CPU client has no thread-count flag: one thread or all
        flags = "--xla_cpu_multi_thread_eigen=false"
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()
    if args.tensorflow:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", metavar="MODEL", help=", ".join(MODEL_NAMES))
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="threads of PyTorch and ORT")
    parser.add_argument("--no-torch-compile", dest="torch_compile", action="store_false")
    parser.add_argument("--no-jax", dest="jax", action="store_false", help="skip the JAX rows")
    parser.add_argument(
        "--tensorflow", action="store_true", help="add the TensorFlow rows (no torch.compile)"
    )
    args = parser.parse_args(argv)
    if args.tensorflow:
        args.torch_compile = False
    _limit_framework_threads(args)
    unknown = [m for m in args.models if m not in MODEL_NAMES]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(MODEL_NAMES)}")
    import torch

    torch.set_num_threads(args.threads)
    zoo = load_zoo()
    print(f"threads={args.threads} runs={args.runs} warmup={args.warmup} torch={torch.__version__}")
    with tempfile.TemporaryDirectory(prefix="cuvil-bench-models-") as folder:
        for name in args.models or MODEL_NAMES:
            print(f"\n{name}")
            for engine, result in bench_model(zoo, name, pathlib.Path(folder), args):
                print(f"  {engine:<16} {result}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
