"""Symbolic shapes through the model importers: ONNX, torch.export, torch.compile and JAX.

Each model is imported once with symbolic dims, run at three sizes against
the framework's own output, and must add exactly one compilation. The
TensorFlow cases live in test_tf_frontend.py (TensorFlow runs in a pytest
process of its own).
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from conftest import load_example
from torch import nn

import cuvil
from cuvil.frontend import to_ir_with_dynamic_shape

helper = onnx.helper
TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}


@pytest.fixture(scope="module")
def zoo():
    return load_example("models/zoo")


def _new_compilations(before) -> list:
    """The compilations recorded since ``before`` (a list from ``cuvil.compilations()``)."""
    seen = {id(r) for r in before}
    return [r for r in cuvil.compilations() if id(r) not in seen]


def _run_sizes(compiled, reference, make_inputs, sizes=(1, 3, 8)):
    """Call ``compiled`` at each size and compare with ``reference`` (arrays in, array out)."""
    for size in sizes:
        inputs = make_inputs(size)
        expected = reference(*inputs)
        got = compiled(*inputs)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, **TOLERANCE)


def _assert_one_compilation(module, reference, make_inputs, sizes=(1, 3, 8)):
    """``module`` compiles once and serves every size, matching ``reference``."""
    before = cuvil.compilations()
    compiled = module.compile()
    _run_sizes(compiled, reference, make_inputs, sizes)
    assert len(_new_compilations(before)) == 1


# (batch, sequence) sizes for GPT-2: sequences up to its 16 positions.
GPT2_SIZES = ((1, 3), (2, 8), (3, 16))


def _token_ids(seed: int = 1):
    rng = np.random.default_rng(seed)
    return lambda size: (rng.integers(0, 64, size),)


def _ort_reference(path):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return lambda *xs: session.run(None, dict(zip(names, xs)))[0]


def _floats(*shape_of_size):
    rng = np.random.default_rng(0)
    return lambda n: tuple(rng.standard_normal(s(n)).astype(np.float32) for s in shape_of_size)


# ----- ONNX -------------------------------------------------------------------------------------


class ShapeArithmetic(nn.Module):
    """What exporters turn into Shape/Gather/Unsqueeze/Concat/Reshape and ConstantOfShape."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(24, 8)
        self.offset = nn.Parameter(torch.linspace(-1.0, 1.0, 8))

    def forward(self, x):
        b = x.shape[0]
        y = self.fc(x.reshape(b, -1))  # Shape -> Gather -> Unsqueeze -> Concat -> Reshape
        y = y + torch.ones(b, 1)  # ConstantOfShape of a symbolic shape
        return torch.relu(y + self.offset.expand(b, 8))  # Expand to a symbolic shape


def _export(model, example, path, dynamic_axes):
    names = [f"x{i}" for i in range(len(example))]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the TorchScript exporter, on purpose
        torch.onnx.export(
            model.eval(),
            example,
            str(path),
            input_names=names,
            output_names=["y"],
            opset_version=17,
            dynamo=False,
            dynamic_axes={n: axes for n, axes in zip(names, dynamic_axes)},
            do_constant_folding=False,
        )
    return path


def test_onnx_shape_arithmetic_stays_symbolic_and_compiles_once(tmp_path):
    torch.manual_seed(0)
    path = _export(ShapeArithmetic(), (torch.randn(2, 4, 6),), tmp_path / "m.onnx", [{0: "N"}])
    ops = {n.op_type for n in onnx.load(str(path)).graph.node}
    assert {"Shape", "Gather", "Concat", "Reshape", "ConstantOfShape", "Expand"} <= ops
    module = cuvil.load_onnx(path)
    assert module.input_spec == {"x0": cuvil.TensorSpec(("N", 4, 6), "float32")}
    assert module.output_spec == (cuvil.TensorSpec(("N", 8), "float32"),)
    assert 'tensor<?x4x6xf32> {cuvil.symbols = ["N"]}' in module.text
    _assert_one_compilation(module, _ort_reference(path), _floats(lambda n: (n, 4, 6)))


class Upsampler(nn.Module):
    """A decoder stage: conv, nearest upsampling by 2, conv, over images of any size."""

    def __init__(self):
        super().__init__()
        self.reduce = nn.Conv2d(3, 4, 3, padding=1)
        self.smooth = nn.Conv2d(4, 2, 3, padding=1)

    def forward(self, x):
        up = nn.functional.interpolate(torch.relu(self.reduce(x)), scale_factor=2, mode="nearest")
        return self.smooth(up)


def test_onnx_nearest_resize_of_symbolic_image_sizes_compiles_once(tmp_path):
    torch.manual_seed(0)
    axes = [{0: "N", 2: "H", 3: "W"}]
    path = _export(Upsampler(), (torch.randn(1, 3, 8, 8),), tmp_path / "up.onnx", axes)
    assert "Resize" in {n.op_type for n in onnx.load(str(path)).graph.node}
    module = cuvil.load_onnx(path)
    assert module.output_spec == (cuvil.TensorSpec(("N", 2, "H * 2", "W * 2"), "float32"),)
    _assert_one_compilation(
        module, _ort_reference(path), _floats(lambda n: (n, 3, n + 3, 2 * n + 1))
    )


def test_onnx_resize_a_symbolic_axis_cannot_interpolate_is_refused_with_the_node():
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 1, "H", 4])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 1, "H2", 8])
    scales = helper.make_tensor("s", onnx.TensorProto.FLOAT, [4], [1, 1, 2, 2])
    resize = helper.make_node("Resize", ["x", "", "s"], ["y"], name="up", mode="linear")
    graph = helper.make_graph([resize], "g", [x], [y], [scales])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(
        cuvil.UnsupportedConstructError,
        match="Resize node 'up'.*linear Resize by 2 of the symbolic axis 2",
    ):
        cuvil.load_onnx(model)


def test_onnx_slices_of_a_symbolic_axis_with_static_bounds_compile_once():
    # The last token (starts -1, ends INT64_MAX) and the inner tokens (1 to -1) of a
    # sequence of any length; both hold for T >= 2, which each call checks.
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["B", "T", 8])
    outputs = [
        helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, ["B", d, 8])
        for n, d in (("last", 1), ("inner", "U"))
    ]
    inits = [
        helper.make_tensor(n, onnx.TensorProto.INT64, [1], [v])
        for n, v in (
            ("from_end", -1),
            ("end", 2**63 - 1),
            ("axis", 1),
            ("one", 1),
            ("minus_one", -1),
        )
    ]
    nodes = [
        helper.make_node("Slice", ["x", "from_end", "end", "axis"], ["last"], name="last"),
        helper.make_node("Slice", ["x", "one", "minus_one", "axis"], ["inner"], name="inner"),
    ]
    graph = helper.make_graph(nodes, "g", [x], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    module = cuvil.load_onnx(model)
    assert [s.shape for s in module.output_spec] == [("B", 1, 8), ("B", "T + -2", 8)]
    assert module.symbol_ranges == {"T": (2, None)}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    before = cuvil.compilations()
    compiled = module.compile()
    rng = np.random.default_rng(7)
    for batch, length in ((1, 3), (3, 5), (2, 9)):
        data = rng.standard_normal((batch, length, 8)).astype(np.float32)
        for got, want in zip(compiled(data), session.run(None, {"x": data})):
            np.testing.assert_array_equal(got, want)
    assert len(_new_compilations(before)) == 1
    with pytest.raises(ValueError, match="dim 1 is 1, but the model allows 2 <= T"):
        compiled(np.zeros((1, 1, 8), np.float32))


def test_onnx_dims_without_value_or_param_get_fresh_symbols():
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [None, 3])
    x.type.tensor_type.shape.dim[0].Clear()  # neither dim_value nor dim_param
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [None, 3])
    graph = helper.make_graph([helper.make_node("Tanh", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    module = cuvil.load_onnx(model)
    assert module.input_spec == {"x": cuvil.TensorSpec(("x_0", 3), "float32")}
    _assert_one_compilation(module, np.tanh, _floats(lambda n: (n, 3)))
    # A static input_spec still wins over the declared dims.
    static = cuvil.load_onnx(model, input_spec={"x": (4, 3)})
    assert static.input_spec == {"x": cuvil.TensorSpec((4, 3), "float32")}


def test_onnx_gpt2_with_symbolic_batch_and_sequence_compiles_once(zoo, tmp_path):
    path = zoo.export_onnx("gpt2", tmp_path / "gpt2.onnx", dynamic=True)
    # The positions are a Range up to the sequence length, the causal mask a Slice of a
    # 16 x 16 buffer up to it, and the attention's reshapes take batch and sequence at
    # run time: one compilation serves every (batch, sequence).
    module = cuvil.load_onnx(path)
    assert module.input_spec == {"input_ids": cuvil.TensorSpec(("batch", "sequence"), "int64")}
    assert all(op in module.text for op in ("cuvil.dim", "cuvil.range", "cuvil.slice"))
    _assert_one_compilation(module, _ort_reference(path), _token_ids(), GPT2_SIZES)
    # The mask's 16 rows bound the sequence: a longer one is refused, not clamped.
    assert module.symbol_ranges == {"sequence": (1, 16)}
    with pytest.raises(ValueError, match="dim 1 is 17, but the model allows 1 <= sequence <= 16"):
        module.compile()(np.zeros((1, 17), np.int64))
    # The names given to to_ir_with_dynamic_shape replace the file's.
    module = to_ir_with_dynamic_shape(path, [cuvil.TensorSpec(("b", "t"), "int64")])
    assert module.output_spec == (cuvil.TensorSpec(("b", "t", 64), "float32"),)
    # Static shapes given to load_onnx import and run.
    module = cuvil.load_onnx(path, input_spec={"input_ids": (2, 5)})
    ids = np.random.default_rng(0).integers(0, 64, (2, 5))
    np.testing.assert_allclose(module.compile()(ids), _ort_reference(path)(ids), **TOLERANCE)


def test_onnx_nodes_needing_static_sizes_name_the_node_and_the_dim():
    # A Range that starts at a symbolic size: only a Range's limit may be one.
    shape = helper.make_node("Shape", ["x"], ["shape"], name="shape")
    index = helper.make_tensor("one", onnx.TensorProto.INT64, [], [1])
    gather = helper.make_node("Gather", ["shape", "one"], ["t"], name="length")
    limit = helper.make_tensor("limit", onnx.TensorProto.INT64, [], [64])
    step = helper.make_tensor("step", onnx.TensorProto.INT64, [], [1])
    rng = helper.make_node("Range", ["t", "limit", "step"], ["y"], name="tail")
    graph = helper.make_graph(
        [shape, gather, rng],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, "T"])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.INT64, [None])],
        [index, limit, step],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(cuvil.UnsupportedConstructError) as info:
        cuvil.load_onnx(model)
    message = str(info.value)
    assert "ONNX Range node 'tail' needs a static size" in message
    assert "symbolic dimension T" in message
    assert "Fix: pass a static input_spec" in message


@pytest.mark.parametrize(
    "name,spec,shape_of_size",
    [
        # conv and pooling with a dynamic batch (the dynamic conv/pool lowering)
        ("resnet", None, lambda n: (n, 3, 32, 32)),
        # attention over a dynamic sequence: batched matmul with two dynamic operands
        ("bert", [cuvil.TensorSpec((2, "sequence", 32), "float32")], lambda n: (2, n + 2, 32)),
    ],
)
def test_onnx_zoo_models_exported_with_dynamic_axes_compile_once(
    zoo, tmp_path, name, spec, shape_of_size
):
    path = zoo.export_onnx(name, tmp_path / f"{name}.onnx", dynamic=True)
    module = cuvil.load_onnx(path) if spec is None else to_ir_with_dynamic_shape(path, spec)
    assert module.is_symbolic
    _assert_one_compilation(module, _ort_reference(path), _floats(shape_of_size))


# ----- PyTorch: torch.export -------------------------------------------------------------------


class FoldTokens(nn.Module):
    """sym_size, SymInt arithmetic and a view with symbolic sizes."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        b, t, c = x.shape
        tokens = self.fc(x.view(b * t, c))  # a view to a product of two symbols
        z = torch.tanh(self.fc(x)).reshape(b, t * 5)
        return (z * 2.0 + torch.ones_like(z)).mean(dim=1) + tokens.sum()


def _torch_reference(model):
    def run(*arrays):
        with torch.no_grad():
            return model(*(torch.from_numpy(a) for a in arrays)).numpy()

    return run


@pytest.mark.parametrize(
    "spec",
    [
        [cuvil.TensorSpec(("N", 4, 6), "float32")],
        [(torch.export.Dim("N", max=64), 4, 6)],
    ],
    ids=["names", "torch.export.Dim"],
)
def test_torch_export_keeps_symbolic_sizes_and_compiles_once(spec):
    torch.manual_seed(0)
    model = FoldTokens().eval()
    module = to_ir_with_dynamic_shape(model, spec)
    assert module.input_spec == {"x": cuvil.TensorSpec(("N", 4, 6), "float32")}
    assert module.output_spec == (cuvil.TensorSpec(("N",), "float32"),)
    assert 'tensor<?x4x6xf32> {cuvil.symbols = ["N"]}' in module.text
    make = _floats(lambda n: (n, 4, 6))
    _assert_one_compilation(module, _torch_reference(model), make)


def test_torch_symbolic_size_needed_statically_is_refused_with_the_node():
    class Filled(nn.Module):
        def forward(self, x):
            return x + torch.full((x.shape[1],), 2.0)

    with pytest.raises(cuvil.UnsupportedConstructError) as info:
        to_ir_with_dynamic_shape(Filled(), [cuvil.TensorSpec((2, "T"), "float32")])
    message = str(info.value)
    assert "needs a static size but gets the symbolic size T" in message
    assert "FX node 'full'" in message


def test_torch_export_gpt2_with_symbolic_batch_and_sequence_compiles_once(zoo):
    # arange(ids.shape[1]), the causal mask sliced to [:t, :t] (export bounds t by the
    # mask's 16 rows), Linear on 3-D inputs (view to [N*T, C], addmm, view back).
    model, _ = zoo.build("gpt2")
    model.eval()
    module = to_ir_with_dynamic_shape(model, [cuvil.TensorSpec(("batch", "seq"), "int64")])
    assert module.input_spec == {"ids": cuvil.TensorSpec(("batch", "seq"), "int64")}
    assert module.output_spec == (cuvil.TensorSpec(("batch", "seq", 64), "float32"),)
    _assert_one_compilation(module, _torch_reference(model), _token_ids(), GPT2_SIZES)
    # The sequence export found bounded stays bounded: a longer one is refused before the
    # mask slice would clamp to 16 rows or the position lookup read past the table.
    assert module.symbol_ranges == {"seq": (1, 16)}
    compiled = module.compile()
    with pytest.raises(
        ValueError, match=r"input 'ids' dim 1 is 17, but the model allows 1 <= seq <= 16"
    ):
        compiled(np.zeros((2, 17), np.int64))
    assert compiled(np.zeros((2, 16), np.int64)).shape == (2, 16, 64)


ZOO_TORCH_SPECS = {
    # conv and pooling with a dynamic batch (the dynamic conv/pool lowering)
    "resnet": ([cuvil.TensorSpec(("batch", 3, 32, 32), "float32")], lambda n: (n, 3, 32, 32)),
    # attention over a dynamic sequence: batched matmul with two dynamic operands
    "bert": ([cuvil.TensorSpec((2, "sequence", 32), "float32")], lambda n: (2, n + 2, 32)),
}


@pytest.mark.parametrize("name", sorted(ZOO_TORCH_SPECS))
def test_torch_export_zoo_models_compile_once(zoo, name):
    model, _ = zoo.build(name)
    spec, shape_of_size = ZOO_TORCH_SPECS[name]
    module = to_ir_with_dynamic_shape(model, spec)
    assert module.is_symbolic
    _assert_one_compilation(module, _torch_reference(model), _floats(shape_of_size))


def test_torch_export_bert_with_batch_and_sequence_symbolic_compiles_once(zoo):
    # Linear layers on [batch, sequence, c] flatten both symbols into one dim and back, and
    # a non-contiguous input's linear is a bmm with the weight expanded over the batch:
    # the importer undoes the flattening and lets the matmul broadcast the weight.
    model, _ = zoo.build("bert")
    module = to_ir_with_dynamic_shape(model, [cuvil.TensorSpec(("B", "T", 32), "float32")])
    assert module.output_spec == (cuvil.TensorSpec(("B", "T", 32), "float32"),)
    make = _floats(lambda n: (n, 2 * n + 1, 32))
    _assert_one_compilation(module, _torch_reference(model), make)


# ----- PyTorch: torch.compile ---------------------------------------------------------------


def _torch_compile_once(model, make_inputs, sizes=(2, 3, 8), **options):
    """``torch.compile(model, backend="cuvil", **options)`` matches eager at each size."""
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="cuvil", **options)
    before = cuvil.compilations()
    with torch.no_grad():
        for size in sizes:
            inputs = [torch.from_numpy(a) for a in make_inputs(size)]
            torch.testing.assert_close(compiled(*inputs), model(*inputs), **TOLERANCE)
    torch._dynamo.reset()
    return _new_compilations(before)


def test_torch_compile_dynamic_is_one_compilation_for_all_batch_sizes():
    torch.manual_seed(0)
    model = FoldTokens().eval()
    # Dynamo specializes sizes 0 and 1, so the batch sizes start at 2.
    new = _torch_compile_once(model, _floats(lambda n: (n, 4, 6)), dynamic=True)
    assert len(new) == 1
    (x_type,) = [t for t in new[0].input_types if len(t[1]) == 3]
    # Every size Dynamo made symbolic stays so: the reshape back to (b, t * 5) takes both
    # sizes at run time.
    assert all(isinstance(d, str) for d in x_type[1][:2]) and x_type[1][2] == 6


@pytest.mark.parametrize("name", sorted(ZOO_TORCH_SPECS))
def test_torch_compile_zoo_models_compile_once_after_the_recompile(zoo, name):
    model, _ = zoo.build(name)
    shape = (lambda n: (n, 3, 32, 32)) if name == "resnet" else (lambda n: (n, 7, 32))
    # Automatic dynamic shapes: the first batch size compiles statically; at the second,
    # Dynamo recompiles with the batch symbolic, which Cuvil compiles once for every
    # later size.
    new = _torch_compile_once(model, _floats(shape), sizes=(2, 3, 5, 8))
    assert len(new) == 2
    assert any(isinstance(d, str) for _, shape in new[1].input_types for d in shape)


# With dynamic=True, Dynamo passes the models' float attributes (norm eps, dropout p) as
# 0-d tensors read with .item(), and every size is a symbol: each model still compiles once.
ZOO_DYNAMIC = {
    # batch symbolic (and, the images being square, height = width)
    "resnet": (_floats(lambda n: (n, 3, 32, 32)), (0, 2, 3)),
    # batch and sequence symbolic: linear layers and attention on [batch, sequence, ...]
    "bert": (_floats(lambda n: (n, 2 * n + 1, 32)), (0, 1)),
    # batch and sequence symbolic (positions are a cuvil.range, the causal mask a slice up
    # to the run-time length; sequences within the model's context of 16)
    "gpt2": (lambda n: (np.random.default_rng(n).integers(0, 64, (n, n + 5)),), (0, 1)),
}


@pytest.mark.parametrize("name", sorted(ZOO_DYNAMIC))
def test_torch_compile_dynamic_zoo_models_compile_once(zoo, name):
    model, _ = zoo.build(name)
    make_inputs, symbolic_axes = ZOO_DYNAMIC[name]
    new = _torch_compile_once(model, make_inputs, dynamic=True)
    assert len(new) == 1
    # The weights are inputs of Dynamo's graph too, with static shapes.
    (shape,) = [s for _, s in new[0].input_types if any(isinstance(d, str) for d in s)]
    assert tuple(i for i, d in enumerate(shape) if isinstance(d, str)) == symbolic_axes


class ReshapeToTwelve(nn.Module):
    def forward(self, x):
        return torch.tanh(x.reshape(-1, 12)) * 2.0


def test_torch_compile_dynamic_size_guarded_to_a_constant_stays_static():
    # Dynamo's guards make the second dim of reshape(-1, 12) an expression of all three
    # symbols proven equal to 12; the importer reads it as 12, so the reshape has one
    # dynamic dim and every size (within the guards) runs the one compilation.
    model = ReshapeToTwelve()
    shapes = {2: (2, 6, 4), 3: (3, 4, 4), 8: (5, 6, 4)}
    new = _torch_compile_once(model, _floats(lambda n: shapes[n]), dynamic=True)
    assert len(new) == 1
    assert "tensor<?x12xf32>" in new[0].mlir


class FlattenLeading(nn.Module):
    def forward(self, x):
        return torch.tanh(x.flatten(0, 1)) * 2.0


def test_torch_compile_flatten_of_symbolic_sizes_passes_its_sizes():
    # [b, t, c] -> [b*t, c] with all three sizes symbolic: the compiler alone would regroup
    # it as [b, t*c]; the importer passes the run-time sizes (b*t, c), so one compilation
    # serves every size with the right shape.
    sizes = {2: (2, 3, 4), 3: (3, 3, 4), 8: (8, 5, 6)}
    new = _torch_compile_once(FlattenLeading(), _floats(lambda n: sizes[n]), dynamic=True)
    assert len(new) == 1
    ((_, shape),) = new[0].input_types
    assert all(isinstance(d, str) for d in shape)


# ----- JAX ------------------------------------------------------------------------------------


def _jax_model():
    import jax
    import jax.numpy as jnp

    weight = np.random.default_rng(2).standard_normal((6, 5)).astype(np.float32)

    def model(x):
        h = jnp.tanh(x @ weight + 1.0)
        return h.reshape(h.shape[0], -1).sum(axis=1) + jax.nn.relu(h).mean(axis=1)

    return model


def test_jax_symbolic_shape_structs_compile_once():
    import jax
    import jax.numpy as jnp

    model = _jax_model()
    struct = jax.ShapeDtypeStruct(jax.export.symbolic_shape("N, 6"), jnp.float32)
    module = cuvil.compile_to_ir(model, struct)
    assert module.input_spec == {"x": cuvil.TensorSpec(("N", 6), "float32")}
    assert module.output_spec == (cuvil.TensorSpec(("N",), "float32"),)
    _assert_one_compilation(module, lambda x: np.asarray(model(x)), _floats(lambda n: (n, 6)))


def test_jax_string_dims_in_input_spec_stay_symbolic():
    import jax

    model = _jax_model()
    spec = [cuvil.TensorSpec(("batch", 6), "float32")]
    for module in (
        cuvil.compile_to_ir(model, *spec),
        to_ir_with_dynamic_shape(jax.jit(model), spec),
    ):
        assert 'tensor<?x6xf32> {cuvil.symbols = ["batch"]}' in module.text
        assert module.output_spec == (cuvil.TensorSpec(("batch",), "float32"),)
    _assert_one_compilation(module, lambda x: np.asarray(model(x)), _floats(lambda n: (n, 6)))
    with pytest.raises(cuvil.ShapeSpecError, match="Missing shape attr"):
        cuvil.frontend.build_ir(model=jax.jit(model), input_spec={"x": (None, 6)})


def _jax_broadcasts():
    """Softmax over either axis (a reduce, then broadcast_in_dim back along the symbolic dim)
    and broadcasts to sizes computed from the symbols (``jnp.zeros``, an outer sum)."""
    import jax
    import jax.numpy as jnp

    def model(x):
        n = x.shape[0]
        rows = jax.nn.softmax(x, axis=-1) + jax.nn.softmax(x, axis=0)
        filled = jnp.zeros((n, 6)) + jnp.ones_like(x) * 0.5
        outer = jnp.broadcast_to(jnp.sum(x, 1)[None, :], (2 * n, n))
        return rows + filled, outer

    return model


def test_jax_broadcasts_along_symbolic_dims_compile_once():
    import jax
    import jax.numpy as jnp

    model = _jax_broadcasts()
    struct = jax.ShapeDtypeStruct(jax.export.symbolic_shape("N, 6"), jnp.float32)
    module = cuvil.compile_to_ir(model, struct)
    assert module.output_spec == (
        cuvil.TensorSpec(("N", 6), "float32"),
        cuvil.TensorSpec(("N * 2", "N"), "float32"),
    )
    before = cuvil.compilations()
    compiled = module.compile()
    make = _floats(lambda n: (n, 6))
    for n in (1, 3, 8):
        (x,) = make(n)
        for got, want in zip(compiled(x), model(x)):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, np.asarray(want), **TOLERANCE)
    assert len(_new_compilations(before)) == 1


def test_jax_symbolic_transformer_block_compiles_once():
    import jax
    import jax.numpy as jnp

    dim, heads = 16, 2
    rng = np.random.default_rng(3)
    w = {
        k: rng.standard_normal(s).astype(np.float32) * 0.2
        for k, s in {"qkv": (dim, 3 * dim), "proj": (dim, dim)}.items()
    }

    def block(x):
        batch, length, _ = x.shape
        q, k, v = jnp.split(x @ w["qkv"], 3, axis=-1)
        split = lambda t: t.reshape(batch, length, heads, dim // heads)  # noqa: E731
        scores = jnp.einsum("bqhd,bkhd->bhqk", split(q), split(k)) / np.sqrt(dim // heads)
        attn = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), split(v))
        return x + attn.reshape(batch, length, dim) @ w["proj"]

    struct = jax.ShapeDtypeStruct(jax.export.symbolic_shape(f"B, T, {dim}"), jnp.float32)
    module = cuvil.compile_to_ir(block, struct)
    before = cuvil.compilations()
    compiled = module.compile()
    for b, t in ((1, 3), (2, 5), (3, 8)):
        x = rng.standard_normal((b, t, dim)).astype(np.float32)
        np.testing.assert_allclose(compiled(x), np.asarray(block(x)), **TOLERANCE)
    assert len(_new_compilations(before)) == 1


def test_jax_reshape_back_to_two_symbolic_dims_compiles_once():
    import jax
    import jax.numpy as jnp

    def model(x):  # [B, T, 8] to rows and back: B and T are given at run time
        batch, length, width = x.shape
        return jnp.tanh(x.reshape(batch * length, width)).reshape(batch, length, width) + 1

    struct = jax.ShapeDtypeStruct(jax.export.symbolic_shape("B, T, 8"), jnp.float32)
    module = cuvil.compile_to_ir(model, struct)
    assert module.output_spec == (cuvil.TensorSpec(("B", "T", 8), "float32"),)
    rng = np.random.default_rng(6)
    before = cuvil.compilations()
    compiled = module.compile()
    for b, t in ((1, 2), (3, 5), (2, 7)):
        x = rng.standard_normal((b, t, 8)).astype(np.float32)
        np.testing.assert_allclose(compiled(x), np.asarray(model(x)), **TOLERANCE)
    assert len(_new_compilations(before)) == 1
