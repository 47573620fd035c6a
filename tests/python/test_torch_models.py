"""The zoo's whole models (ResNet-style CNN, GPT-2 block, BERT layer) through the PyTorch importer.

Each goes through ``build_ir`` (``torch.export``) and ``torch.compile(backend="cuvil")``
and must match eager PyTorch within fp32 tolerances.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from conftest import load_example

import cuvil
from cuvil.frontend import build_ir
from cuvil.frontends.torch import dynamo

NAMES = ("resnet", "gpt2", "bert")


@pytest.fixture(scope="module")
def zoo():
    return load_example("models/zoo")


@pytest.mark.parametrize("name", NAMES)
def test_zoo_model_through_build_ir_matches_eager(zoo, name):
    model, inputs = zoo.build(name)
    with torch.no_grad():
        expected = model(*inputs).numpy()
    module = build_ir(model, list(inputs))
    assert list(module.input_spec) == list(inspect.signature(model.forward).parameters)
    result = module.compile()(*[t.numpy() for t in inputs])
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", NAMES)
def test_zoo_model_through_torch_compile_is_one_compilation_matching_eager(zoo, name):
    torch._dynamo.reset()
    model, inputs = zoo.build(name)
    compiled = torch.compile(model, backend="cuvil")
    before, fallbacks = len(cuvil.compilations()), len(dynamo.fallback_reasons())
    with torch.no_grad():
        result, expected = compiled(*inputs), model(*inputs)
    torch.testing.assert_close(result, expected, rtol=1e-4, atol=1e-4)
    assert len(cuvil.compilations()) - before == 1
    assert dynamo.fallback_reasons()[fallbacks:] == []
    torch._dynamo.reset()


def test_gpt2_ops_carry_module_paths_down_to_the_embedding(zoo):
    model, inputs = zoo.build("gpt2")
    text = build_ir(model, list(inputs)).text
    gather = next(line for line in text.splitlines() if "cuvil.gather" in line)
    assert 'loc("embedding"("wte"' in gather
    assert '"attn.c_attn"' in text and '"mlp.0"' in text and '"lm_head"' in text
