"""``torch.compile(model, backend="cuvil")``: registration, compiled results, eager fallback."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest
import torch
from conftest import line_of, subprocess_env
from torch import nn

import cuvil
from cuvil.frontends.torch import dynamo

THIS_FILE = __file__


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.GELU())
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        return torch.softmax(self.out(self.body(x)), dim=-1)


class WithCumsum(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        y = torch.relu(self.proj(x))
        return torch.cumprod(y, dim=0) * 2.0  # marker: cumprod


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _model(cls):
    torch.manual_seed(0)
    return cls().eval()


def test_whole_graph_is_one_cuvil_compilation_matching_eager():
    model = _model(Classifier)
    compiled = torch.compile(model, backend="cuvil")
    x = torch.randn(5, 6)
    before = len(cuvil.compilations())
    with torch.no_grad():
        result = compiled(x)
        expected = model(x)
        again = compiled(x + 1.0)
    torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(again, model(x + 1.0).detach(), rtol=1e-5, atol=1e-6)
    records = cuvil.compilations()[before:]
    assert len(records) == 1
    assert records[0].function == "forward"
    assert records[0].source.startswith(f"{THIS_FILE}:")
    # The IR is located at FX nodes and module paths ("body.0", "out").
    assert '"body.0"' in records[0].mlir and '"out"' in records[0].mlir


def test_unsupported_op_runs_eagerly_with_the_reason_logged(caplog):
    model = _model(WithCumsum)
    compiled = torch.compile(model, backend="cuvil")
    x = torch.randn(3, 4)
    before = len(cuvil.compilations())
    with caplog.at_level(logging.WARNING, logger="cuvil"), torch.no_grad():
        result = compiled(x)
        expected = model(x)
    torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-6)
    line = line_of("marker: cumprod", THIS_FILE)
    reason = dynamo.last_fallback_reason()
    assert f"ATen op aten.cumprod (FX node 'cumprod') at {THIS_FILE}:{line}" in reason
    assert "supported part(s) compiled, the rest runs eagerly" in reason
    messages = [r.getMessage() for r in caplog.records]
    assert any("running PyTorch eager instead of compiled code" in m for m in messages)
    # linear+relu before cumprod is compiled; the lone multiply after it stays eager
    # (single-op parts are not worth a call into compiled code).
    assert "1 supported part(s) compiled" in reason
    assert len(cuvil.compilations()) - before == 1


def test_gradients_required_run_eagerly_with_the_fix():
    model = _model(Classifier)
    compiled = torch.compile(model, backend="cuvil")
    before = len(cuvil.compilations())
    result = compiled(torch.randn(5, 6))
    assert result.requires_grad
    assert "call the model under torch.no_grad()" in dynamo.last_fallback_reason()
    assert len(cuvil.compilations()) == before


def test_automatic_dynamic_sizes_compile_once_for_all_later_sizes():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU()).eval()
    compiled = torch.compile(model, backend="cuvil")
    before = len(cuvil.compilations())
    with torch.no_grad():
        for batch in (2, 3, 5, 3, 2, 9):
            x = torch.randn(batch, 4)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-6)
    # The first size compiles statically; Dynamo marks the batch dimension symbolic
    # when the second size comes, and the backend compiles that graph once, with the
    # batch symbolic (the weights keep their static shapes): 3, 5 and 9 reuse it.
    shapes = [r.input_types for r in cuvil.compilations()[before:]]
    assert len(shapes) == 2
    assert shapes[0][-1][1] == (2, 4)
    assert isinstance(shapes[1][-1][1][0], str) and shapes[1][-1][1][1:] == (4,)


@pytest.mark.parametrize("first", ["torch", "cuvil"])
def test_backend_is_registered_in_either_import_order(first):
    second = "cuvil" if first == "torch" else "torch"
    script = textwrap.dedent(
        f"""
        import {first}, {second}
        import sys
        assert "torch._dynamo" not in sys.modules, "cuvil must not import Dynamo early"
        from torch import nn
        model = nn.Sequential(nn.Linear(3, 2), nn.Tanh()).eval()
        x = torch.randn(4, 3)
        with torch.no_grad():
            result = torch.compile(model, backend="cuvil")(x)
            torch.testing.assert_close(result, model(x))
        print(len(cuvil.compilations()), "cuvil" in torch._dynamo.list_backends())
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=subprocess_env()
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["1", "True"]


def test_float_attributes_passed_as_tensors_are_constants_guarded_by_value():
    # With dynamic=True Dynamo passes LayerNorm's eps as a 0-d tensor read with .item()
    # and does not guard on its value: the backend compiles it in as a constant and
    # compiles again when a call brings another value.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6)).eval()
    compiled = torch.compile(model, backend="cuvil", dynamic=True)
    before = len(cuvil.compilations())
    with torch.no_grad():
        for batch in (2, 3, 7):
            x = torch.randn(batch, 4)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
        first = cuvil.compilations()[before:]
        model[1].eps = 0.5
        x = torch.randn(5, 4)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    assert len(first) == 1
    # eps is no input of the compiled code; the batch is symbolic.
    assert all(dtype == "float32" and shape for dtype, shape in first[0].input_types)
    assert any(isinstance(shape[0], str) for _, shape in first[0].input_types)
    assert len(cuvil.compilations()) - before == 2
