"""The PyTorch importer: nn.Module and FX graphs into Cuvil IR, locations, modes and errors."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import UNSUPPORTED_TORCH_MODEL, line_of, run_python, subprocess_env
from torch import nn
from torch.nn import functional as F

import cuvil
from cuvil import frontends
from cuvil.frontend import InputSpecError, build_ir

THIS_FILE = __file__


class ConvNet(nn.Module):
    """Conv, batch norm, dropout, pooling and a classifier: what eval mode changes."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.drop = nn.Dropout(0.5)
        self.head = nn.Linear(4, 5)

    def forward(self, image):
        x = self.features(image)  # marker: features call
        x = F.adaptive_avg_pool2d(self.drop(x), 1).flatten(1)
        return self.head(x)  # marker: head call


def _conv_net() -> ConvNet:
    torch.manual_seed(0)
    model = ConvNet()
    with torch.no_grad():
        bn = model.features[1]
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    return model


class TwoInputs(nn.Module):
    def forward(self, x, y, scale: float = 2.0):
        return torch.tanh(x) * scale + y.sum(dim=-1, keepdim=True)


class Unsupported(nn.Module):
    def forward(self, x):
        return torch.cumprod(x, dim=0)  # marker: cumprod call


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(a, b.detach().numpy(), rtol=tol, atol=tol)


def test_torch_is_a_registered_front_end_that_imports_no_framework():
    assert "torch" in frontends.available()
    assert isinstance(frontends.for_model(ConvNet()), frontends.get("torch").__class__)
    code = "import sys, cuvil; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env()
    )
    assert result.stdout.strip() == "False", result.stderr


def test_module_imports_in_eval_mode_and_matches_pytorch():
    model = _conv_net().train()  # build_ir uses eval semantics whatever the module's mode
    x = torch.randn(2, 3, 8, 8)
    module = build_ir(model, {"image": (2, 3, 8, 8)})
    assert model.training, "the module's own mode is restored"
    assert module.name == "ConvNet"
    assert module.source == f"{THIS_FILE}:{line_of('class ConvNet', THIS_FILE)}"
    assert "cuvil.batch_norm" in module.text and "cuvil.dropout" not in module.text
    with torch.no_grad():
        expected = model.eval()(x)
    _close(module.compile()(x.numpy()), expected)


def test_parameters_become_constants_and_only_user_inputs_are_arguments():
    module = build_ir(_conv_net(), [torch.zeros(1, 3, 8, 8)])
    assert list(module.input_spec) == ["image"]
    signature = module.text.split("func.func", 1)[1].split("{", 1)[0]
    assert signature.count("%arg") == 1
    assert module.text.count("cuvil.constant") >= 4


def test_input_spec_forms_give_the_same_ir():
    forms = [
        {"x": (2, 3), "y": (2, 3)},
        [(2, 3), (2, 3)],
        [cuvil.TensorSpec((2, 3)), ((2, 3), torch.float32)],
        [torch.zeros(2, 3), torch.zeros(2, 3)],
    ]
    fingerprints = {build_ir(TwoInputs(), form).fingerprint for form in forms}
    assert len(fingerprints) == 1
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    compiled = build_ir(TwoInputs(), forms[0]).compile()
    _close(compiled(x.numpy(), y=y.numpy()), TwoInputs()(x, y))


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"x": (2, 3), "z": (2, 3)}, r"\['z'\] that are not parameters of TwoInputs\.forward"),
        ({"x": (2, 3)}, r"no spec for \['y'\]"),
        ((2, 3), r"is one shape; give a list of specs"),
        ([(2, 3)] * 4, "4 specs but TwoInputs.forward"),
    ],
)
def test_bad_input_specs_name_the_forward_parameters(spec, message):
    with pytest.raises(InputSpecError, match=message):
        build_ir(TwoInputs(), spec)


def test_training_mode_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="inference only .*model.eval\\(\\) semantics"):
        build_ir(_conv_net(), {"image": (1, 3, 8, 8)}, mode="training")


def test_ops_carry_fx_node_names_module_paths_and_source_lines():
    module = build_ir(_conv_net(), {"image": (1, 3, 8, 8)})
    line = line_of("marker: features call", THIS_FILE)
    conv = next(op for op in module.text.splitlines() if "cuvil.conv2d" in op)
    # loc("<FX node>"("<nn.Module path>"("<file>":<line>:0)))
    expected = rf'loc\("convolution"\("features\.0"\("{re.escape(THIS_FILE)}":{line}:0\)\)\)'
    assert re.search(expected, conv), conv
    head = [op for op in module.text.splitlines() if "cuvil.matmul" in op]
    assert head and all('"head"' in op for op in head)
    assert f":{line_of('marker: head call', THIS_FILE)}:0" in head[0]


def test_unsupported_op_names_the_op_the_fx_node_and_the_line():
    with pytest.raises(cuvil.UnsupportedConstructError) as info:
        build_ir(Unsupported(), {"x": (4,)})
    message = str(info.value)
    assert "ATen op aten.cumprod" in message
    assert "FX node 'cumprod'" in message
    assert f"{THIS_FILE}:{line_of('marker: cumprod call', THIS_FILE)}" in message


def test_transformer_encoder_layer_matches_pytorch():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, batch_first=True).eval()
    x = torch.randn(2, 5, 16)
    module = build_ir(layer, {"src": x})
    with torch.no_grad():
        expected = layer(x)
    np.testing.assert_allclose(module.compile()(x.numpy()), expected.numpy(), atol=1e-4)
    assert '"self_attn"' in module.text and '"linear1"' in module.text


def test_embedding_lookup_is_a_runtime_gather():
    class Embed(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(10, 4)

        def forward(self, ids):
            return self.wte(ids) * 2.0  # marker: embedding call

    torch.manual_seed(0)
    model = Embed()
    module = build_ir(model, [((2, 3), "int64")])
    gather = next(op for op in module.text.splitlines() if "cuvil.gather" in op)
    line = line_of("marker: embedding", THIS_FILE)
    assert f'loc("embedding"("wte"("{THIS_FILE}":{line}:0)))' in gather
    ids = torch.tensor([[0, 9, 3], [3, 3, 1]])
    _close(module.compile()(ids.numpy()), model(ids))


def test_results_cuvil_does_not_compute_are_named_when_used():
    class PoolIndices(nn.Module):
        def forward(self, x):
            return F.max_pool2d(x, 2, return_indices=True)[1]

    with pytest.raises(cuvil.UnsupportedConstructError) as info:
        build_ir(PoolIndices(), {"x": (1, 1, 4, 4)})
    assert "the indices of aten.max_pool2d_with_indices (not computed by Cuvil)" in str(info.value)


def test_graph_module_from_symbolic_trace_imports_with_its_parameters():
    model = _conv_net().eval()
    traced = torch.fx.symbolic_trace(model)
    module = build_ir(traced, {"image": (1, 3, 8, 8)})
    x = torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        _close(module.compile()(x.numpy()), model(x))


def test_upsampling_stays_one_op_in_exported_and_traced_graphs():
    class Decoder(nn.Module):
        def forward(self, x):
            up = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
            return F.interpolate(up, size=(11, 13), mode="bicubic") * 2

    model = Decoder().eval()
    x = torch.randn(1, 2, 4, 5)
    with torch.no_grad():
        expected = model(x)
    for source in (model, torch.fx.symbolic_trace(model)):
        module = build_ir(source, [x])
        # One interpolation matrix per resized axis (no element-wise index arithmetic).
        assert module.text.count("cuvil.matmul") == 4 and "cuvil.gather" not in module.text
        _close(module.compile()(x.numpy()), expected)


def test_aten_graph_module_is_walked_as_it_is():
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(x, w):
        return torch.relu(x @ w) + 1.0

    graph = make_fx(f, tracing_mode="fake")(torch.zeros(2, 3), torch.zeros(3, 4))
    module = build_ir(graph, [(2, 3), (3, 4)])
    assert list(module.input_spec) == ["x_1", "w_1"]
    assert 'loc("mm"' in module.text
    x, w = torch.randn(2, 3), torch.randn(3, 4)
    _close(module.compile()(x.numpy(), w.numpy()), f(x, w))


def test_buffer_updates_are_not_results_only_the_model_outputs_are():
    class Counting(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("calls", torch.zeros(()))

        def forward(self, x):
            self.calls.add_(1)
            return x * 2.0, x.sum()

    module = build_ir(Counting(), {"x": (3,)})
    assert [tuple(spec.shape) for spec in module.output_spec] == [(3,), ()]
    doubled, total = module.compile()(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(doubled, [0.0, 2.0, 4.0])
    assert total == 3.0


def test_export_failure_is_an_unsupported_construct_naming_the_model():
    class DataDependent(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    with pytest.raises(cuvil.UnsupportedConstructError, match="torch.export could not export"):
        build_ir(DataDependent(), {"x": (3,)})


# ----- cuvil compile model.py ---------------------------------------------------------------

_MODEL_FILE = """
import torch
from torch import nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))
"""


@pytest.mark.parametrize(
    "declaration",
    [
        "model = Tiny()\nexample_inputs = (torch.randn(2, 4),)\n",
        "def cuvil_model():\n    return Tiny(), (torch.randn(2, 4),)\n",
    ],
    ids=["variables", "function"],
)
def test_cli_compiles_the_model_a_file_declares(tmp_path, declaration):
    script = tmp_path / "model.py"
    script.write_text(_MODEL_FILE + declaration)
    result = run_python(["-m", "cuvil", "compile", str(script)])
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "// cuvil: Tiny(tensor<2x4xf32>) -> (tensor<2x3xf32>)" in out
    assert f"defined at {script}:{line_of('class Tiny', str(script))}" in out
    assert 'loc("fc"(' in out  # the module path of the Linear layer's ops


def test_cli_reports_an_unsupported_model_with_the_op(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(UNSUPPORTED_TORCH_MODEL)
    result = run_python(["-m", "cuvil", "compile", str(script)])
    assert result.returncode == 1
    assert "UnsupportedConstructError: ATen op aten.cumprod (FX node 'cumprod')" in result.stderr
