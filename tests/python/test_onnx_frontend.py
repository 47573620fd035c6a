"""The ONNX front end: whole models against ONNX Runtime and PyTorch, the API, errors, locations."""

from __future__ import annotations

import importlib.util
import json
import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from conftest import EXAMPLES_DIR, run_python

import cuvil
from cuvil import frontend, frontends

helper = onnx.helper


def _zoo():
    path = EXAMPLES_DIR / "models" / "zoo.py"
    spec = importlib.util.spec_from_file_location("cuvil_example_zoo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    """The zoo module and its three models exported to ONNX once for this file."""
    module = _zoo()
    folder = tmp_path_factory.mktemp("zoo")
    paths = {p.stem: p for p in module.export_all(folder)}
    return module, paths


def _ort(path_or_model, feeds):
    data = path_or_model if isinstance(path_or_model, bytes) else str(path_or_model)
    if not isinstance(path_or_model, (bytes, str)) and hasattr(path_or_model, "SerializeToString"):
        data = path_or_model.SerializeToString()
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


# ----- whole models --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["resnet", "gpt2", "bert"])
def test_zoo_model_matches_onnxruntime_and_pytorch(zoo, name):
    module, paths = zoo
    model, inputs = module.build(name)
    with torch.no_grad():
        expected_torch = model(*inputs).numpy()
    feeds = {module.INPUT_NAMES[name][0]: inputs[0].numpy()}
    expected_ort = _ort(paths[name], feeds)[0]

    ir = cuvil.load_onnx(paths[name])
    got = ir.compile()(**feeds)
    if name == "gpt2":  # the token embedding is a lookup with run-time indices
        assert "cuvil.gather" in ir.text

    assert got.shape == expected_torch.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, expected_ort, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got, expected_torch, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,shape", [("gpt2", (3, 5)), ("bert", (2, 6, 32))])
def test_symbolic_exports_import_for_the_given_shape(zoo, tmp_path, name, shape):
    """Run-time shape arithmetic (Shape, Gather, Concat, Range...) folds once shapes are given."""
    module, _ = zoo
    path = module.export_onnx(name, tmp_path / f"{name}_dynamic.onnx", dynamic=True)
    input_name = module.INPUT_NAMES[name][0]
    rng = np.random.default_rng(0)
    x = rng.integers(0, 64, shape) if name == "gpt2" else rng.standard_normal(shape)
    x = x.astype(np.int64 if name == "gpt2" else np.float32)
    ir = cuvil.load_onnx(path, input_spec={input_name: shape})
    assert "Shape" in {n.op_type for n in onnx.load(str(path)).graph.node}
    expected = _ort(path, {input_name: x})[0]
    np.testing.assert_allclose(ir.compile()(x), expected, rtol=1e-4, atol=1e-5)


def test_node_names_are_name_locations_in_the_ir_and_the_profile(zoo):
    _, paths = zoo
    path = paths["resnet"]
    proto = onnx.load(str(path))
    ir = cuvil.load_onnx(path)
    convs = [n.name for n in proto.graph.node if n.op_type == "Conv"]
    assert convs and all(n for n in convs)
    for name in convs:
        assert f'loc("{name}"("{path}":0:0))' in ir.text
    assert f'loc("image"("{path}":0:0))' in ir.text

    compiled = ir.compile()
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    with cuvil.profile() as prof:
        compiled(x)
    nodes = {row.node for row in prof.key_averages("cpu_kernel")}
    assert set(convs) <= nodes


def test_unnamed_nodes_are_named_after_op_type_and_index():
    model = _single_model(
        [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Neg", ["h"], ["y"])]
    )
    text = cuvil.load_onnx(model).text
    assert re.search(r'"cuvil\.relu".*loc\("Relu_0"', text)
    assert re.search(r'"cuvil\.neg".*loc\("Neg_1"', text)


# ----- the API -------------------------------------------------------------------------------


def _single_model(
    nodes, shape=(2, 3), outputs=("y",), opset=17, inputs=None, initializers=(), output_shape=None
):
    inputs = inputs or [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, shape)]
    graph = helper.make_graph(
        nodes,
        "tiny",
        inputs,
        [
            helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT, output_shape)
            if output_shape
            else helper.make_empty_tensor_value_info(o)
            for o in outputs
        ],
        list(initializers),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return onnx.shape_inference.infer_shapes(model)


def _two_inputs_two_outputs():
    nodes = [
        helper.make_node("Add", ["a", "b"], ["sum"]),
        helper.make_node("Mul", ["a", "b"], ["prod"]),
    ]
    inputs = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, (2, 3)) for n in "ab"]
    return _single_model(nodes, outputs=("sum", "prod"), inputs=inputs)


def test_load_onnx_from_path_bytes_and_proto_give_one_ir(tmp_path):
    model = _two_inputs_two_outputs()
    path = tmp_path / "two.onnx"
    onnx.save(model, str(path))
    by_path = cuvil.load_onnx(path)
    assert by_path.name == "two" and by_path.source == str(path)
    fingerprints = {
        by_path.fingerprint,
        cuvil.load_onnx(str(path), use_mmap=True).fingerprint,
        cuvil.load_onnx(path.read_bytes()).fingerprint,
        cuvil.load_onnx(model).fingerprint,
        frontend.build_ir(model=str(path)).fingerprint,
    }
    assert len(fingerprints) == 1
    assert list(by_path.input_spec) == ["a", "b"]


def test_compiled_model_takes_inputs_by_position_or_name_and_returns_a_tuple():
    model = _two_inputs_two_outputs()
    compiled = cuvil.load_onnx(model).compile()
    a, b = (np.random.default_rng(i).standard_normal((2, 3)).astype(np.float32) for i in range(2))
    expected = _ort(model, {"a": a, "b": b})
    for result in (compiled(a, b), compiled(b=b, a=a), compiled(a, b=b)):
        assert isinstance(result, tuple) and len(result) == 2
        np.testing.assert_allclose(result[0], expected[0], rtol=1e-6)
        np.testing.assert_allclose(result[1], expected[1], rtol=1e-6)


def test_external_data_is_read_eagerly_or_memory_mapped(tmp_path):
    weight = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    model = _single_model(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        initializers=[onnx.numpy_helper.from_array(weight, "w")],
    )
    path = tmp_path / "external.onnx"
    onnx.save_model(
        model, str(path), save_as_external_data=True, location="weights.bin", size_threshold=0
    )
    assert (tmp_path / "weights.bin").stat().st_size == weight.nbytes
    x = np.ones((2, 3), np.float32)
    for use_mmap in (False, True):
        np.testing.assert_allclose(
            cuvil.load_onnx(path, use_mmap=use_mmap).compile()(x), x @ weight, rtol=1e-6
        )
    with pytest.raises(
        cuvil.OnnxModelError,
        match="tensor 'w' in an external data file.*load the model from its .onnx path",
    ):
        cuvil.load_onnx(path.read_bytes())
    (tmp_path / "weights.bin").write_bytes(weight.tobytes()[:10])
    with pytest.raises(cuvil.OnnxModelError, match="weights.bin is too short for tensor 'w'"):
        cuvil.load_onnx(path)


def test_input_spec_is_optional_and_may_be_a_mapping_or_a_list():
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ("batch", 3))
    model = _single_model([helper.make_node("Relu", ["x"], ["y"])], inputs=[x])
    # Without input_spec the declared dim_param stays symbolic.
    assert cuvil.load_onnx(model).input_spec == {"x": cuvil.TensorSpec(("batch", 3), "float32")}
    for spec in ({"x": (5, 3)}, [(5, 3)], [cuvil.TensorSpec((5, 3), "float32")]):
        ir = frontend.build_ir(model, input_spec=spec)
        assert ir.input_spec == {"x": cuvil.TensorSpec((5, 3), "float32")}
    assert cuvil.load_onnx(model, input_spec={"x": (4, 3)}).output_spec[0].shape == (4, 3)
    with pytest.raises(cuvil.InputSpecError, match=r"names \['y'\], which are not inputs.*\['x'\]"):
        frontend.build_ir(model, input_spec={"y": (5, 3)})
    with pytest.raises(cuvil.InputSpecError, match="lists 2 specs but .* has 1 input"):
        frontend.build_ir(model, input_spec=[(5, 3), (5, 3)])


def test_initializers_listed_as_graph_inputs_are_not_inputs():
    weight = np.ones((3,), np.float32)
    inputs = [
        helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, (2, 3)),
        helper.make_tensor_value_info("w", onnx.TensorProto.FLOAT, (3,)),
    ]
    model = _single_model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        inputs=inputs,
        initializers=[onnx.numpy_helper.from_array(weight, "w")],
    )
    assert list(cuvil.load_onnx(model).input_spec) == ["x"]


def test_optimize_selects_fusion_and_refuses_unknown_precisions():
    ir = cuvil.load_onnx(_two_inputs_two_outputs())
    optimized = ir.optimize(target="cpu", precision="fp32", enable_fuse=False)
    assert isinstance(optimized, cuvil.IRModule) and optimized.fingerprint == ir.fingerprint
    assert optimized.compile().enable_fusion is False
    assert ir.optimize().compile().enable_fusion is True
    with pytest.raises(ValueError, match=r"precision='int8' is not one of"):
        ir.optimize(precision="int8")
    with pytest.raises(ValueError, match=r"calibrate_dataset is read by a precision"):
        ir.optimize(calibrate_dataset=[np.zeros((2, 3), np.float32)])
    with pytest.raises(ValueError, match="IRModule.optimize"):
        ir.optimize(target="no-such-target")


def test_optimize_quantizes_initializer_weights_as_the_seed_calls_it():
    # MatMul by an initializer, as exported models hold their weights.
    rng = np.random.default_rng(0)
    weight = (rng.standard_normal((128, 64)) / 11.3).astype(np.float32)
    model = _single_model(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
        shape=(4, 128),
        initializers=[onnx.numpy_helper.from_array(weight, "w")],
    )
    ir = cuvil.load_onnx(model)
    samples = [rng.standard_normal((4, 128)).astype(np.float32) for _ in range(8)]
    x = samples[0]
    expected = np.maximum(x @ weight, 0.0)
    bf16 = ir.optimize(target="cpu", precision="bf16", enable_fuse=True, calibrate_dataset=samples)
    assert bf16.precision_report["accuracy"]["relative_l2_error"] < 1e-2
    np.testing.assert_allclose(bf16.compile()(x), expected, atol=5e-2)
    int4 = ir.optimize(quantization="int4", group_size=32)
    assert int4.precision_report["quantized_matmuls"] == 1
    assert "cuvil.quantized_matmul" in int4.text
    relative = np.linalg.norm(int4.compile()(x) - expected) / np.linalg.norm(expected)
    assert relative < 0.2


def test_accepts_does_not_import_onnx():
    code = (
        "import sys, cuvil\n"
        "from cuvil import frontends\n"
        "assert frontends.for_model(lambda x: x).name == 'numpy'\n"
        "assert frontends.for_model('m.onnx').name == 'onnx'\n"
        "assert frontends.for_model(b'\\x08\\x07').name == 'onnx'\n"
        "print('onnx' in sys.modules)\n"
    )
    result = run_python(["-c", code])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
    assert "onnx" in frontends.available()


# ----- errors --------------------------------------------------------------------------------


def test_truncated_garbage_empty_and_missing_files_name_the_file(zoo, tmp_path):
    _, paths = zoo
    data = paths["resnet"].read_bytes()
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(data[: len(data) // 2])
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(bytes(range(256)) * 8)
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    cases = [
        (truncated, r"truncated.onnx is not a valid ONNX model.*truncated or corrupted"),
        (garbage, r"garbage.onnx is not a valid ONNX model"),
        (empty, r"empty.onnx is empty \(0 bytes\)"),
        (tmp_path / "missing.onnx", r"missing.onnx: no such file"),
    ]
    for path, message in cases:
        for use_mmap in (False, True):
            with pytest.raises(cuvil.OnnxModelError, match=message):
                cuvil.load_onnx(path, use_mmap=use_mmap)
    with pytest.raises(cuvil.OnnxModelError, match=r"<64 bytes> is not a valid ONNX model"):
        cuvil.load_onnx(b"\xff" * 64)
    with pytest.raises(cuvil.OnnxModelError, match="truncated.onnx"):
        frontend.build_ir(str(truncated))


def test_unsupported_operator_names_op_type_node_and_file(tmp_path):
    model = _single_model([helper.make_node("Hardmax", ["x"], ["y"], name="my_hardmax")])
    path = tmp_path / "hardmax.onnx"
    onnx.save(model, str(path))
    with pytest.raises(cuvil.UnsupportedConstructError) as info:
        cuvil.load_onnx(path)
    message = str(info.value)
    assert "ONNX Hardmax node 'my_hardmax'" in message
    assert message.endswith(f" at {path}")
    assert "supported: " in message and "Conv" in message


def test_runtime_shape_for_reshape_is_unsupported_with_the_node():
    nodes = [
        helper.make_node("Cast", ["x"], ["s"], to=onnx.TensorProto.INT64, name="to_int"),
        helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape_by_data"),
    ]
    model = _single_model(nodes, shape=(2,))
    with pytest.raises(
        cuvil.UnsupportedConstructError,
        match=r"Reshape node 'reshape_by_data': the target shape \(input 1, 's'\) computed at run",
    ):
        cuvil.load_onnx(model)


def test_training_mode_is_refused(zoo):
    _, paths = zoo
    with pytest.raises(
        ValueError, match=r"mode='training' is not supported for ONNX models.*mode='inference'"
    ):
        frontend.build_ir(paths["bert"], mode="training")


def test_batch_norm_in_training_mode_is_unsupported():
    params = [onnx.numpy_helper.from_array(np.ones(3, np.float32), n) for n in ("s", "b", "m", "v")]
    node = helper.make_node(
        "BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], training_mode=1, name="bn"
    )
    model = _single_model(
        [node], shape=(2, 3, 4, 4), initializers=params, output_shape=(2, 3, 4, 4)
    )
    with pytest.raises(
        cuvil.UnsupportedConstructError, match="BatchNormalization node 'bn': training_mode=1"
    ):
        cuvil.load_onnx(model)


# ----- the CLI and the Workbench worker -------------------------------------------------------


def test_cli_compiles_an_onnx_model_and_prints_its_ir(zoo, tmp_path):
    _, paths = zoo
    result = run_python(["-m", "cuvil", "compile", str(paths["bert"])])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("// cuvil: bert(tensor<1x8x32xf32>) -> (tensor<1x8x32xf32>)")
    assert f"defined at {paths['bert']}" in result.stdout
    assert 'loc("hidden_states"(' in result.stdout and "cuvil.matmul" in result.stdout

    out = tmp_path / "resnet.s"
    result = run_python(
        ["-m", "cuvil", "compile", str(paths["resnet"]), "--emit", "asm", "-o", str(out)]
    )
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size > 0


def test_cli_reports_unreadable_models_and_takes_input_shapes(tmp_path):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"not a model at all" * 10)
    result = run_python(["-m", "cuvil", "compile", str(garbage)])
    assert result.returncode == 1
    assert "cuvil compile: error: cuvil.load_onnx:" in result.stderr
    assert "garbage.onnx is not a valid ONNX model" in result.stderr

    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ("n", 3))
    path = tmp_path / "symbolic.onnx"
    onnx.save(_single_model([helper.make_node("Relu", ["x"], ["y"])], inputs=[x]), str(path))
    result = run_python(["-m", "cuvil", "compile", str(path), "--input-shape", "x=4,3"])
    assert result.returncode == 0, result.stderr
    assert "symbolic(tensor<4x3xf32>)" in result.stdout
    result = run_python(["-m", "cuvil", "compile", str(path), "--input-shape", "x=four"])
    assert result.returncode == 2 and "give NAME=D1,D2,... with int dims" in result.stderr


def test_cli_exports_an_int4_model_smaller_and_runs_it(tmp_path):
    rng = np.random.default_rng(1)
    weight = (rng.standard_normal((256, 128)) / 16).astype(np.float32)
    path = tmp_path / "linear.onnx"
    onnx.save(
        _single_model(
            [helper.make_node("MatMul", ["x", "w"], ["y"])],
            shape=(8, 256),
            initializers=[onnx.numpy_helper.from_array(weight, "w")],
        ),
        str(path),
    )
    sizes = {}
    for flags in ([], ["--quantization", "int4", "--group-size", "64"], ["--precision", "bf16"]):
        out = tmp_path / f"linear{len(sizes)}.cuvil"
        result = run_python(
            ["-m", "cuvil", "compile", str(path), *flags, "--emit", "cuvil", "-o", str(out)]
        )
        assert result.returncode == 0, result.stderr
        sizes[" ".join(flags)] = out.stat().st_size
        x = rng.standard_normal((8, 256)).astype(np.float32)
        got = cuvil.runtime.load_executable(out).get_function()(x).numpy()
        error = np.linalg.norm(got - x @ weight) / np.linalg.norm(x @ weight)
        assert error < (0.2 if flags else 1e-5)
    assert sizes["--quantization int4 --group-size 64"] < sizes[""] / 3
    assert sizes["--precision bf16"] < sizes[""] * 0.7
    script = tmp_path / "plain.py"
    script.write_text("import numpy as np\nimport cuvil\ncuvil.jit(lambda x: x + 1)(np.ones(2))\n")
    result = run_python(["-m", "cuvil", "compile", str(script), "--quantization", "int4"])
    assert result.returncode == 2 and "--precision/--quantization apply to a model" in result.stderr


def test_worker_runs_an_onnx_model_and_reports_its_compilation(zoo):
    _, paths = zoo
    code = (
        "import io, sys\n"
        "from cuvil import _worker\n"
        "out = io.StringIO()\n"
        "worker = _worker.Worker(out)\n"
        "worker.install_hooks()\n"
        "worker.run(sys.argv[1])\n"
        "worker.execute({'index': len(worker.recorded) - 1})\n"
        "sys.stdout.write('MESSAGES\\n' + out.getvalue())\n"
    )
    result = run_python(["-c", code, str(paths["resnet"])])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("MESSAGES\n", 1)[1].splitlines()
    messages = [json.loads(line) for line in lines]
    kinds = [m["type"] for m in messages]
    assert kinds == ["started", "compilation", "finished", "executed"]
    assert messages[2]["ok"]
    (compilation,) = [m for m in messages if m["type"] == "compilation"]
    assert compilation["function"] == "resnet"
    assert compilation["inputs"] == [{"dtype": "float32", "shape": [1, 3, 32, 32]}]
    assert "/stem/stem.0/Conv" in compilation["input_ir"]
    (executed,) = [m for m in messages if m["type"] == "executed"]
    assert executed["max_error"] < 1e-4 and executed["outputs"] == [[1, 10]]
    assert executed["reference"] == "ONNX Runtime"
    with open(executed["trace"], encoding="utf-8") as trace:
        assert "/stem/stem.0/Conv" in trace.read()  # profile rows name the ONNX node


def test_corrupted_bytes_fail_with_a_cuvil_error_never_a_crash(zoo):
    _, paths = zoo
    data = bytearray(paths["gpt2"].read_bytes())
    rng = np.random.default_rng(0)
    expected = (cuvil.OnnxModelError, cuvil.UnsupportedConstructError, cuvil.TraceError)
    failures = 0
    for _ in range(12):
        corrupted = bytearray(data)
        for position in rng.integers(0, 2000, size=4):  # the graph's structure, not the weights
            corrupted[position] = int(rng.integers(0, 256))
        try:
            cuvil.load_onnx(bytes(corrupted))
        except expected:
            failures += 1
    assert failures > 0


def test_malformed_node_is_reported_with_its_name():
    model = _single_model(
        [helper.make_node("Transpose", ["x"], ["y"], perm=[0, 5], name="bad_perm")],
        output_shape=(3, 2),
    )
    with pytest.raises(cuvil.TraceError, match="ONNX Transpose node 'bad_perm'"):
        cuvil.load_onnx(model)
