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
from conftest import assert_outputs_match_in_their_dtypes

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
IMG = rand(1, 2, 4, 5)
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
    *[
        Case(
            f"resize_{mode}_{coordinates}",
            "Resize",
            [IMG, None, None, Const(ints(1, 2, 7, 9))],
            {"mode": mode, "coordinate_transformation_mode": coordinates},
            opset=13,
            atol=1e-5,
        )
        for mode in ("linear", "cubic")
        for coordinates in ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel")
    ],
    Case(
        "resize_linear_downsample_to_one",
        "Resize",
        [IMG, None, None, Const(ints(1, 2, 1, 3))],
        {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
        opset=13,
        atol=1e-5,
    ),
    Case(
        "resize_linear_scales",
        "Resize",
        [IMG, None, Const(np.asarray([1, 1, 2.5, 0.6], np.float32))],
        {"mode": "linear"},
        opset=13,
        atol=1e-5,
    ),
    Case(
        "resize_cubic_exclude_outside_tf",
        "Resize",
        [IMG, None, None, Const(ints(1, 2, 9, 3))],
        {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1},
        opset=13,
        atol=1e-5,
    ),
    Case(
        "resize_linear_axes_opset18",
        "Resize",
        [IMG, None, None, Const(ints(6, 8))],
        {"mode": "linear", "axes": [2, 3]},
        opset=18,
        atol=1e-5,
    ),
    *[
        Case(
            f"resize_nearest_{nearest}_{coordinates}",
            "Resize",
            [IMG, None, None, Const(ints(1, 2, 7, 3))],
            {"nearest_mode": nearest, "coordinate_transformation_mode": coordinates},
            opset=13,
        )
        for nearest, coordinates in (
            ("round_prefer_ceil", "asymmetric"),
            ("floor", "align_corners"),
            ("ceil", "half_pixel"),
            ("round_prefer_floor", "tf_half_pixel_for_nn"),
        )
    ],
    *[
        Case(
            f"resize_{mode}_antialias_{coordinates}_{'x'.join(map(str, size))}",
            "Resize",
            [Const(rand(1, 2, 16, 12)), None, None, Const(ints(1, 2, *size))],
            {"mode": mode, "coordinate_transformation_mode": coordinates, "antialias": 1},
            opset=18,
            atol=1e-5,
        )
        for mode in ("linear", "cubic")
        for coordinates, size in (
            ("half_pixel", (5, 7)),
            ("asymmetric", (9, 4)),
            ("align_corners", (3, 20)),
            ("pytorch_half_pixel", (1, 6)),
        )
    ],
    Case(
        "resize_cubic_antialias_exclude_outside_scales",
        "Resize",
        [IMG, None, Const(np.asarray([1, 1, 0.4, 0.7], np.float32))],
        {"mode": "cubic", "antialias": 1, "exclude_outside": 1, "cubic_coeff_a": -0.5},
        opset=18,
        atol=1e-5,
    ),
    *[
        Case(
            f"resize_{mode}_tf_crop_and_resize_{name}",
            "Resize",
            # Both resized axes change size: ONNX Runtime copies an axis whose size stays, roi
            # or not, where the operator's definition crops it (and Cuvil does).
            [IMG, Const(np.asarray(roi, np.float32)), None, Const(ints(1, 2, 6, 7))],
            {
                "mode": mode,
                "coordinate_transformation_mode": "tf_crop_and_resize",
                "extrapolation_value": 2.5,
            },
            opset=13,
            atol=1e-5,
        )
        for mode in ("nearest", "linear", "cubic")
        for name, roi in (
            ("inside", [0, 0, 0.2, 0.1, 1, 1, 0.9, 0.7]),
            ("beyond", [0, 0, -0.3, 0.4, 1, 1, 0.8, 1.6]),
        )
    ],
    Case(
        "resize_linear_tf_crop_and_resize_scales_axes",
        "Resize",
        [
            IMG,
            Const(np.asarray([0.1, 0.2, 0.9, 1.2], np.float32)),
            Const(np.asarray([2, 1.5], np.float32)),
        ],
        {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "axes": [2, 3]},
        opset=18,
        atol=1e-5,
    ),
    Case("cumsum", "CumSum", [X3, Const(ints(1))], atol=1e-5),
    Case(
        "cumsum_exclusive_reverse",
        "CumSum",
        [X3, Const(np.asarray(-1, np.int32))],
        {"exclusive": 1, "reverse": 1},
        atol=1e-5,
    ),
    Case("cumsum_int", "CumSum", [np.arange(24, dtype=np.int64).reshape(4, 6), Const(ints(0))]),
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
    Case(
        "attention_grouped_query_causal",
        "Attention",
        [rand(2, 4, 5, 8), rand(2, 2, 5, 8), rand(2, 2, 5, 8)],
        {"is_causal": 1},
        opset=23,
        atol=1e-5,
    ),
    Case(
        "attention_3d_grouped_heads",
        "Attention",
        [rand(2, 5, 24), rand(2, 7, 8), rand(2, 7, 12)],
        {"q_num_heads": 6, "kv_num_heads": 2},
        opset=23,
        atol=1e-5,
    ),
    Case(
        "attention_past_key_value",
        "Attention",
        [
            rand(1, 2, 3, 8),
            rand(1, 1, 3, 8),
            rand(1, 1, 3, 8),
            rand(1, 2, 3, 7),
            rand(1, 1, 4, 8),
            rand(1, 1, 4, 8),
        ],
        opset=23,
        outputs=3,
        atol=1e-5,
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


# ----- control flow: If and Loop inlined ------------------------------------------------------


def _graph_model(nodes, inputs, outputs, initializers=(), opset=17):
    """A model of ``nodes``; ``outputs`` maps each graph output to its float32 shape."""
    h = helper
    graph = h.make_graph(
        nodes,
        "control",
        [
            h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in inputs
        ],
        [h.make_tensor_value_info(o, onnx.TensorProto.FLOAT, s) for o, s in outputs.items()],
        [onnx.numpy_helper.from_array(np.asarray(a), n) for n, a in initializers],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])


def _branch(name, op, output, shape, *inputs):
    """A one-node subgraph computing ``op(*inputs)`` (outer-scope names) into ``output``."""
    node = helper.make_node(op, list(inputs), [output], name=f"{name}_{op.lower()}")
    typed = helper.make_tensor_value_info(output, onnx.TensorProto.FLOAT, shape)
    return helper.make_graph([node], name, [], [typed])


def _if_model(condition_initializer=None, unequal=False):
    then_g = _branch("then", "Add", "t_out", (3, 4), "x", "y")
    if unequal:
        else_g = _branch("else", "Identity", "e_out", (2,), "other")
    else:
        else_g = _branch("else", "Sub", "e_out", (3, 4), "x", "y")
    node = helper.make_node(
        "If", ["cond"], ["out"], name="choose", then_branch=then_g, else_branch=else_g
    )
    x, y = rand(3, 4), rand(3, 4)
    inputs = [("x", x), ("y", y)]
    inits = [("other", rand(2))] if unequal else []
    if condition_initializer is None:
        inputs.append(("cond", np.asarray(True)))
    else:
        inits.append(("cond", np.asarray(condition_initializer)))
    return _graph_model([node], inputs, {"out": (3, 4)}, inits), {"x": x, "y": y}


@pytest.mark.parametrize("taken", [True, False])
def test_if_with_a_known_condition_imports_the_taken_branch_only(taken):
    model, feeds = _if_model(condition_initializer=taken)
    module = cuvil.load_onnx(model)
    kept, dropped = ("then_add", "else_sub") if taken else ("else_sub", "then_add")
    assert kept in module.text and dropped not in module.text
    expected = _reference(model, feeds)[0]
    np.testing.assert_allclose(module.compile()(**feeds), expected, rtol=1e-6)


def test_if_with_a_runtime_condition_selects_between_both_branches():
    model, feeds = _if_model()
    compiled = cuvil.load_onnx(model).compile()
    for condition in (True, False):
        run = {**feeds, "cond": np.asarray(condition)}
        np.testing.assert_allclose(compiled(**run), _reference(model, run)[0], rtol=1e-6)


def test_if_with_a_runtime_condition_and_unequal_branch_shapes_names_the_node():
    model, _ = _if_model(unequal=True)
    with pytest.raises(cuvil.UnsupportedConstructError, match=r"If node 'choose'.*equal shapes"):
        cuvil.load_onnx(model)


def _loop_model(trip_count, condition_op="Identity"):
    """``state = state * w + i`` for ``trip_count`` iterations, also scanning ``state + 1``."""
    h = helper
    body = h.make_graph(
        [
            h.make_node(condition_op, ["cond_in"], ["cond_out"], name="keep_going"),
            h.make_node("Cast", ["i"], ["i_f"], to=onnx.TensorProto.FLOAT, name="count"),
            h.make_node("Mul", ["state_in", "w"], ["scaled"], name="scale"),
            h.make_node("Add", ["scaled", "i_f"], ["state_out"], name="step"),
            h.make_node("Add", ["state_out", "one"], ["scan"], name="emit"),
        ],
        "body",
        [
            h.make_tensor_value_info("i", onnx.TensorProto.INT64, ()),
            h.make_tensor_value_info("cond_in", onnx.TensorProto.BOOL, ()),
            h.make_tensor_value_info("state_in", onnx.TensorProto.FLOAT, (2, 3)),
        ],
        [
            h.make_tensor_value_info("cond_out", onnx.TensorProto.BOOL, ()),
            h.make_tensor_value_info("state_out", onnx.TensorProto.FLOAT, (2, 3)),
            h.make_tensor_value_info("scan", onnx.TensorProto.FLOAT, (2, 3)),
        ],
    )
    node = h.make_node("Loop", ["M", "cond", "x"], ["final", "scans"], name="repeat", body=body)
    x = rand(2, 3)
    inits = [
        ("M", np.asarray(trip_count, np.int64)),
        ("cond", np.asarray(True)),
        ("w", rand(2, 3)),
        ("one", np.float32(1)),
    ]
    outputs = {"final": (2, 3), "scans": (trip_count, 2, 3)}
    return _graph_model([node], [("x", x)], outputs, inits), {"x": x}


def test_loop_with_a_static_trip_count_is_unrolled():
    model, feeds = _loop_model(4)
    module = cuvil.load_onnx(model)
    assert 'loc("repeat/iteration_3/step"' in module.text
    final, scans = module.compile()(**feeds)
    want_final, want_scans = _reference(model, feeds)
    np.testing.assert_allclose(final, want_final, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(scans, want_scans, rtol=1e-5, atol=1e-6)


def test_loop_beyond_the_unroll_limit_or_with_a_runtime_condition_is_refused():
    from cuvil.frontends.onnx.ops_control import LOOP_UNROLL_LIMIT

    model, _ = _loop_model(LOOP_UNROLL_LIMIT + 1)
    with pytest.raises(cuvil.UnsupportedConstructError, match=r"Loop node 'repeat'.*unroll"):
        cuvil.load_onnx(model)
    model, _ = _loop_model(3)
    body = model.graph.node[0].attribute[0].g
    body.node[0].CopyFrom(helper.make_node("Less", ["state_out", "one"], ["cond_out"]))
    body.node.insert(4, body.node.pop(0))  # after state_out is computed
    with pytest.raises(cuvil.UnsupportedConstructError, match=r"condition computed at run time"):
        cuvil.load_onnx(model)


# ----- float16: computed in float32 inside, converted at the boundary ---------------------------

FLOAT16 = {"rtol": 1e-2, "atol": 1e-2}  # ONNX Runtime rounds every float16 intermediate


def _float16_model(output_type=onnx.TensorProto.FLOAT):
    """float32 in and out around float16 weights and compute (``keep_io_types`` conversions)."""
    h = helper
    nodes = [
        h.make_node("Cast", ["x"], ["x16"], to=onnx.TensorProto.FLOAT16, name="to_half"),
        h.make_node("MatMul", ["x16", "w"], ["y16"], name="project"),
        h.make_node("Add", ["y16", "bias"], ["z16"], name="shift"),
        h.make_node("Relu", ["z16"], ["r16"], name="act"),
        h.make_node("Cast", ["r16"], ["out"], to=output_type, name="to_output"),
    ]
    inits = [("w", rand(8, 5).astype(np.float16)), ("bias", rand(5).astype(np.float16))]
    x = rand(3, 8)
    graph = helper.make_graph(
        nodes,
        "half",
        [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
        [h.make_tensor_value_info("out", output_type, (3, 5))],
        [onnx.numpy_helper.from_array(a, n) for n, a in inits],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), {"x": x}


def test_float16_weights_and_casts_inside_a_model_are_computed_in_float32():
    model, feeds = _float16_model()
    module = cuvil.load_onnx(model)
    assert "f16" not in module.text
    got = module.compile()(**feeds)
    np.testing.assert_allclose(got, _reference(model, feeds)[0], **FLOAT16)


def _float16_io_model():
    """float16 in and out (a model converted to float16 without keep_io_types), batch symbolic."""
    h = helper
    nodes = [
        h.make_node("MatMul", ["x", "w"], ["y"], name="project"),
        h.make_node("Add", ["y", "bias"], ["z"], name="shift"),
        h.make_node("Relu", ["z"], ["r"], name="act"),
        h.make_node("Softmax", ["r"], ["probs"], axis=-1, name="normalize"),
        h.make_node("ReduceSum", ["z", "axes"], ["total"], keepdims=0, name="total"),
    ]
    inits = [
        onnx.numpy_helper.from_array(rand(8, 5).astype(np.float16), "w"),
        onnx.numpy_helper.from_array(rand(5).astype(np.float16), "bias"),
        onnx.numpy_helper.from_array(np.array([1], np.int64), "axes"),
    ]
    half = onnx.TensorProto.FLOAT16
    graph = h.make_graph(
        nodes,
        "half_io",
        [h.make_tensor_value_info("x", half, ("N", 8))],
        [
            h.make_tensor_value_info("probs", half, ("N", 5)),
            h.make_tensor_value_info("total", half, ("N",)),
        ],
        inits,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_float16_inputs_and_outputs_are_converted_at_the_boundary():
    model = _float16_io_model()
    module = cuvil.load_onnx(model)
    assert module.input_spec == {"x": cuvil.TensorSpec(("N", 8), "float16")}
    assert [s.dtype for s in module.output_spec] == ["float16", "float16"]
    assert "f16" not in module.text  # computed in float32 inside
    before = len(cuvil.compilations())
    compiled = module.compile()
    for n in (1, 3, 8):
        feeds = {"x": rand(n, 8).astype(np.float16)}
        got, expected = compiled(**feeds), _reference(model, feeds)
        assert [g.dtype for g in got] == [np.float16, np.float16]
        assert_outputs_match_in_their_dtypes(got, expected)
    assert len(cuvil.compilations()) - before == 1


def test_a_float16_input_given_float32_is_refused_with_the_fix():
    compiled = cuvil.load_onnx(_float16_io_model()).compile()
    x = rand(2, 8)
    message = r"input 'x' has dtype float32, but the IR was built for float16; fix: pass x\.astype"
    with pytest.raises(TypeError, match=message):
        compiled(x)
    model, _ = _float16_model()  # float32 in and out
    with pytest.raises(
        TypeError, match=r"input 'x' has dtype float16, but the IR was built for float32"
    ):
        cuvil.load_onnx(model).compile()(x.astype(np.float16))


def test_a_float16_output_declared_by_shape_inference_is_float16():
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT16, (2, 3))
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [x],
        [helper.make_empty_tensor_value_info("y")],
    )
    model = onnx.shape_inference.infer_shapes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    )
    feeds = {"x": rand(2, 3).astype(np.float16)}
    got = cuvil.load_onnx(model).compile()(**feeds)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, _reference(model, feeds)[0])
