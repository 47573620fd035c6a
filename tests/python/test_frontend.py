"""``cuvil.frontend.build_ir``: IR from Python callables, input specs, modes, compiling, errors."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from conftest import line_of

import cuvil
from cuvil.frontend import build_ir

THIS_FILE = os.path.abspath(__file__)


class TinyMLP:
    """Two dense layers with NumPy weights held as attributes."""

    def __init__(self, seed=0, d_in=16, d_hidden=32, d_out=8):
        rng = np.random.default_rng(seed)
        self.w1 = rng.standard_normal((d_in, d_hidden)).astype(np.float32)
        self.b1 = rng.standard_normal(d_hidden).astype(np.float32)
        self.w2 = rng.standard_normal((d_hidden, d_out)).astype(np.float32)

    def __call__(self, x):  # MARK: mlp-def
        h = x @ self.w1 + self.b1  # MARK: mlp-layer1
        h = np.maximum(h, 0.0)  # MARK: mlp-relu
        return h @ self.w2  # MARK: mlp-layer2


def affine(x, w, bias=None):
    y = x @ w
    return y if bias is None else y + bias


def dropout_block(x):
    return cuvil.relu(cuvil.dropout(x, ratio=0.5)) * 2.0  # MARK: dropout


def python_if(x):
    if x.sum() > 0:  # MARK: python-if
        return x
    return -x


def _loc(marker: str) -> str:
    return f'loc("{THIS_FILE}":{line_of(marker, THIS_FILE)}:'


def _op_lines(text: str, op: str) -> list[str]:
    return [line for line in text.splitlines() if f'"cuvil.{op}"' in line]


def test_mlp_object_ir_has_its_ops_at_the_users_lines():
    module = build_ir(model=TinyMLP(), input_spec={"x": (4, 16)}, target="cpu")
    text = module.text
    assert text.startswith("module {\n  func.func @TinyMLP(")
    assert f"%arg0: tensor<4x16xf32> {_loc('MARK: mlp-def')}" in text
    assert "-> (tensor<4x8xf32>)" in text
    first, second = _op_lines(text, "matmul")
    assert _loc("MARK: mlp-layer1") in first and "tensor<16x32xf32>" in first
    assert _loc("MARK: mlp-layer2") in second and "-> tensor<4x8xf32>" in second
    assert _loc("MARK: mlp-layer1") in _op_lines(text, "add")[0]
    assert _loc("MARK: mlp-relu") in _op_lines(text, "max")[0]
    # The weights are baked in as constants (three arrays plus the 0.0 of np.maximum).
    assert len(_op_lines(text, "constant")) == 4
    assert module.name == "TinyMLP" and module.func_name == "TinyMLP"
    assert module.target == "cpu" and module.mode == "inference"
    assert module.input_spec == {"x": cuvil.TensorSpec((4, 16), "float32")}
    assert module.output_spec == (cuvil.TensorSpec((4, 8), "float32"),)


def test_fingerprint_is_a_stable_structural_sha256():
    first = build_ir(TinyMLP(seed=3), {"x": (4, 16)})
    second = build_ir(TinyMLP(seed=3), {"x": (4, 16)})
    assert re.fullmatch(r"[0-9a-f]{64}", first.fingerprint)
    assert first.fingerprint == second.fingerprint
    assert build_ir(TinyMLP(seed=4), {"x": (4, 16)}).fingerprint != first.fingerprint
    assert build_ir(TinyMLP(seed=3), {"x": (2, 16)}).fingerprint != first.fingerprint
    text = repr(first)
    assert "TinyMLP(x: float32[4, 16]) -> (float32[4, 8])" in text
    assert f"fingerprint={first.fingerprint[:12]}" in text and "mode='inference'" in text


class TwoLayers:
    """Two square layers whose weights can be swapped."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def __call__(self, x):
        return (x @ self.first) @ self.second


def test_fingerprint_tells_weights_apart_by_place_and_value():
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    spec = {"x": (4, 16)}
    prints = {
        build_ir(TwoLayers(a, b), spec).fingerprint,
        build_ir(TwoLayers(b, a), spec).fingerprint,
        build_ir(TwoLayers(a, a), spec).fingerprint,
        build_ir(TwoLayers(b, b), spec).fingerprint,
    }
    assert len(prints) == 4
    changed = a.copy()
    changed[15, 15] = np.nextafter(changed[15, 15], np.float32(np.inf))
    assert (
        build_ir(TwoLayers(changed, b), spec).fingerprint
        != build_ir(TwoLayers(a, b), spec).fingerprint
    )
    assert (
        build_ir(TwoLayers(a, b), spec).fingerprint
        == build_ir(TwoLayers(a.copy(), b.copy()), spec).fingerprint
    )


def test_compiled_mlp_matches_numpy(rng):
    model = TinyMLP(seed=1)
    compiled = build_ir(model, {"x": (4, 16)}).compile()
    x = rng.standard_normal((4, 16), dtype=np.float32)
    expected = model(x)
    result = compiled(x)
    assert isinstance(result, np.ndarray) and result.dtype == np.float32
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(compiled(x=x), expected, rtol=1e-5, atol=1e-5)
    # A non-contiguous input of the right dtype and shape is accepted (copied).
    np.testing.assert_allclose(compiled(np.asfortranarray(x)), expected, rtol=1e-5, atol=1e-5)
    assert compiled(x) is not result
    assert compiled.compilation in cuvil.compilations()
    assert compiled.compilation.function == "TinyMLP"
    assert "TinyMLP(x: float32[4, 16])" in repr(compiled)


def test_spec_forms_order_and_defaults(rng):
    spec = {"w": cuvil.TensorSpec([8, 3], "float64"), "x": ((5, 8), np.float64)}
    module = build_ir(affine, spec)
    # Inputs follow the function's parameters, whatever the order of input_spec.
    assert list(module.input_spec) == ["x", "w"]
    assert module.input_spec["w"] == cuvil.TensorSpec((8, 3), "float64")
    assert "(%arg0: tensor<5x8xf64>" in module.text and "%arg1: tensor<8x3xf64>" in module.text
    assert "cuvil.add" not in module.text  # `bias` kept its default, None
    compiled = module.compile()
    x, w = rng.standard_normal((5, 8)), rng.standard_normal((8, 3))
    np.testing.assert_allclose(compiled(x, w), x @ w, rtol=1e-12)
    np.testing.assert_allclose(compiled(w=w, x=x), x @ w, rtol=1e-12)

    with_bias = build_ir(affine, {"x": (5, 8), "w": (8, 3), "bias": 3}, dtype="int32")
    assert with_bias.input_spec["bias"] == cuvil.TensorSpec((3,), "int32")
    xi = np.arange(40, dtype=np.int32).reshape(5, 8)
    wi = np.ones((8, 3), np.int32)
    bi = np.array([1, 2, 3], np.int32)
    np.testing.assert_array_equal(with_bias.compile()(xi, wi, bi), xi @ wi + bi)


def test_none_dim_is_a_missing_shape_attr():
    with pytest.raises(cuvil.ShapeSpecError, match="Missing shape attr") as info:
        build_ir(TinyMLP(), {"x": (None, 16)})
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert "input 'x'" in message and "dim 0" in message and "tuple of ints" in message
    with pytest.raises(cuvil.ShapeSpecError, match="Missing shape attr.*input 'x'"):
        build_ir(TinyMLP(), {"x": None})


def test_symbolic_dim_is_not_supported_yet():
    spec = cuvil.TensorSpec(shape=(1, 3, "h", "w"), dtype="float32")
    with pytest.raises(cuvil.ShapeSpecError) as info:
        build_ir(lambda x: x * 2.0, {"x": spec})
    message = str(info.value)
    assert "input 'x'" in message and "'h'" in message and "dim 2" in message
    assert "symbolic dimensions are not supported" in message and "give an int" in message


@pytest.mark.parametrize(
    "spec, problem",
    [
        ({"x": (4, 0)}, "dims must be positive"),
        ({"x": (4, 2.5)}, "dims must be ints"),
        ({"x": ((4, 16), "uint8")}, "unsupported dtype uint8"),
        ({"x": "4x16"}, "a str"),
    ],
)
def test_invalid_specs_name_the_input(spec, problem):
    with pytest.raises(cuvil.InputSpecError, match=re.escape(problem)) as info:
        build_ir(TinyMLP(), spec)
    assert "input 'x'" in str(info.value)


def test_spec_names_must_match_the_parameters():
    with pytest.raises(cuvil.InputSpecError) as info:
        build_ir(affine, {"x": (2, 3), "weights": (3, 4)})
    message = str(info.value)
    assert "affine(x, w, bias)" in message
    assert "no shape for 'w'" in message and "'weights' not among its parameters" in message
    with pytest.raises(cuvil.InputSpecError, match="'y' not among its parameters"):
        build_ir(TinyMLP(), {"x": (4, 16), "y": (4, 16)})
    with pytest.raises(cuvil.InputSpecError, match="must map parameter names"):
        build_ir(TinyMLP(), [(4, 16)])


def test_training_mode_keeps_dropout_and_refuses_to_compile():
    module = build_ir(dropout_block, {"x": (4, 6)}, mode="training")
    assert module.mode == "training"
    (dropout,) = _op_lines(module.text, "dropout")
    assert "<{ratio = 0.5 : f64}>" in dropout
    assert _loc("MARK: dropout") in dropout
    with pytest.raises(cuvil.CompileError) as info:
        module.compile()
    message = str(info.value)
    assert "training graphs cannot be compiled by this version" in message
    assert "mode='inference'" in message
    with pytest.raises(cuvil.CompileError, match="training graphs cannot be compiled"):
        module.inspect("optimized")


def test_inference_mode_compiles_dropout_as_identity():
    module = build_ir(dropout_block, {"x": (4, 6)}, mode="inference")
    assert _op_lines(module.text, "dropout")  # traced, then removed by the compiler
    compiled = module.compile()
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    np.testing.assert_array_equal(compiled(x), np.maximum(x, 0) * 2.0)
    assert "cuvil.dropout" in module.inspect("input")
    assert "cuvil.dropout" not in module.inspect("optimized")
    assert "cuvil.dropout" not in compiled.inspect("optimized")


def test_inspect_compiles_on_demand_and_checks_the_stage():
    module = build_ir(TinyMLP(seed=5), {"x": (4, 16)})
    assert "cuvil.matmul" in module.inspect()
    llvm = module.inspect("llvm")
    assert "define" in llvm
    unfused = module.compile(enable_fusion=False)
    assert unfused is module.compile(enable_fusion=False) and not unfused.enable_fusion
    assert module.compile() is not unfused
    with pytest.raises(ValueError, match="unknown stage 'mlir'.*input, optimized"):
        module.inspect("mlir")


def test_other_targets_and_modes_are_rejected():
    with pytest.raises(
        ValueError, match=r"unknown target 'rocm'; registered targets: c, cpu, cuda or wasm"
    ):
        build_ir(TinyMLP(), {"x": (4, 16)}, target="rocm")
    with pytest.raises(ValueError, match=r"unknown mode 'eval'.*'inference', 'training'"):
        build_ir(TinyMLP(), {"x": (4, 16)}, mode="eval")
    with pytest.raises(TypeError, match="cannot import a ndarray: build_ir accepts a Python"):
        build_ir(np.ones(3), {"x": (3,)})
    with pytest.raises(TypeError, match="the class TinyMLP, not a model; pass an instance"):
        build_ir(TinyMLP, {"x": (4, 16)})


def test_unsupported_construct_names_it_and_the_line():
    with pytest.raises(cuvil.UnsupportedConstructError) as info:
        build_ir(python_if, {"x": (3, 4)})
    message = str(info.value)
    assert "Python control flow on a traced array" in message
    assert f"{THIS_FILE}:{line_of('MARK: python-if', THIS_FILE)}" in message
    assert any("no Python fallback" in note for note in info.value.__notes__)


def test_invalid_program_reports_the_shapes():
    with pytest.raises(cuvil.TraceError, match=r"\(4, 10\).*\(16, 32\)"):
        build_ir(TinyMLP(), {"x": (4, 10)})


def test_jit_functions_build_too(rng):
    @cuvil.jit
    def scaled(x):
        return np.tanh(x) * 3.0

    module = build_ir(scaled, {"x": (2, 5)})
    assert "cuvil.tanh" in module.text
    x = rng.standard_normal((2, 5), dtype=np.float32)
    np.testing.assert_allclose(module.compile()(x), np.tanh(x) * 3.0, rtol=1e-5, atol=1e-6)


def test_compiled_call_checks_inputs_against_the_spec():
    compiled = build_ir(TinyMLP(), {"x": (4, 16)}).compile()
    x = np.zeros((4, 16), np.float32)
    with pytest.raises(TypeError, match=r"input 'x' has dtype float64.*float32"):
        compiled(x.astype(np.float64))
    with pytest.raises(ValueError, match=r"input 'x' has shape \(2, 16\).*\(4, 16\)"):
        compiled(x[:2])
    with pytest.raises(TypeError, match="input 'x' must be a numpy.ndarray.*got list"):
        compiled(x.tolist())
    with pytest.raises(TypeError, match="missing input"):
        compiled()
    with pytest.raises(TypeError, match="takes 1 input"):
        compiled(x, x)
    with pytest.raises(TypeError, match="no input 'y'"):
        compiled(y=x)
