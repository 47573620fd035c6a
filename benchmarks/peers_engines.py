"""The peers of benchmarks/bench_peers.py: how each engine prepares a workload and calls it.

``prepare(context)`` compiles (or loads from ``context.cache``) and returns a
zero-argument callable whose result is a NumPy array. A peer whose package
cannot be imported raises ImportError (reported as "not installed"); one that
cannot run a workload raises :class:`Unavailable`.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pathlib
import warnings

import numpy as np
from bench_examples import load_zoo
from peers_workloads import Spec

ONNX_OPSET = 17


class Unavailable(Exception):
    """The peer is installed but has no way to run this workload."""


@dataclasses.dataclass
class Context:
    name: str
    spec: Spec
    threads: int
    cache: pathlib.Path  # where a peer keeps what it compiled (a fresh folder = a cold start)
    workdir: pathlib.Path  # exported ONNX files

    def onnx_path(self) -> pathlib.Path:
        """The workload exported to ONNX (weights as initializers), exported on first use."""
        path = self.workdir / f"{self.name}.onnx"
        if not path.exists():
            if self.spec.zoo_name:
                load_zoo().export_onnx(self.spec.zoo_name, path)
            else:
                _export_onnx(self.spec, path)
        return path


def _export_onnx(spec: Spec, path: pathlib.Path) -> None:
    import torch

    module = spec.torch_module()
    activations = tuple(torch.from_numpy(a) for a in spec.activations)
    names = [f"input{i}" for i in range(len(activations))]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's legacy notice
        torch.onnx.export(
            module,
            activations,
            str(path),
            input_names=names,
            output_names=["output"],
            opset_version=ONNX_OPSET,
            dynamo=False,
        )


def _numpy(ctx: Context):
    if ctx.spec.numpy_fn is None:
        raise Unavailable("no NumPy version (a PyTorch model)")
    fn, inputs = ctx.spec.numpy_fn, ctx.spec.inputs
    return lambda: fn(*inputs)


def _cuvil(ctx: Context):
    import cuvil

    inputs = ctx.spec.inputs
    if ctx.spec.numpy_fn is None:
        compiled = cuvil.load_onnx(ctx.onnx_path()).compile()
        return lambda: compiled(*ctx.spec.activations)
    # The weights compiled in, as ONNX Runtime's initializers and IREE's and
    # XLA's constants are: folded and packed for the kernels when compiled.
    parameters = list(inspect.signature(ctx.spec.numpy_fn).parameters)
    jitted = cuvil.jit(ctx.spec.numpy_fn, constants=parameters[ctx.spec.weights_from :])
    jitted(*inputs)
    reason = cuvil.last_fallback_reason(jitted)
    if reason:
        raise Unavailable(f"fell back to NumPy: {reason}")
    return lambda: jitted(*inputs)


def _torch_call(module, ctx: Context):
    import torch

    activations = [torch.from_numpy(a) for a in ctx.spec.activations]

    def call():
        with torch.no_grad():
            return module(*activations).numpy()

    return call


def _torch_eager(ctx: Context):
    import torch

    torch.set_num_threads(ctx.threads)
    return _torch_call(ctx.spec.torch_module(), ctx)


def _torch_compile(ctx: Context):
    import torch

    torch.set_num_threads(ctx.threads)
    return _torch_call(torch.compile(ctx.spec.torch_module()), ctx)


def _onnxruntime(ctx: Context):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = ctx.threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        str(ctx.onnx_path()), options, providers=["CPUExecutionProvider"]
    )
    feeds = {i.name: a for i, a in zip(session.get_inputs(), ctx.spec.activations)}
    return lambda: session.run(None, feeds)[0]


def _jax(ctx: Context):
    import jax
    import jax.numpy as jnp

    if ctx.spec.jax_fn is None:
        raise Unavailable("no JAX version (a PyTorch model)")
    jax.config.update("jax_compilation_cache_dir", str(ctx.cache / "jax"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    jitted = jax.jit(ctx.spec.jax_fn)
    arrays = [jnp.asarray(a) for a in ctx.spec.inputs]
    return lambda: np.asarray(jitted(*arrays))


# llvm-cpu for this machine's CPU, with data tiling (packed GEMM layouts) on.
IREE_FLAGS = [
    "--iree-llvmcpu-target-cpu=host",
    "--iree-llvmcpu-target-cpu-features=host",
    "--iree-opt-data-tiling",
]
_iree_threads_set = False


def _iree(ctx: Context):
    import iree.compiler
    import iree.runtime
    from iree.compiler.tools.import_onnx.__main__ import main, parse_arguments

    global _iree_threads_set
    if not _iree_threads_set:  # the task system reads its flags once, before the first device
        iree.runtime.flags.parse_flags(f"--task_topology_max_group_count={ctx.threads}")
        _iree_threads_set = True
    vmfb = ctx.cache / "iree" / f"{ctx.name}.vmfb"
    if not vmfb.exists():
        vmfb.parent.mkdir(parents=True, exist_ok=True)
        mlir = ctx.workdir / f"{ctx.name}.iree.mlir"
        main(parse_arguments([str(ctx.onnx_path()), "-o", str(mlir)]))
        iree.compiler.compile_file(
            str(mlir),
            target_backends=["llvm-cpu"],
            extra_args=IREE_FLAGS,
            output_file=str(vmfb),
        )
    module = iree.runtime.load_vm_flatbuffer_file(str(vmfb), driver="local-task")
    function = getattr(module, _onnx_graph_name(ctx.onnx_path()))
    activations = ctx.spec.activations
    return lambda: function(*activations).to_host()


def _onnx_graph_name(path: pathlib.Path) -> str:
    import onnx

    return onnx.load(str(path), load_external_data=False).graph.name


# name -> (prepare, whether it runs the ONNX export, modules imported before its timer starts)
PEERS = {
    "cuvil": (_cuvil, False, ["cuvil"]),
    "numpy": (_numpy, False, []),
    "torch": (_torch_eager, False, ["torch"]),
    "torch.compile": (_torch_compile, False, ["torch"]),
    "onnxruntime": (_onnxruntime, True, ["onnxruntime"]),
    "jax": (_jax, False, ["jax", "jax.numpy"]),
    "iree": (_iree, True, ["iree.compiler", "iree.runtime", "onnx"]),
}


def needs_onnx(peer: str, spec: Spec) -> bool:
    """Whether ``peer`` reads the ONNX export of ``spec`` (exported before its timer starts)."""
    return PEERS[peer][1] or (peer == "cuvil" and spec.numpy_fn is None)


#: What a peer that reads the ONNX export imports for it (Cuvil's importer reads it with
#: the ``onnx`` package, whose import alone takes about 0.3 s here).
ONNX_READERS = {"cuvil": ["onnx", "cuvil.frontends.onnx"]}


def import_peer(peer: str, spec: Spec | None = None) -> None:
    """Import what ``peer`` needs (for ``spec``: its ONNX reader too, when it reads the
    export), so that a first-call time measures compiling, not importing."""
    modules = list(PEERS[peer][2])
    if spec is not None and needs_onnx(peer, spec):
        modules += ONNX_READERS.get(peer, [])
    for module in modules:
        importlib.import_module(module)
