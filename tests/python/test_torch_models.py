"""Whole PyTorch models through the importer and through torch.compile, against eager PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import cuvil
from cuvil.frontend import build_ir


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(out + (x if self.down is None else self.down(x)))


class SmallResNet(nn.Module):
    """ResNet's layout: 7x7 stem, max pool, residual stages, global average pool, classifier."""

    def __init__(self, width: int = 8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width))
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.layers = nn.Sequential(BasicBlock(width, width, 1), BasicBlock(width, 2 * width, 2))
        self.fc = nn.Linear(2 * width, 10)

    def forward(self, image):
        x = self.layers(self.pool(F.relu(self.stem(image))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class CausalBlock(nn.Module):
    """GPT-2's pre-LN decoder block: fused qkv, causal mask buffer, GELU-tanh MLP."""

    def __init__(self, dim: int = 32, heads: int = 4, context: int = 16):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.c_attn, self.c_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        mask = torch.tril(torch.ones(context, context, dtype=torch.bool))
        self.register_buffer("mask", mask.view(1, 1, context, context), persistent=False)
        self.mlp = nn.Sequential(
            nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim)
        )

    def attention(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        att = att.masked_fill(~self.mask[:, :, :t, :t], float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).reshape(b, t, c))

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class EncoderLayer(nn.Module):
    """BERT's post-LN encoder layer: separate q/k/v, SDPA, exact GELU, dropout."""

    def __init__(self, dim: int = 32, heads: int = 4, hidden: int = 64):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = (nn.Linear(dim, dim) for _ in range(3))
        self.output = nn.Linear(dim, dim)
        self.ln_attn, self.ln_ffn = nn.LayerNorm(dim, eps=1e-12), nn.LayerNorm(dim, eps=1e-12)
        self.ffn = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden):
        b, t, c = hidden.shape
        q, k, v = (
            p(hidden).view(b, t, self.heads, c // self.heads).transpose(1, 2)
            for p in (self.query, self.key, self.value)
        )
        context = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, c)
        hidden = self.ln_attn(hidden + self.dropout(self.output(context)))
        return self.ln_ffn(hidden + self.dropout(self.ffn(hidden)))


def _randomize_batch_norm(model: nn.Module) -> nn.Module:
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)
    return model


MODELS = {
    "resnet": (lambda: _randomize_batch_norm(SmallResNet()), (1, 3, 32, 32)),
    "gpt2_block": (CausalBlock, (2, 8, 32)),
    "bert_layer": (EncoderLayer, (2, 8, 32)),
}


def _build(name):
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    return model, torch.randn(shape)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_through_build_ir_matches_eager(name):
    model, x = _build(name)
    with torch.no_grad():
        expected = model(x).numpy()
    module = build_ir(model, [x])
    np.testing.assert_allclose(module.compile()(x.numpy()), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_through_torch_compile_is_one_compilation_matching_eager(name):
    torch._dynamo.reset()
    model, x = _build(name)
    compiled = torch.compile(model, backend="cuvil")
    before = len(cuvil.compilations())
    with torch.no_grad():
        result, expected = compiled(x), model(x)
    torch.testing.assert_close(result, expected, rtol=1e-4, atol=1e-4)
    assert len(cuvil.compilations()) - before == 1
    torch._dynamo.reset()
