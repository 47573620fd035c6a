"""Cuvil's cuda target against PyTorch eager and torch.compile on the same GPU.

    python benchmarks/bench_gpu.py [--workloads mlp_1024,block_256] [--rounds 5] [--tf32]
                                   [--json F]

Workloads are those of bench_peers.py (resources/examples at larger sizes, GEMMs). Each
engine gets NumPy arrays in and returns NumPy arrays, so every time includes the copies
to and from the GPU (Cuvil's calls copy; PyTorch's are timed with .cuda()/.cpu()); the
PyTorch engines are also timed with tensors already on the GPU ("resident"), the lower
bound for any engine. With --tf32 each side also runs its float32 matmuls on TF32
tensor cores: Cuvil's module optimized with precision="tf32", PyTorch's calls with
torch.backends.cuda.matmul.allow_tf32 set (results checked to TF32's accuracy).
Times are medians over interleaved rounds, in milliseconds.
Without a usable GPU it says why and exits 0 (scripts/gpu-check.sh runs it on one).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from peers_workloads import BY_NAME  # noqa: E402
from timing import interleaved_rounds, median_ms  # noqa: E402

DEFAULT = ["mlp_example", "mlp_1024", "block_example", "block_256", "matmul_2048"]


def cuvil_engine(spec):
    import cuvil

    jitted = cuvil.jit(spec.numpy_fn, target="cuda")
    jitted(*spec.inputs)
    if cuvil.last_fallback_reason(jitted):
        raise RuntimeError(cuvil.last_fallback_reason(jitted))
    return lambda: jitted(*spec.inputs)


def cuvil_tf32_engine(spec):
    """Cuvil's cuda code with the float32 matmuls allowed TF32 (IRModule.optimize)."""
    import inspect

    from cuvil.frontend import build_ir

    names = list(inspect.signature(spec.numpy_fn).parameters)
    shapes = {name: array.shape for name, array in zip(names, spec.inputs)}
    compiled = build_ir(spec.numpy_fn, shapes).optimize(target="cuda", precision="tf32").compile()
    return lambda: compiled(*spec.inputs)


def with_tf32(fn):
    """``fn`` called with PyTorch's float32 matmuls on TF32 tensor cores."""
    import torch

    def call():
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return fn()
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False

    return call


def torch_engines(spec):
    """name -> callable, for eager and torch.compile, with and without host copies."""
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    module = spec.torch_module().cuda().eval()
    compiled = torch.compile(module)
    host = [torch.from_numpy(a) for a in spec.activations]
    device = [t.cuda() for t in host]
    engines = {}
    for name, fn in (("torch eager", module), ("torch.compile", compiled)):

        def with_copies(fn=fn):
            with torch.no_grad():
                return fn(*(t.cuda(non_blocking=True) for t in host)).cpu().numpy()

        def resident(fn=fn):
            with torch.no_grad():
                out = fn(*device)
            torch.cuda.synchronize()
            return out

        engines[name] = with_copies
        engines[f"{name} (resident)"] = resident
    return engines


def measure(name: str, rounds: int, tf32: bool = False) -> dict:
    spec = BY_NAME[name].build()
    engines, notes = {}, {}
    try:
        engines["cuvil cuda"] = cuvil_engine(spec)
        if tf32:
            engines["cuvil cuda tf32"] = cuvil_tf32_engine(spec)
    except Exception as error:  # noqa: BLE001 - reported, not fatal
        notes["cuvil cuda"] = str(error)
    try:
        torch = torch_engines(spec)
        engines.update(torch)
        if tf32:
            engines.update({f"{e} tf32": with_tf32(fn) for e, fn in torch.items()})
    except Exception as error:  # noqa: BLE001
        notes["torch"] = str(error)
    reference = spec.reference
    for engine, fn in list(engines.items()):
        if "resident" in engine:
            continue
        out = np.asarray(fn())
        # TF32 operands carry 11 significant bits: about 1e-3 relative per product.
        tolerance = 1e-2 if "tf32" in engine else 1e-3
        scale = float(np.abs(reference).max())
        if not np.allclose(out, reference, rtol=tolerance, atol=tolerance * scale):
            notes[engine] = f"wrong result (max error {np.abs(out - reference).max():.3g})"
            del engines[engine]
    variants = {e: (lambda fn=fn: median_ms(fn, runs=20, warmup=5)) for e, fn in engines.items()}
    times = interleaved_rounds(variants, rounds)
    return {
        "workload": name,
        "title": BY_NAME[name].title,
        "ms": {e: statistics.median(t) for e, t in times.items()},
        "notes": notes,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=",".join(DEFAULT))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tf32", action="store_true", help="also time each side with TF32 matmuls")
    parser.add_argument("--json", type=pathlib.Path)
    args = parser.parse_args(argv)
    import cuvil

    reason = cuvil._targets.unavailable_reason("cuda", 0)
    if reason:
        print(f"bench_gpu: no CUDA GPU here ({reason}); nothing measured")
        return 0
    started = time.time()
    results = [measure(name, args.rounds, args.tf32) for name in args.workloads.split(",")]
    for result in results:
        print(f"\n{result['title']}")
        best = result["ms"].get("torch eager")
        for engine, ms in sorted(result["ms"].items(), key=lambda item: item[1]):
            ratio = f"  {ms / best:.2f}× eager" if best else ""
            print(f"  {engine:28s} {ms:9.3f} ms{ratio}")
        for engine, note in result["notes"].items():
            print(f"  {engine:28s} not measured: {note}")
    print(f"\n({time.time() - started:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
