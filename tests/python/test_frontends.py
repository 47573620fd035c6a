"""The front-end layer: the dtype table, the ops' shape rules from Python, the shared IR builder."""

from __future__ import annotations

import numpy as np
import pytest

import cuvil
from cuvil import _dtypes, frontends
from cuvil.frontends import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IRBuilder,
    NameLoc,
    TensorType,
)


@pytest.fixture(scope="module")
def ext():
    return _dtypes.extension()


def _module_of(dtype_mlir: str) -> str:
    t = f"tensor<2x{dtype_mlir}>"
    return (
        f"func.func @f(%a: {t}, %b: {t}) -> {t} {{\n"
        f"  %0 = cuvil.add %a, %b : ({t}, {t}) -> {t}\n"
        f"  return %0 : {t}\n}}\n"
    )


# ----- one dtype table ---------------------------------------------------------------


def test_dtype_table_lists_every_element_type_of_the_dialect(ext):
    names = [d.name for d in _dtypes.table()]
    assert names == [
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "int8",
        "int32",
        "int64",
        "bool",
    ]
    for d in _dtypes.table():
        ext.verify(_module_of(d.mlir))  # the ODS type constraint admits each one
        if d.numpy is not None:
            assert d.numpy.itemsize == d.itemsize or d.name == "bool"
    with pytest.raises(ext.CompileError, match="i16"):
        ext.verify(_module_of("i16"))


def test_python_dtype_lists_derive_from_the_table():
    compiled = [d.name for d in _dtypes.table() if d.compiled and d.in_numpy]
    assert _dtypes.supported_names() == ", ".join(compiled)
    assert _dtypes.supported_names() == "float32, float64, int32, int64, bool"
    assert cuvil._program.SUPPORTED_NAMES == _dtypes.supported_names()
    assert _dtypes.is_supported(np.float32) and not _dtypes.is_supported(np.float16)
    assert _dtypes.mlir_element_type(np.bool_) == "i1"
    assert _dtypes.dtype_from_name("int64") == np.dtype(np.int64)
    assert _dtypes.by_name("bfloat16").numpy is None
    with pytest.raises(KeyError, match="bfloat16"):
        _dtypes.dtype_from_name("bfloat16")


# ----- shape rules, asked from Python ----------------------------------------------------


@pytest.mark.parametrize(
    "op, types, attributes, expected",
    [
        ("cuvil.add", ["tensor<4x3xf32>", "tensor<3xf32>"], "", "tensor<4x3xf32>"),
        (
            "cuvil.compare",
            ["tensor<4xi32>", "tensor<i32>"],
            "{predicate = 2 : i64}",
            "tensor<4xi1>",
        ),
        ("cuvil.where", ["tensor<4x1xi1>", "tensor<3xf64>", "tensor<f64>"], "", "tensor<4x3xf64>"),
        ("cuvil.matmul", ["tensor<8x4x3xf32>", "tensor<3x5xf32>"], "", "tensor<8x4x5xf32>"),
        ("cuvil.exp", ["tensor<2x2xf32>"], "", "tensor<2x2xf32>"),
        (
            "cuvil.reduce_sum",
            ["tensor<4x3x2xf32>"],
            "{axes = array<i64: 0, 2>, keepdims = true}",
            "tensor<1x3x1xf32>",
        ),
        ("cuvil.reduce_max", ["tensor<4x3xi64>"], "{axes = array<i64: 1>}", "tensor<4xi64>"),
        (
            "cuvil.transpose",
            ["tensor<4x3x2xf32>"],
            "{permutation = array<i64: 2, 0, 1>}",
            "tensor<2x4x3xf32>",
        ),
        (
            "cuvil.concat",
            ["tensor<2x3xf32>", "tensor<5x3xf32>"],
            "{axis = 0 : i64}",
            "tensor<7x3xf32>",
        ),
        (
            "cuvil.slice",
            ["tensor<10x4xf32>"],
            "{start = array<i64: 1, 0>, limit = array<i64: 10, 4>, step = array<i64: 3, 1>}",
            "tensor<3x4xf32>",
        ),
        (
            "cuvil.conv2d",
            ["tensor<1x3x8x8xf32>", "tensor<4x3x3x3xf32>"],
            "{strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, "
            "dilations = array<i64: 1, 1>, groups = 1 : i64}",
            "tensor<1x4x4x4xf32>",
        ),
        (
            "cuvil.avg_pool2d",
            ["tensor<1x3x8x8xf32>"],
            "{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, "
            "padding = array<i64: 0, 0, 0, 0>}",
            "tensor<1x3x4x4xf32>",
        ),
        (
            "cuvil.layer_norm",
            ["tensor<4x8xf32>", "tensor<8xf32>", "tensor<8xf32>"],
            "{axis = 1 : i64, epsilon = 1.0e-05 : f64}",
            "tensor<4x8xf32>",
        ),
    ],
)
def test_infer_result_type_applies_the_ops_shape_rules(ext, op, types, attributes, expected):
    assert ext.infer_result_type(op, types, attributes) == expected


@pytest.mark.parametrize(
    "op, types, attributes, message",
    [
        ("cuvil.add", ["tensor<4x3xf32>", "tensor<5xf32>"], "", "not broadcast-compatible"),
        ("cuvil.add", ["tensor<3xf32>", "tensor<3xi32>"], "", "insert a cuvil.cast"),
        ("cuvil.matmul", ["tensor<4x3xf32>", "tensor<5x2xf32>"], "", "K=3 but rhs shape [5, 2]"),
        ("cuvil.reduce_sum", ["tensor<4xf32>"], "{axes = array<i64: 1>}", "out of range"),
        ("cuvil.softmax", ["tensor<4xf32>"], "", "requires attribute 'axis'"),
        ("cuvil.reshape", ["tensor<4xf32>"], "", "takes its result type as a parameter"),
        ("cuvil.frobnicate", ["tensor<4xf32>"], "", "unknown op 'cuvil.frobnicate'"),
        ("cuvil.neg", ["tensor<4xq32>"], "", "cannot parse operand type"),
    ],
)
def test_infer_result_type_reports_the_rules_diagnostic(ext, op, types, attributes, message):
    with pytest.raises(ext.TypeInferenceError, match="") as info:
        ext.infer_result_type(op, types, attributes)
    assert message in str(info.value)
    assert issubclass(ext.TypeInferenceError, ValueError)


def test_repeated_questions_get_the_same_answer(ext):
    args = ("cuvil.matmul", ["tensor<64x128xf32>", "tensor<128x128xf32>"], "")
    assert {ext.infer_result_type(*args) for _ in range(3)} == {"tensor<64x128xf32>"}
    with pytest.raises(ext.TypeInferenceError):
        ext.infer_result_type("cuvil.add", ["tensor<2xf32>", "tensor<3xf32>"], "")
    with pytest.raises(ext.TypeInferenceError):  # a cached failure fails again
        ext.infer_result_type("cuvil.add", ["tensor<2xf32>", "tensor<3xf32>"], "")


# ----- the shared builder and structured locations ---------------------------------------


def _onnx_like_model() -> tuple[IRBuilder, list]:
    """Two ONNX-style nodes (MatMul, Relu), each located by its node name."""
    model = FileLineColLoc("model.onnx", 0, 0)
    b = IRBuilder("onnx_graph", model)
    x = b.argument(TensorType((4, 8), "float32"))
    weight = np.arange(24, dtype=np.float32).reshape(8, 3) / 24.0
    with b.node("node_7", model):
        w = b.constant(weight)
        y = b.op("cuvil.matmul", [x, w])
    with b.node("node_8", model):
        z = b.op("cuvil.relu", [b.op("cuvil.sub", [y, b.constant(np.float32(0.5))])])
    return b, [z, weight]


def test_builder_attaches_node_names_as_name_locations():
    b, (z, _) = _onnx_like_model()
    assert z.type == TensorType((4, 3), "float32")
    text = b.module([z])
    matmul = next(line for line in text.splitlines() if '"cuvil.matmul"' in line)
    assert matmul.endswith('loc("node_7"("model.onnx":0:0))')
    relu = next(line for line in text.splitlines() if '"cuvil.relu"' in line)
    assert relu.endswith('loc("node_8"("model.onnx":0:0))')
    assert 'func.func @onnx_graph(%arg0: tensor<4x8xf32> loc("model.onnx":0:0))' in text


def test_hand_built_module_with_name_locations_verifies_and_compiles():
    b, (z, weight) = _onnx_like_model()
    program = b.program([z], input_names=["input"])
    module = frontends.to_ir_module(program, name="onnx_graph", source="model.onnx:0")
    assert isinstance(module, cuvil.IRModule)
    assert module.input_spec == {"input": cuvil.TensorSpec((4, 8), "float32")}
    assert module.output_spec == (cuvil.TensorSpec((4, 3), "float32"),)
    assert 'loc("node_7"("model.onnx":0:0))' in module.text
    x = np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_allclose(
        module.compile()(x), np.maximum(x @ weight - 0.5, 0.0), rtol=1e-5, atol=1e-6
    )
    assert '"node_7"' in module.inspect("input")  # the name survives into the compiled IR


def test_python_locations_nest_inside_node_names():
    b = IRBuilder("fx_graph")
    x = b.argument(TensorType((2, 2), "float64"))
    with b.node("encoder.layers.0.attn"):
        y = b.op("cuvil.tanh", [x], loc=FileLineColLoc("/m/model.py", 12, 9))
        z = b.op("cuvil.exp", [y])
    text = b.module([z])
    assert 'loc("encoder.layers.0.attn"("/m/model.py":12:9))' in text
    assert 'loc("encoder.layers.0.attn")' in text
    cuvil._dtypes.extension().verify(text)


def test_fused_and_call_site_locations_are_valid_mlir():
    py = FileLineColLoc("/m/model.py", 3, 5)
    fused = FusedLoc([NameLoc("conv1"), NameLoc("bn1", py)])
    call = CallSiteLoc(NameLoc("forward"), py)
    assert fused.to_mlir() == 'fused["conv1", "bn1"("/m/model.py":3:5)]'
    assert call.to_mlir() == 'callsite("forward" at "/m/model.py":3:5)'
    assert str(NameLoc("node_7", FileLineColLoc("model.onnx", 0, 0))) == (
        "node 'node_7' (model.onnx:0)"
    )
    b = IRBuilder("located")
    x = b.argument(TensorType((3,), "int32"))
    y = b.op("cuvil.neg", [x], loc=fused)
    z = b.op("cuvil.abs", [y], loc=call)
    cuvil._dtypes.extension().verify(b.module([z]))


def test_builder_rejects_an_invalid_op_naming_its_node():
    b = IRBuilder("bad")
    x = b.argument(TensorType((4, 3), "float32"))
    y = b.argument(TensorType((5,), "float32"))
    with b.node("node_3", FileLineColLoc("model.onnx", 0, 0)):
        with pytest.raises(cuvil.TraceError) as info:
            b.op("cuvil.add", [x, y])
    message = str(info.value)
    assert message.startswith("cuvil.add: operand shapes [4, 3] and [5] are not broadcast")
    assert "(4, 3) and (5,)" in message and "node 'node_3' (model.onnx:0)" in message


def test_given_result_type_ops_need_their_type():
    b = IRBuilder("reshape")
    x = b.argument(TensorType((4, 3), "float32"))
    with pytest.raises(TypeError, match="result_type"):
        b.op("cuvil.reshape", [x])
    y = b.op("cuvil.reshape", [x], result_type=TensorType((12,), "float32"))
    assert y.type.shape == (12,)


def test_tensor_types_round_trip_through_mlir_text():
    for text in ("tensor<f32>", "tensor<1x3x224x224xbf16>", "tensor<7xi1>"):
        assert str(TensorType.parse(text)) == text
    assert TensorType.of((2, 3), np.int64) == TensorType((2, 3), "int64")


def test_front_end_registry():
    assert "numpy" in frontends.available()
    assert frontends.get("numpy").name == "numpy"
    with pytest.raises(ValueError, match="available: .*numpy"):
        frontends.get("caffe")


def test_numpy_front_end_imports_a_model_by_input_spec():
    def model(x, w):
        return np.maximum(x @ w, 0.0)

    spec = {"x": cuvil.TensorSpec((2, 4)), "w": cuvil.TensorSpec((4, 5))}
    program = frontends.get("numpy").import_model(model, spec)
    assert program.input_names == ["x", "w"]
    assert program.outputs == [(np.dtype(np.float32), (2, 5))]
    assert '"cuvil.matmul"' in program.mlir


def test_eager_nn_ops_check_shapes_with_the_same_rules():
    x, w = np.ones((1, 3, 8, 8), np.float32), np.ones((4, 2, 3, 3), np.float32)
    with pytest.raises(cuvil.TraceError, match="weight shape \\[4, 2, 3, 3\\] expects 2 input"):
        cuvil.conv2d(x, w)
    with pytest.raises(cuvil.TraceError, match="cuvil.avg_pool2d: expects an NCHW input"):
        cuvil.avg_pool2d(np.ones((3, 8, 8), np.float32), 2)
    assert cuvil.max_pool2d(x, 2).shape == (1, 3, 4, 4)


def test_ops_with_a_given_result_type_are_checked_by_their_verifier(ext):
    ext.check_op("cuvil.reshape", ["tensor<4x3xf32>"], "", "tensor<2x6xf32>")
    ext.check_op("cuvil.broadcast_to", ["tensor<1x3xf32>"], "", "tensor<5x4x3xf32>")
    ext.check_op("cuvil.cast", ["tensor<3xf32>"], "", "tensor<3xi1>")
    with pytest.raises(ext.TypeInferenceError, match=r"cannot reshape \[4, 3\] \(12 elements\)"):
        ext.check_op("cuvil.reshape", ["tensor<4x3xf32>"], "", "tensor<5x2xf32>")
    with pytest.raises(
        ext.TypeInferenceError, match=r"cannot broadcast shape \[2, 3\] to \[4, 3\]"
    ):
        ext.check_op("cuvil.broadcast_to", ["tensor<2x3xf32>"], "", "tensor<4x3xf32>")
    b = IRBuilder("given")
    x = b.argument(TensorType((2, 3), "float32"))
    with pytest.raises(cuvil.TraceError, match="cuvil.broadcast_to: cannot broadcast"):
        b.op("cuvil.broadcast_to", [x], result_type=TensorType((4, 3), "float32"))


def test_numpy_broadcast_to_errors_come_from_the_verifier():
    with pytest.raises(cuvil.TraceError, match=r"cannot broadcast shape \[2, 3\] to \[4, 3\]"):
        cuvil.trace_to_mlir(lambda x: np.broadcast_to(x, (4, 3)) + 0, np.ones((2, 3), np.float32))
