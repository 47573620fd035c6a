"""Small PyTorch reference models (ResNet-style CNN, GPT-2 block, BERT layer) and their ONNX export.

The models have the structure of the real ones at a size that compiles and
runs in seconds, with deterministic random weights (each is built under
``torch.manual_seed``), so every run of ``python zoo.py OUT_DIR`` writes the
same ``.onnx`` files. Tests and benchmarks import :data:`MODELS`:

    model, example_inputs = MODELS["resnet"]()
    export_onnx("resnet", "resnet.onnx")

No downloads: weights are random, and batch norm statistics are randomized
too so that inference-mode batch norm is not the identity.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import warnings

import torch
from torch import nn
from torch.nn import functional as F

__all__ = [
    "TinyResNet",
    "GPT2Block",
    "BertEncoderLayer",
    "MODELS",
    "build",
    "export_onnx",
    "export_all",
]

SEED = 0
ONNX_OPSET = 17


# ----- ResNet-style CNN -----------------------------------------------------------


class BasicBlock(nn.Module):
    """Two 3x3 conv/bn layers with a residual connection (1x1 conv when the shape changes)."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class TinyResNet(nn.Module):
    """ResNet-18's layout (stem, max pool, residual stages, global pool, classifier), narrow."""

    def __init__(self, num_classes: int = 10, width: int = 8):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU()
        )
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(width, width, 1), BasicBlock(width, width, 1))
        self.layer2 = nn.Sequential(BasicBlock(width, 2 * width, 2))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2 * width, num_classes)

    def forward(self, x):
        x = self.pool(self.stem(x))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# ----- GPT-2-style decoder block -------------------------------------------------------


class CausalSelfAttention(nn.Module):
    """GPT-2's attention: one fused qkv projection, heads, a causal mask, an output projection."""

    def __init__(self, dim: int, heads: int, context: int):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        mask = torch.tril(torch.ones(context, context, dtype=torch.bool))
        self.register_buffer("mask", mask.view(1, 1, context, context), persistent=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        att = att.masked_fill(~self.mask[:, :, :t, :t], float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).reshape(b, t, c))


class GPT2Block(nn.Module):
    """Token and position embeddings, one pre-LN decoder block (GELU-tanh MLP), LM head."""

    def __init__(self, vocab: int = 64, dim: int = 32, heads: int = 4, context: int = 16):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(context, dim)
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, context)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim)
        )
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], dtype=torch.long)
        x = self.wte(ids) + self.wpe(positions)
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return self.lm_head(self.ln_f(x))


# ----- BERT-style encoder layer -------------------------------------------------------------


class BertEncoderLayer(nn.Module):
    """Post-LN encoder layer: scaled-dot-product self-attention, exact-GELU feed-forward."""

    def __init__(self, dim: int = 32, heads: int = 4, hidden: int = 64, dropout: float = 0.1):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.output = nn.Linear(dim, dim)
        self.ln_attn = nn.LayerNorm(dim, eps=1e-12)
        self.intermediate = nn.Linear(dim, hidden)
        self.ffn_output = nn.Linear(hidden, dim)
        self.ln_ffn = nn.LayerNorm(dim, eps=1e-12)
        self.dropout = nn.Dropout(dropout)

    def _heads(self, x):
        b, t, c = x.shape
        return x.view(b, t, self.heads, c // self.heads).transpose(1, 2)

    def forward(self, hidden):
        b, t, c = hidden.shape
        q, k, v = (self._heads(p(hidden)) for p in (self.query, self.key, self.value))
        context = F.scaled_dot_product_attention(q, k, v)
        context = context.transpose(1, 2).reshape(b, t, c)
        hidden = self.ln_attn(hidden + self.dropout(self.output(context)))
        ffn = self.ffn_output(F.gelu(self.intermediate(hidden)))
        return self.ln_ffn(hidden + self.dropout(ffn))


# ----- building and exporting -------------------------------------------------------------


def _randomize_batch_norm(model: nn.Module) -> None:
    """Random running statistics and affine parameters, so batch norm is not the identity."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            with torch.no_grad():
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)


def _resnet():
    model = TinyResNet()
    _randomize_batch_norm(model)
    return model, (torch.randn(1, 3, 32, 32),)


def _gpt2():
    model = GPT2Block()
    return model, (torch.randint(0, 64, (1, 8), dtype=torch.long),)


def _bert():
    model = BertEncoderLayer()
    return model, (torch.randn(1, 8, 32),)


# name -> () -> (model in eval mode, example inputs); input names of the ONNX files.
_BUILDERS = {"resnet": _resnet, "gpt2": _gpt2, "bert": _bert}
INPUT_NAMES = {"resnet": ["image"], "gpt2": ["input_ids"], "bert": ["hidden_states"]}
MODELS = {name: (lambda name=name: build(name)) for name in _BUILDERS}


def build(name: str):
    """The model ``name`` (``resnet``, ``gpt2``, ``bert``) in eval mode and its example inputs.

    Weights and inputs are the same on every call (seeded).
    """
    try:
        builder = _BUILDERS[name]
    except KeyError:
        raise ValueError(f"no model {name!r}; the zoo has {', '.join(_BUILDERS)}") from None
    with torch.random.fork_rng():
        torch.manual_seed(SEED)
        model, inputs = builder()
    return model.eval(), inputs


# Dims of each model's input that ``export_onnx(..., dynamic=True)`` leaves symbolic.
DYNAMIC_AXES = {
    "resnet": {0: "batch"},
    "gpt2": {0: "batch", 1: "sequence"},
    "bert": {0: "batch", 1: "sequence"},
}


def export_onnx(name: str, path, dynamic: bool = False) -> pathlib.Path:
    """Export model ``name`` to ONNX at ``path`` (TorchScript exporter, opset 17).

    Shapes are static unless ``dynamic``: then the dims in :data:`DYNAMIC_AXES`
    are symbolic (``dim_param``) and the graph computes shapes at run time.
    """
    model, inputs = build(name)
    path = pathlib.Path(path)
    dynamic_axes = {INPUT_NAMES[name][0]: DYNAMIC_AXES[name]} if dynamic else None
    with torch.no_grad(), warnings.catch_warnings():
        # The TorchScript exporter warns that it is legacy and that shapes become constants:
        # both are intended here (no onnxscript dependency, static shapes).
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        torch.onnx.export(
            model,
            inputs,
            str(path),
            input_names=INPUT_NAMES[name],
            output_names=["output"],
            opset_version=ONNX_OPSET,
            dynamo=False,
            dynamic_axes=dynamic_axes,
            # Keep BatchNormalization and the shape arithmetic exporters emit, as most
            # published models have them, instead of pre-folding them into constants.
            do_constant_folding=False,
        )
    return path


def export_all(folder) -> list[pathlib.Path]:
    """Export every model of the zoo to ``folder/<name>.onnx``."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return [export_onnx(name, folder / f"{name}.onnx") for name in _BUILDERS]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="where to write <model>.onnx")
    args = parser.parse_args(argv)
    for path in export_all(args.folder):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
