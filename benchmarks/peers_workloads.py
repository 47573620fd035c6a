"""The workloads of benchmarks/bench_peers.py: NumPy functions, PyTorch twins and zoo models.

A workload is built into a :class:`Spec`: its float32 inputs (activations
first, then weights), a float64 reference output, a NumPy function the
array-level peers (NumPy, Cuvil's ``jit``, JAX) run, and a PyTorch module
(weights as buffers) that PyTorch, ``torch.compile``, and through an ONNX
export ONNX Runtime and IREE run. The zoo models have no NumPy function:
Cuvil imports their ONNX export instead.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import pathlib
import sys
import types
from collections.abc import Callable

import numpy as np

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_examples import load_example, load_zoo  # noqa: E402


@dataclasses.dataclass
class Spec:
    """One built workload; ``numpy_fn`` is None for models that exist only in PyTorch."""

    inputs: list[np.ndarray]
    weights_from: int  # inputs[weights_from:] are weights (ONNX initializers)
    reference: np.ndarray
    numpy_fn: Callable | None = None
    jax_fn: Callable | None = None  # the same function over jax.numpy
    torch_module: Callable[[], object] | None = None  # () -> nn.Module over the activations
    zoo_name: str | None = None  # the zoo model name, for Cuvil's ONNX import

    @property
    def activations(self) -> list[np.ndarray]:
        return self.inputs[: self.weights_from]


@dataclasses.dataclass
class Workload:
    name: str
    title: str
    flops: float | None  # None where GFLOP/s is not defined
    build: Callable[[], Spec]


def _example_copy(name: str, use_jax: bool = False, **constants):
    """A fresh copy of ``resources/examples/<name>.py`` with its size constants replaced.

    With ``use_jax`` its ``np`` is ``jax.numpy`` and ``cuvil.gelu`` JAX's exact GELU,
    so that ``jax.jit`` can trace the example's own code.
    """
    module = load_example(name)
    for key, value in constants.items():
        setattr(module, key, value)
    if use_jax:
        import jax
        import jax.numpy as jnp

        module.np = jnp
        module.cuvil = types.SimpleNamespace(gelu=lambda v: jax.nn.gelu(v, approximate=False))
    return module


def _torch_graph(fn, weights):
    """An ``nn.Module`` computing ``fn(*activations, *weights)``, the weights as buffers."""
    import torch

    class Graph(torch.nn.Module):
        def __init__(self):
            super().__init__()
            for index, weight in enumerate(weights):
                self.register_buffer(f"w{index}", torch.from_numpy(weight.copy()))

        def forward(self, *activations):
            return fn(*activations, *(getattr(self, f"w{i}") for i in range(len(weights))))

    return Graph().eval()


def _torch_mlp(x, w1, b1, w2, b2):
    import torch

    return torch.nn.functional.gelu(x @ w1 + b1) @ w2 + b2


def _torch_block(heads, x, wq, wk, wv, wo, g1, be1, w1, b1, w2, b2, g2, be2):
    """The example's Transformer block in PyTorch, op for op."""
    import torch

    functional = torch.nn.functional
    seq, d_model = x.shape
    d_head = d_model // heads

    def split(t):
        return t.reshape(seq, heads, d_head).transpose(0, 1)

    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    scores = (q @ k.transpose(1, 2)) * (1.0 / math.sqrt(d_head))
    context = torch.softmax(scores, dim=-1) @ v
    h = context.transpose(0, 1).reshape(seq, d_model) @ wo
    h = functional.layer_norm(x + h, (d_model,), g1, be1, 1e-5)
    ffn = functional.gelu(h @ w1 + b1) @ w2 + b2
    return functional.layer_norm(h + ffn, (d_model,), g2, be2, 1e-5)


def _example_spec(name: str, weights_from: int, torch_fn, **constants) -> Spec:
    module = _example_copy(name, **constants)
    inputs = list(module.make_inputs())
    fn = getattr(module, name).__wrapped__

    def jax_fn(*args):
        return getattr(_example_copy(name, use_jax=True, **constants), name).__wrapped__(*args)

    return Spec(
        inputs=inputs,
        weights_from=weights_from,
        reference=np.asarray(module.reference(*inputs), dtype=np.float64),
        numpy_fn=fn,
        jax_fn=jax_fn,
        torch_module=lambda: _torch_graph(torch_fn, inputs[weights_from:]),
    )


def _matmul(a, b):
    return a @ b


def _gemm_spec(batch: tuple[int, ...], m: int, k: int, n: int, b_is_weight: bool = True) -> Spec:
    """``A @ B`` of float32 ``batch + (m, k)`` and ``batch + (k, n)`` operands."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(batch + (m, k), dtype=np.float32)
    b = rng.standard_normal(batch + (k, n), dtype=np.float32) / np.float32(math.sqrt(k))
    return Spec(
        inputs=[a, b],
        weights_from=1 if b_is_weight else 2,
        reference=a.astype(np.float64) @ b.astype(np.float64),
        numpy_fn=_matmul,
        jax_fn=_matmul,
        torch_module=lambda: _torch_graph(_matmul, [b] if b_is_weight else []),
    )


def _zoo_spec(name: str) -> Spec:
    import torch

    model, inputs = load_zoo().build(name)
    twin = copy.deepcopy(model).double()
    with torch.no_grad():
        reference = twin(*(t.double() if t.is_floating_point() else t for t in inputs))
    return Spec(
        inputs=[t.numpy() for t in inputs],
        weights_from=len(inputs),
        reference=reference.numpy(),
        torch_module=lambda: model,
        zoo_name=name,
    )


def _gemm(name, m, k, n, batch=(), b_is_weight=True, title=None):
    flops = 2.0 * math.prod(batch) * m * k * n
    shape = "×".join(map(str, batch)) + (" × " if batch else "")
    return Workload(
        name,
        title or f"matmul {shape}{m}×{k} · {k}×{n}",
        flops,
        lambda: _gemm_spec(batch, m, k, n, b_is_weight),
    )


def _mlp(name, batch, d_in, hidden, d_out):
    flops = 2.0 * batch * (d_in * hidden + hidden * d_out)
    constants = dict(BATCH=batch, D_IN=d_in, D_HIDDEN=hidden, D_OUT=d_out)
    return Workload(
        name,
        f"MLP {batch}×{d_in} → {hidden} (bias, GELU) → {d_out}",
        flops,
        lambda: _example_spec("mlp", 1, _torch_mlp, **constants),
    )


def _block(name, seq, d_model, heads, d_ff):
    flops = 2.0 * seq * (4 * d_model * d_model + 2 * d_model * d_ff) + 4.0 * seq * seq * d_model
    constants = dict(SEQ=seq, D_MODEL=d_model, HEADS=heads, D_FF=d_ff)

    def torch_fn(*args):
        return _torch_block(heads, *args)

    return Workload(
        name,
        f"Transformer block (seq {seq}, d {d_model}, {heads} heads, ffn {d_ff})",
        flops,
        lambda: _example_spec("transformer_block", 1, torch_fn, **constants),
    )


def _conv_spec(channels, size, filters, kernel, stride) -> Spec:
    import torch

    torch.manual_seed(channels * size + filters)
    module = torch.nn.Sequential(
        torch.nn.Conv2d(channels, filters, kernel, stride, kernel // 2, bias=False),
        torch.nn.ReLU(),
    ).eval()
    x = torch.randn(1, channels, size, size)
    with torch.no_grad():
        reference = copy.deepcopy(module).double()(x.double())
    return Spec(
        inputs=[x.numpy()],
        weights_from=1,
        reference=reference.numpy(),
        torch_module=lambda: module,
    )


def _conv(name, channels, size, filters, kernel=3, stride=1):
    """One of ResNet-18's convolutions and its ReLU, one image, weights as constants."""
    out = (size + 2 * (kernel // 2) - kernel) // stride + 1
    flops = 2.0 * filters * out * out * channels * kernel * kernel
    return Workload(
        name,
        f"conv {kernel}×{kernel}/{stride} + ReLU {channels}×{size}² → {filters}×{out}²",
        flops,
        lambda: _conv_spec(channels, size, filters, kernel, stride),
    )


# GEMM names give M×N×K; _gemm takes m, k, n.
WORKLOADS = [
    _gemm("matmul_small", 64, 64, 64),
    _gemm("matmul_1024", 1024, 512, 256),
    _gemm("matmul_2048", 2048, 2048, 2048),
    _mlp("mlp_example", 64, 256, 512, 128),
    _mlp("mlp_1024", 1024, 512, 2048, 512),
    _block("block_example", 64, 128, 4, 512),
    _block("block_256", 256, 512, 8, 2048),
    Workload("gpt2", "GPT-2 block (zoo, 8 tokens, d 32)", None, lambda: _zoo_spec("gpt2")),
    Workload("bert", "BERT layer (zoo, 8 tokens, d 32)", None, lambda: _zoo_spec("bert")),
    Workload("resnet", "ResNet-style CNN (zoo, 1×3×32×32)", None, lambda: _zoo_spec("resnet")),
    _conv("conv_stem", 3, 224, 64, kernel=7, stride=2),
    _conv("conv_56", 64, 56, 64),
    _conv("conv_28", 128, 28, 128),
    _conv("conv_14", 256, 14, 256),
    _conv("conv_7", 512, 7, 512),
    _gemm("gemm_4096x4096x1024", 4096, 1024, 4096),
    _gemm("gemm_1000x999x1001", 1000, 1001, 999),
    _gemm(
        "gemm_2048_inputs",
        2048,
        2048,
        2048,
        b_is_weight=False,
        title="matmul 2048×2048 · 2048×2048, both operands inputs",
    ),
    _gemm(
        "gemm_1000x999x1001_inputs",
        1000,
        1001,
        999,
        b_is_weight=False,
        title="matmul 1000×1001 · 1001×999, both operands inputs",
    ),
    _gemm("gemm_4096x64x4096", 4096, 4096, 64),
    _gemm("gemv_1x4096x4096", 1, 4096, 4096),
    _gemm("attention_bmm", 256, 64, 256, batch=(8,), b_is_weight=False),
]
# matmul_small is a quick check of the harness, not part of the default run.
DEFAULT_WORKLOADS = [w.name for w in WORKLOADS if w.name != "matmul_small"]
BY_NAME = {w.name: w for w in WORKLOADS}
