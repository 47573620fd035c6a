"""ONNX operator table: one single-node model per operator and variant, against ONNX Runtime.

Each case builds a model with ``onnx.helper`` (inputs wrapped in ``Const`` are
initializers, so they are known at import time), runs it in ONNX Runtime and
through ``cuvil.load_onnx(...).compile()``, and compares with the case's
tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import cuvil

helper = onnx.helper

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32, low=None):
    x = RNG.standard_normal(shape).astype(dtype)
    return np.abs(x) + low if low is not None else x


def ints(*values):
    return np.asarray(values, dtype=np.int64)


@dataclass
class Const:
    """An input given as an initializer (known when the model is imported)."""

    value: np.ndarray


@dataclass
class Case:
    id: str
    op: str
    inputs: list
    attrs: dict = field(default_factory=dict)
    opset: int = 17
    outputs: int = 1
    rtol: float = 1e-5
    atol: float = 1e-6


def model_of(case: Case):
    """The single-node model of ``case`` and the feeds of its runtime inputs."""
    names, graph_inputs, initializers, feeds = [], [], [], {}
    for index, item in enumerate(case.inputs):
        if item is None:
            names.append("")
            continue
        name = f"in{index}"
        names.append(name)
        if isinstance(item, Const):
            initializers.append(onnx.numpy_helper.from_array(np.asarray(item.value), name))
            continue
        elem = helper.np_dtype_to_tensor_dtype(item.dtype)
        graph_inputs.append(helper.make_tensor_value_info(name, elem, item.shape))
        feeds[name] = item
    outputs = [f"out{i}" for i in range(case.outputs)]
    node = helper.make_node(case.op, names, outputs, name=f"{case.op.lower()}_node", **case.attrs)
    # Output types are left to ONNX shape inference.
    graph = helper.make_graph(
        [node],
        case.id,
        graph_inputs,
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)])
    model = onnx.shape_inference.infer_shapes(model)
    return model, feeds


def _reference(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _cuvil(model, feeds):
    compiled = cuvil.load_onnx(model).compile()
    result = compiled(**feeds)
    return list(result) if isinstance(result, tuple) else [result]


X4 = rand(2, 3, 8, 8)
X3 = rand(2, 4, 6)
POS = rand(2, 3, 4, low=0.1)

CASES = [
    # ----- elementwise binary and unary
    Case("add_broadcast", "Add", [rand(2, 3, 4), rand(3, 1)]),
    Case("sub_const", "Sub", [rand(2, 3), Const(rand(3))]),
    Case("mul", "Mul", [rand(4, 5), rand(4, 5)]),
    Case("div", "Div", [rand(4, 5), rand(4, 5, low=0.5)]),
    Case("pow_scalar_exp", "Pow", [POS, Const(np.asarray(2.5, np.float32))], rtol=1e-5),
    Case("pow_int_exp", "Pow", [POS, Const(np.asarray(3, np.int64))], rtol=1e-5),
    Case("max_variadic", "Max", [rand(3, 4), rand(4), rand(3, 1)]),
    Case("min", "Min", [rand(3, 4), rand(3, 4)]),
    Case("sum_variadic", "Sum", [rand(3, 4), rand(4), rand(3, 4)]),
    *[
        Case(op.lower(), op, [rand(3, 5)])
        for op in ("Relu", "Sigmoid", "Tanh", "Neg", "Abs", "Exp", "Erf")
    ],
    Case("sin", "Sin", [rand(3, 5) * 30]),
    Case("cos", "Cos", [rand(3, 5) * 30]),
    Case("floor", "Floor", [rand(3, 5) * 4]),
    Case("ceil", "Ceil", [rand(3, 5) * 4]),
    Case(
        "round_ties_even",
        "Round",
        [np.asarray([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4]], np.float32)],
    ),
    Case("div_int_truncates", "Div", [ints(7, -7, 7, -7, 6), ints(2, 2, -2, -2, 3)]),
    Case("mod_int", "Mod", [ints(7, -7, 7, -7, 6), ints(3, 3, -3, -3, 3)]),
    Case("mod_fmod_float", "Mod", [rand(3, 5) * 5, rand(3, 5, low=0.5)], {"fmod": 1}),
    Case("mod_fmod_int", "Mod", [ints(7, -7, 7, -7), ints(3, 3, -3, -3)], {"fmod": 1}),
    Case("sqrt", "Sqrt", [POS]),
    Case("log", "Log", [POS]),
    Case("reciprocal", "Reciprocal", [POS]),
    Case("leaky_relu", "LeakyRelu", [rand(3, 5)], {"alpha": 0.3}),
    Case("prelu_per_channel", "PRelu", [rand(2, 3, 4, 4), Const(rand(3, 1, 1))]),
    Case("swish", "Swish", [rand(3, 5) * 3], {"alpha": 1.5}, opset=24),
    Case("elu", "Elu", [rand(3, 5) * 30], {"alpha": 0.7}),
    Case("selu", "Selu", [rand(3, 5) * 3]),
    Case("softplus", "Softplus", [rand(3, 5) * 40]),
    Case("mish", "Mish", [rand(3, 5) * 4], opset=18),
    Case("hard_sigmoid", "HardSigmoid", [rand(3, 5) * 4], {"alpha": 0.3, "beta": 0.4}),
    Case("hard_swish", "HardSwish", [rand(3, 5) * 4], opset=14),
    Case("gelu_erf", "Gelu", [rand(3, 5)], opset=20),
    Case("gelu_tanh", "Gelu", [rand(3, 5)], {"approximate": "tanh"}, opset=20),
    Case("clip_inputs", "Clip", [rand(3, 5), Const(np.float32(-0.5)), Const(np.float32(0.3))]),
    Case("clip_max_only", "Clip", [rand(3, 5), None, Const(np.float32(0.3))]),
    Case("clip_attrs_opset6", "Clip", [rand(3, 5)], {"min": -0.2, "max": 0.4}, opset=6),
    # ----- comparisons and selection
    *[
        Case(op.lower(), op, [rand(3, 4), rand(4)])
        for op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual")
    ],
    Case("equal_int", "Equal", [ints(1, 2, 3), ints(3, 2, 1)]),
    Case("not", "Not", [rand(3, 4) > 0]),
    Case("where", "Where", [rand(3, 4) > 0, rand(3, 4), rand(4)]),
    Case("cast_f2i", "Cast", [rand(3, 4) * 5], {"to": onnx.TensorProto.INT32}),
    Case("cast_i2f", "Cast", [ints(1, -2, 3)], {"to": onnx.TensorProto.FLOAT}),
    Case("cast_to_bool", "Cast", [rand(3, 4)], {"to": onnx.TensorProto.BOOL}),
    # ----- softmax family, opset semantics
    Case("softmax_axis1_opset13", "Softmax", [X3], {"axis": 1}, opset=13),
    Case("softmax_default_opset13", "Softmax", [X3], opset=13),
    Case("softmax_flatten_opset11", "Softmax", [X3], {"axis": 1}, opset=11),
    Case("log_softmax_opset13", "LogSoftmax", [X3], {"axis": -1}, opset=13),
    Case("log_softmax_flatten_opset11", "LogSoftmax", [X3], opset=11),
    # ----- contractions
    Case("matmul_2d", "MatMul", [rand(3, 4), rand(4, 5)], rtol=1e-5, atol=1e-5),
    Case("matmul_batched_broadcast", "MatMul", [rand(2, 1, 3, 4), rand(3, 4, 5)], atol=1e-5),
    Case("matmul_vector_left", "MatMul", [rand(4), rand(2, 4, 5)], atol=1e-5),
    Case("matmul_vector_right", "MatMul", [rand(2, 3, 4), rand(4)], atol=1e-5),
    Case("gemm_plain", "Gemm", [rand(3, 4), Const(rand(4, 5)), Const(rand(5))], atol=1e-5),
    Case(
        "gemm_trans_alpha_beta",
        "Gemm",
        [rand(4, 3), rand(5, 4), rand(3, 5)],
        {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0},
        atol=1e-5,
    ),
    Case("gemm_no_c", "Gemm", [rand(3, 4), rand(4, 2)], atol=1e-5),
    # ----- convolutions
    Case("conv_basic", "Conv", [X4, Const(rand(4, 3, 3, 3)), Const(rand(4))], atol=1e-5),
    Case(
        "conv_pads_strides",
        "Conv",
        [X4, Const(rand(4, 3, 3, 3))],
        {"pads": [1, 0, 2, 1], "strides": [2, 1]},
        atol=1e-5,
    ),
    Case("conv_dilation", "Conv", [X4, Const(rand(2, 3, 3, 3))], {"dilations": [2, 2]}, atol=1e-5),
    Case(
        "conv_groups_depthwise",
        "Conv",
        [rand(1, 4, 7, 7), Const(rand(4, 1, 3, 3))],
        {"group": 4, "pads": [1, 1, 1, 1]},
        atol=1e-5,
    ),
    Case(
        "conv_groups_2",
        "Conv",
        [rand(1, 4, 7, 7), Const(rand(6, 2, 3, 3))],
        {"group": 2},
        atol=1e-5,
    ),
    Case(
        "conv_same_upper",
        "Conv",
        [rand(1, 3, 7, 7), Const(rand(2, 3, 4, 4))],
        {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
        atol=1e-5,
    ),
    Case(
        "conv_same_lower",
        "Conv",
        [rand(1, 3, 7, 7), Const(rand(2, 3, 4, 4))],
        {"auto_pad": "SAME_LOWER"},
        atol=1e-5,
    ),
    Case(
        "conv_valid",
        "Conv",
        [rand(1, 3, 7, 7), Const(rand(2, 3, 3, 3))],
        {"auto_pad": "VALID"},
        atol=1e-5,
    ),
    Case("conv_runtime_weight", "Conv", [rand(1, 3, 6, 6), rand(2, 3, 3, 3)], atol=1e-5),
    Case(
        "conv_1d",
        "Conv",
        [rand(2, 3, 10), Const(rand(4, 3, 3)), Const(rand(4))],
        {"pads": [1, 1], "strides": [2]},
        atol=1e-5,
    ),
    Case(
        "conv_transpose_basic",
        "ConvTranspose",
        [rand(1, 3, 5, 5), Const(rand(3, 2, 3, 3)), Const(rand(2))],
        atol=1e-5,
    ),
    Case(
        "conv_transpose_stride_pads",
        "ConvTranspose",
        [rand(1, 3, 5, 5), Const(rand(3, 2, 3, 3))],
        {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
        atol=1e-5,
    ),
    Case(
        "conv_transpose_groups_dilation",
        "ConvTranspose",
        [rand(1, 4, 4, 5), Const(rand(4, 3, 2, 3))],
        {"group": 2, "dilations": [2, 1], "strides": [1, 2]},
        atol=1e-5,
    ),
    Case(
        "conv_transpose_output_shape",
        "ConvTranspose",
        [rand(1, 2, 4, 4), Const(rand(2, 2, 3, 3))],
        {"strides": [2, 2], "output_shape": [8, 8]},
        atol=1e-5,
    ),
    Case(
        "conv_transpose_same_upper",
        "ConvTranspose",
        [rand(1, 2, 4, 4), Const(rand(2, 2, 3, 3))],
        {"strides": [2, 2], "auto_pad": "SAME_UPPER"},
        atol=1e-5,
    ),
    # ----- pooling and normalization
    Case(
        "maxpool",
        "MaxPool",
        [X4],
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    ),
    Case(
        "maxpool_ceil",
        "MaxPool",
        [rand(1, 2, 7, 7)],
        {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
    ),
    Case(
        "maxpool_same_upper",
        "MaxPool",
        [rand(1, 2, 7, 7)],
        {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    ),
    Case("maxpool_1d", "MaxPool", [rand(2, 3, 9)], {"kernel_shape": [3], "strides": [2]}),
    Case(
        "avgpool_exclude_pad", "AveragePool", [X4], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    ),
    Case(
        "avgpool_include_pad",
        "AveragePool",
        [X4],
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
    ),
    Case(
        "avgpool_ceil",
        "AveragePool",
        [rand(1, 2, 7, 7)],
        {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    ),
    Case("global_avg_pool", "GlobalAveragePool", [X4]),
    Case("global_max_pool", "GlobalMaxPool", [X4]),
    Case(
        "batch_norm",
        "BatchNormalization",
        [X4, Const(rand(3)), Const(rand(3)), Const(rand(3)), Const(rand(3, low=0.5))],
        {"epsilon": 1e-3},
    ),
    Case(
        "batch_norm_2d_input",
        "BatchNormalization",
        [rand(4, 3), Const(rand(3)), Const(rand(3)), Const(rand(3)), Const(rand(3, low=0.5))],
    ),
    Case("layer_norm_last", "LayerNormalization", [X3, Const(rand(6)), Const(rand(6))], atol=1e-5),
    Case(
        "layer_norm_axis1_no_bias",
        "LayerNormalization",
        [X3, Const(rand(4, 6))],
        {"axis": 1, "epsilon": 1e-3},
        atol=1e-5,
    ),
    Case("rms_norm", "RMSNormalization", [X3, Const(rand(6))], opset=23, atol=1e-5),
    Case(
        "rms_norm_axis1",
        "RMSNormalization",
        [X3, Const(rand(4, 6))],
        {"axis": 1, "epsilon": 1e-3},
        opset=23,
        atol=1e-5,
    ),
    # ----- shapes and data movement
    Case("reshape_minus1_zero", "Reshape", [X3, Const(ints(0, -1))]),
    Case("reshape_allowzero", "Reshape", [X3, Const(ints(4, 2, 6))], {"allowzero": 1}, opset=14),
    Case("flatten_axis2", "Flatten", [X4], {"axis": 2}),
    Case("flatten_axis0", "Flatten", [X3], {"axis": 0}),
    Case("transpose_default", "Transpose", [X3]),
    Case("transpose_perm", "Transpose", [X4], {"perm": [0, 2, 3, 1]}),
    Case("squeeze_input_opset13", "Squeeze", [rand(2, 1, 3, 1), Const(ints(-1))], opset=13),
    Case("squeeze_attr_opset11", "Squeeze", [rand(2, 1, 3, 1)], {"axes": [1]}, opset=11),
    Case("squeeze_all", "Squeeze", [rand(2, 1, 3, 1)], opset=13),
    Case("unsqueeze_input_opset13", "Unsqueeze", [X3, Const(ints(0, -1))], opset=13),
    Case("unsqueeze_attr_opset11", "Unsqueeze", [X3], {"axes": [1, 4]}, opset=11),
    Case("concat", "Concat", [rand(2, 3), Const(rand(2, 2)), rand(2, 1)], {"axis": -1}),
    Case("split_equal_opset13", "Split", [rand(6, 4)], {"axis": 0}, opset=13, outputs=3),
    Case(
        "split_sizes_input_opset13",
        "Split",
        [rand(4, 7), Const(ints(2, 5))],
        {"axis": 1},
        opset=13,
        outputs=2,
    ),
    Case(
        "split_sizes_attr_opset11",
        "Split",
        [rand(4, 7)],
        {"axis": 1, "split": [3, 4]},
        opset=11,
        outputs=2,
    ),
    Case(
        "split_num_outputs_opset18", "Split", [rand(7, 2)], {"num_outputs": 3}, opset=18, outputs=3
    ),
    Case(
        "slice_inputs",
        "Slice",
        [X4, Const(ints(1, 2)), Const(ints(7, 100)), Const(ints(2, 3)), Const(ints(2, 1))],
    ),
    Case(
        "slice_negative_step",
        "Slice",
        [X3, Const(ints(-1)), Const(ints(-100)), Const(ints(2)), Const(ints(-2))],
    ),
    Case(
        "slice_attrs_opset9",
        "Slice",
        [X3],
        {"starts": [1, 0], "ends": [3, -1], "axes": [1, 2]},
        opset=9,
    ),
    Case("expand", "Expand", [rand(3, 1), Const(ints(2, 1, 4))]),
    Case("pad_constant", "Pad", [rand(2, 3), Const(ints(1, 0, 0, 2)), Const(np.float32(1.5))]),
    Case("gather_const_indices_axis1", "Gather", [X3, Const(ints(3, 0, -1))], {"axis": 1}),
    Case("gather_const_scalar_index", "Gather", [X3, Const(np.asarray(2, np.int64))], {"axis": 2}),
    Case(
        "gather_runtime_indices",
        "Gather",
        [Const(rand(10, 4)), np.asarray([[1, 9], [0, -3]], np.int64)],
    ),
    Case("gather_runtime_both", "Gather", [rand(5, 6), np.asarray([4, 1], np.int64)], {"axis": 1}),
    Case("gather_runtime_int32", "Gather", [Const(rand(7, 3)), np.asarray([[6, 0, -7]], np.int32)]),
    Case(
        "resize_nearest_scales",
        "Resize",
        [rand(1, 2, 3, 4), None, Const(np.asarray([1, 1, 2, 3], np.float32))],
        opset=13,
    ),
    Case(
        "resize_nearest_sizes_half_pixel",
        "Resize",
        [rand(1, 2, 3, 4), None, None, Const(ints(1, 2, 6, 8))],
        {"coordinate_transformation_mode": "half_pixel"},
        opset=13,
    ),
    Case("identity", "Identity", [rand(3, 3)]),
    Case("dropout_inference", "Dropout", [rand(3, 3)]),
    # ----- attention (opset 23)
    Case(
        "attention", "Attention", [rand(1, 2, 5, 8), rand(1, 2, 5, 8), rand(1, 2, 5, 8)], opset=23
    ),
    Case(
        "attention_causal_scale",
        "Attention",
        [rand(2, 2, 4, 8), rand(2, 2, 6, 8), rand(2, 2, 6, 8)],
        {"is_causal": 1, "scale": 0.2},
        opset=23,
    ),
    Case(
        "attention_bool_mask",
        "Attention",
        [rand(1, 2, 4, 8), rand(1, 2, 4, 8), rand(1, 2, 4, 8), np.tril(np.ones((4, 4), bool))],
        opset=23,
    ),
    # ----- reductions, axes as attribute or input
    Case("reduce_mean_attr_opset13", "ReduceMean", [X3], {"axes": [1], "keepdims": 0}, opset=13),
    Case("reduce_mean_input_opset18", "ReduceMean", [X3, Const(ints(-1))], opset=18),
    Case(
        "reduce_sum_input_opset13",
        "ReduceSum",
        [X3, Const(ints(0, 2))],
        {"keepdims": 0},
        opset=13,
        atol=1e-5,
    ),
    Case("reduce_sum_attr_opset11", "ReduceSum", [X3], {"axes": [1]}, opset=11, atol=1e-5),
    Case("reduce_sum_all", "ReduceSum", [X3], opset=13, atol=1e-5),
    Case("reduce_max_attr", "ReduceMax", [X3], {"axes": [0, 2]}, opset=13),
    Case("reduce_max_input_opset18", "ReduceMax", [X3, Const(ints(1))], {"keepdims": 0}, opset=18),
    Case("reduce_min", "ReduceMin", [X3], {"axes": [2]}, opset=13),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_operator_matches_onnxruntime(case):
    model, feeds = model_of(case)
    expected = _reference(model, feeds)
    got = _cuvil(model, feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(g, e, rtol=case.rtol, atol=case.atol)


# ----- static shape arithmetic exporters emit, folded at import time --------------------


def test_shape_arithmetic_is_folded_into_a_static_reshape():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape, plus ConstantOfShape and Range."""
    h = helper
    nodes = [
        h.make_node("Shape", ["x"], ["shape"]),
        h.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        h.make_node("Unsqueeze", ["batch", "zero_axes"], ["batch1"]),
        h.make_node("Concat", ["batch1", "minus_one"], ["target"], axis=0),
        h.make_node("Reshape", ["x", "target"], ["flat"]),
        h.make_node("Shape", ["flat"], ["flat_shape"], start=1),
        h.make_node(
            "ConstantOfShape", ["flat_shape"], ["ones"], value=h.make_tensor("v", 1, [1], [1.0])
        ),
        h.make_node("Cast", ["flat_shape"], ["length"], to=onnx.TensorProto.FLOAT),
        h.make_node("Range", ["zero_f", "length_s", "one_f"], ["ramp"]),
        h.make_node("Squeeze", ["length", "zero_axes"], ["length_s"]),
        h.make_node("Mul", ["ones", "ramp"], ["scaled"]),
        h.make_node("Add", ["flat", "scaled"], ["y"]),
    ]
    # Range reads length_s: put the Squeeze before it.
    nodes.insert(8, nodes.pop(9))
    inits = [
        onnx.numpy_helper.from_array(ints(0)[0], "zero"),
        onnx.numpy_helper.from_array(ints(0), "zero_axes"),
        onnx.numpy_helper.from_array(ints(-1), "minus_one"),
        onnx.numpy_helper.from_array(np.float32(0), "zero_f"),
        onnx.numpy_helper.from_array(np.float32(1), "one_f"),
    ]
    x = rand(2, 3, 4)
    graph = h.make_graph(
        nodes,
        "shape_math",
        [h.make_tensor_value_info("x", 1, x.shape)],
        [h.make_tensor_value_info("y", 1, (2, 12))],
        inits,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    module = cuvil.load_onnx(model)
    for folded in ("Shape_0", "Gather_1", "Concat_3", "ConstantOfShape_6", "Range_"):
        assert f'loc("{folded}' not in module.text
    assert "cuvil.reshape" in module.text
    np.testing.assert_allclose(module.compile()(x), _reference(model, {"x": x})[0], rtol=1e-6)
