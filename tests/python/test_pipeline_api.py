"""cuvil.PipelineBuilder, cuvil.Pass and cuvil.Operation: Python passes inside the compiler."""

from __future__ import annotations

import os
import pathlib
import sys

import numpy as np
import pytest
from conftest import REPO_ROOT, caller_line, load_example

import cuvil

sys.path.insert(0, str(REPO_ROOT / "plugins" / "python"))
from division_by_constant import DivisionByConstantToMultiply  # noqa: E402

BUILD_DIR = pathlib.Path(os.environ.get("CUVIL_BUILD_DIR", REPO_ROOT / "build"))
PLUGIN = BUILD_DIR / "lib" / "CuvilExamplePlugin.so"


@pytest.fixture
def snapshots():
    cuvil.set_snapshot_capture(True)
    yield
    cuvil.set_snapshot_capture(False)


def _snapshots(jitted):
    return jitted._last_compiled.compiled.snapshots


def _ir_after(jitted, name):
    found = [s for s in _snapshots(jitted) if s["name"] == name]
    assert found, f"no snapshot for {name}: {[s['name'] for s in _snapshots(jitted)]}"
    return found[0]["ir"]


# ----- the SPEC example, verbatim -------------------------------------------------------


class CustomLoweringPass(cuvil.Pass):
    def __init__(self, enable_fusion=True, tile_size=16):
        super().__init__("custom-lowering")
        self.enable_fusion, self.tile_size = enable_fusion, tile_size

    def run_on_operation(self, op: cuvil.Operation) -> bool:  # True = changed
        self.visited = getattr(self, "visited", []) + [(op.name, op.location)]
        return False


def test_spec_example_pass_runs_at_func_level_and_changes_nothing(snapshots):
    pb = cuvil.PipelineBuilder()
    custom = CustomLoweringPass(tile_size=32)
    pb.insert_after("cuvil-fold-constants", custom)
    assert custom.options == {"enable_fusion": True, "tile_size": 32}

    @cuvil.jit(pipeline=pb)
    def scaled(a, b):
        return a * b + 1.0

    line = caller_line() - 3
    a = np.full((4, 8), 3.0, np.float32)
    b = np.full((4, 8), 2.0, np.float32)
    np.testing.assert_array_equal(scaled(a, b), a * b + 1.0)
    assert custom.visited == [("func.func", f"{__file__}:{line}:5")]
    names = [s["name"] for s in _snapshots(scaled)]
    i = names.index("custom-lowering")
    assert names[i - 1] == "cuvil-fold-constants"
    step = _snapshots(scaled)[i]
    assert step["stage"] == "cuvil" and step["changed"] is False and step["wall_ms"] > 0


def test_configure_sets_python_pass_options_and_rejects_unknown_ones():
    pb = cuvil.PipelineBuilder()
    custom = CustomLoweringPass()
    pb.insert_after("cuvil-fold-constants", custom)
    pb.configure("custom-lowering", tile_size=64, enable_fusion=False)
    assert (custom.tile_size, custom.enable_fusion) == (64, False)
    with pytest.raises(KeyError, match="no option 'tile'.*tile_size"):
        pb.configure("custom-lowering", tile=8)


# ----- reading and rewriting the IR -----------------------------------------------------


class Recorder(cuvil.Pass):
    def __init__(self, level, op_name=None):
        super().__init__(f"record-{level}", level=level, op_name=op_name)
        self.calls = []

    def run_on_operation(self, op):
        self.calls.append(
            {
                "name": op.name,
                "location": op.location,
                "operand_types": [v.type for v in op.operands],
                "result_types": [v.type for v in op.results],
                "attributes": op.attributes,
                "parent": op.parent.name if op.parent is not None else None,
            }
        )
        return False


def test_levels_module_func_and_op():
    module, func, op, ops = (
        Recorder("module"),
        Recorder("func"),
        Recorder("op", "cuvil.reduce_sum"),
        Recorder("op"),
    )
    pb = cuvil.PipelineBuilder()
    for p in (module, func, op, ops):
        pb.insert_before("convert-cuvil-to-linalg", p)

    @cuvil.jit(pipeline=pb)
    def f(x):
        return np.sum(np.exp(x), axis=1, keepdims=True)

    line = caller_line() - 2
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(f(x), np.exp(x).sum(axis=1, keepdims=True), rtol=1e-6)
    assert [c["name"] for c in module.calls] == ["builtin.module"]
    assert module.calls[0]["parent"] is None
    assert [c["name"] for c in func.calls] == ["func.func"]
    assert func.calls[0]["parent"] == "builtin.module"
    (reduce_call,) = op.calls
    assert reduce_call["name"] == "cuvil.reduce_sum"
    assert reduce_call["location"] == f"{__file__}:{line}:16"
    assert reduce_call["operand_types"] == ["tensor<3x4xf32>"]
    assert reduce_call["result_types"] == ["tensor<3x1xf32>"]
    assert reduce_call["attributes"]["keepdims"] == "true"
    assert reduce_call["parent"] == "func.func"
    assert [c["name"] for c in ops.calls] == ["cuvil.exp", "cuvil.reduce_sum", "func.return"]


class MulToAdd(cuvil.Pass):
    level, op_name = "op", "cuvil.mul"

    def __init__(self):
        super().__init__("mul-to-add")

    def run_on_operation(self, op):
        a, b = op.operands
        added = op.create_before("cuvil.add", [a, b], [op.results[0].type])
        op.replace_with(added.results)
        return True


def test_rewrite_replaces_ops_and_keeps_the_users_location(snapshots):
    pb = cuvil.PipelineBuilder()
    pb.insert_before("convert-cuvil-to-linalg", MulToAdd())

    @cuvil.jit(pipeline=pb)
    def f(x, y):
        return x * y - 1.0

    line = caller_line() - 2
    x, y = np.full(5, 3.0, np.float32), np.full(5, 2.0, np.float32)
    np.testing.assert_array_equal(f(x, y), x + y - 1.0)  # the rewrite really ran
    ir = _ir_after(f, "mul-to-add")
    assert "cuvil.mul" not in ir and "cuvil.add" in ir
    assert f'loc("{__file__}":{line}:16)' in ir
    assert [s["changed"] for s in _snapshots(f) if s["name"] == "mul-to-add"] == [True]


def test_pass_times_are_kept_without_capture_and_changes_only_with_it():
    """Without snapshot capture every pass still reports its time, but whether it
    changed the IR is unknown (None): finding out hashes the IR twice per pass."""

    @cuvil.jit
    def f(x, y):
        return x * y - 1.0

    x = np.full(5, 3.0, np.float32)
    f(x, x)
    plain = _snapshots(f)
    assert plain and all(s["changed"] is None and s["ir"] == "" for s in plain)
    assert all(s["wall_ms"] >= 0 for s in plain)
    cuvil.set_snapshot_capture(True)
    try:
        g = cuvil.jit(lambda x, y: x * y - 1.0)
        g(x, x)
        captured = _snapshots(g)
    finally:
        cuvil.set_snapshot_capture(False)
    assert [s["name"] for s in captured] == [s["name"] for s in plain]
    assert all(isinstance(s["changed"], bool) for s in captured)
    assert any(s["changed"] for s in captured) and not all(s["changed"] for s in captured)


class Tagger(cuvil.Pass):
    def __init__(self):
        super().__init__("tag-matmuls", level="op", op_name="cuvil.matmul")
        self.flops = []

    def run_on_operation(self, op):
        (m, k), (_, n) = [
            tuple(int(d) for d in v.type[len("tensor<") : -1].split("x")[:-1]) for v in op.operands
        ]
        op.set_attribute("cuvil.flops", 2 * m * n * k)
        op.set_attribute("cuvil.note", '"tagged"')
        self.flops.append(2 * m * n * k)
        return True


def test_set_attribute_is_visible_in_the_next_snapshot(snapshots):
    pb = cuvil.PipelineBuilder()
    pb.insert_after("cuvil:cse", Tagger())

    @cuvil.jit(pipeline=pb)
    def f(a, b):
        return a @ b

    a, b = np.ones((4, 6), np.float32), np.ones((6, 5), np.float32)
    np.testing.assert_array_equal(f(a, b), a @ b)
    ir = _ir_after(f, "tag-matmuls")
    assert "cuvil.flops = 240 : i64" in ir and 'cuvil.note = "tagged"' in ir


class EraseDead(cuvil.Pass):
    """Erases ops whose results nobody uses (a dead-code pass written in Python)."""

    def __init__(self):
        super().__init__("erase-dead", level="func")
        self.erased = []

    def run_on_operation(self, op):
        changed = False
        for child in reversed(op.walk()):
            if child.results and all(not r.uses for r in child.results):
                self.erased.append(child.name)
                child.erase()
                changed = True
        return changed


def test_erase_and_handle_validity():
    source = """
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %dead = cuvil.exp %x : tensor<4xf32>
    %y = cuvil.neg %x : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
"""
    ext = cuvil._jit._extension()
    pb = cuvil.PipelineBuilder()
    eraser = EraseDead()
    pb.insert_before("cuvil-propagate-symbols", eraser)
    steps = pb.extension_steps()
    compiled = ext.compile(source, "f", steps=steps, capture_snapshots=True)
    assert eraser.erased == ["cuvil.exp"]
    assert "cuvil.exp" not in compiled.snapshots[0]["ir"]
    x = np.arange(4, dtype=np.float32)
    out = np.empty(4, np.float32)
    compiled([x], [out])
    np.testing.assert_array_equal(out, -x)


class KeepsHandles(cuvil.Pass):
    def __init__(self):
        super().__init__("keeps-handles", level="op", op_name="cuvil.neg")
        self.kept = []
        self.errors = []

    def run_on_operation(self, op):
        self.kept.append(op)
        for action in (op.erase, lambda: op.create_before("cuvil.nonexistent")):
            try:
                action()
            except cuvil.IRError as error:
                self.errors.append(str(error))
        return False


def test_handles_report_misuse_instead_of_crashing():
    pb = cuvil.PipelineBuilder()
    keeper = KeepsHandles()
    pb.insert_before("convert-cuvil-to-linalg", keeper)

    @cuvil.jit(pipeline=pb)
    def f(x):
        return -x + 1.0

    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(f(x), -x + 1.0)
    assert "still has uses" in keeper.errors[0]
    assert "unknown operation 'cuvil.nonexistent'" in keeper.errors[1]
    (stale,) = keeper.kept
    assert not stale.valid
    with pytest.raises(cuvil.IRError, match="'keeps-handles', which has returned"):
        stale.name
    assert "has returned" in repr(stale)


# ----- errors in Python passes ------------------------------------------------------------


class Raises(cuvil.Pass):
    def __init__(self):
        super().__init__("raises")

    def run_on_operation(self, op):
        raise ValueError("cannot handle " + op.name)  # RAISE-LINE


class ReturnsNone(cuvil.Pass):
    def __init__(self):
        super().__init__("returns-none")

    def run_on_operation(self, op):
        return None


class BreaksTypes(cuvil.Pass):
    level, op_name = "op", "cuvil.neg"

    def __init__(self):
        super().__init__("breaks-types")

    def run_on_operation(self, op):
        op.create_before("cuvil.exp", op.operands, ["tensor<7xf32>"])
        return True


def _compile_with(p, anchor="convert-cuvil-to-linalg"):
    pb = cuvil.PipelineBuilder()
    pb.insert_before(anchor, p)

    @cuvil.jit(pipeline=pb)
    def f(x):
        return -x

    return f(np.ones(3, np.float32))


def test_exception_in_pass_names_pass_and_line():
    from conftest import line_of

    with pytest.raises(cuvil.PassError) as info:
        _compile_with(Raises())
    line = line_of("# RAISE-LINE", __file__)
    message = str(info.value)
    assert "Python pass 'raises' (Raises) raised ValueError: cannot handle func.func" in message
    assert f"{__file__}:{line}" in message
    assert isinstance(info.value.__cause__, ValueError)


def test_non_bool_result_is_reported():
    with pytest.raises(cuvil.PassError, match="must return True .* not NoneType"):
        _compile_with(ReturnsNone())


def test_invalid_ir_left_by_a_pass_is_reported_with_the_pass_name():
    with pytest.raises(cuvil.CompileError) as info:
        _compile_with(BreaksTypes())
    message = str(info.value)
    assert "pass 'breaks-types' left invalid IR" in message
    assert "cuvil.exp" in message


# ----- editing the pipeline ------------------------------------------------------------


def test_default_pipeline_comes_from_the_compiler():
    pb = cuvil.PipelineBuilder()
    names = [p.name for p in pb.passes]
    assert names[0] == "cuvil-propagate-symbols" and names[-1] == "reconcile-unrealized-casts"
    assert names.index("convert-cuvil-to-linalg") < names.index("cuvil-fuse-elementwise")
    assert {p.stage for p in pb.passes} == {
        "cuvil",
        "linalg",
        "fusion",
        "schedule",
        "bufferize",
        "llvm",
    }
    unfused = cuvil.PipelineBuilder(enable_fusion=False)
    assert "cuvil-fuse-elementwise" not in [p.name for p in unfused.passes]


def test_ambiguous_and_unknown_anchors():
    pb = cuvil.PipelineBuilder()
    with pytest.raises(KeyError, match="'canonicalize' runs .* times .*cuvil:canonicalize"):
        pb.insert_after("canonicalize", CustomLoweringPass())
    with pytest.raises(KeyError, match="no pass named 'no-such-pass'.*cuvil-fuse-elementwise"):
        pb.insert_after("no-such-pass", CustomLoweringPass())
    info = pb.insert_after("fusion:canonicalize", CustomLoweringPass())
    assert info.stage == "fusion"
    with pytest.raises(TypeError, match="cuvil.Pass instance or the name"):
        pb.insert_after("cuvil-fold-constants", 42)
    with pytest.raises(ValueError, match="level must be one of"):
        cuvil.Pass("x", level="block")


def test_configure_builtin_pass_options(snapshots):
    pb = cuvil.PipelineBuilder()
    pb.configure("cuvil-cpu-schedule", vector_lanes=8)
    (schedule,) = [p for p in pb.passes if p.name == "cuvil-cpu-schedule"]
    assert schedule.pipeline == "cuvil-cpu-schedule{vector-lanes=8}"
    with pytest.raises(ValueError, match="configure\\('cuvil-cpu-schedule'\\)"):
        pb.configure("cuvil-cpu-schedule", no_such_option=1)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 32), dtype=np.float32)
    b = rng.standard_normal((32, 64), dtype=np.float32)
    # The GEMM micro-kernel is 2 vector registers of `lanes` floats wide, 8
    # rows with 16 lanes (AVX-512's 32 registers), 4 with 8 (AVX2's 16).
    for lanes, tile in ((8, "vector<4x16xf32>"), (16, "vector<8x32xf32>")):
        pb.configure("cuvil-cpu-schedule", vector_lanes=lanes)

        @cuvil.jit(pipeline=pb)
        def f(a, b):
            return a @ b

        np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-4, atol=1e-4)
        scheduled = _ir_after(f, "cuvil-cpu-schedule")
        assert tile in scheduled
        assert {"vector<4x16xf32>", "vector<8x32xf32>"} - {tile} & set(scheduled.split()) == set()
        assert ("vector<4x16xf32>" in scheduled) != ("vector<8x32xf32>" in scheduled)


def test_required_passes_cannot_be_disabled():
    pb = cuvil.PipelineBuilder()
    with pytest.raises(ValueError, match="linalg:convert-cuvil-to-linalg is required.*optional"):
        pb.disable("convert-cuvil-to-linalg")
    with pytest.raises(ValueError, match="built in; use disable"):
        pb.remove("cse")


def _graphs(rng):
    """(name, function, inputs): the bundled examples and graphs each optional pass acts on."""
    mlp = load_example("mlp")
    transformer = load_example("transformer_block")
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    scale, bias = (
        rng.uniform(0.5, 2, 4).astype(np.float32),
        rng.standard_normal(4).astype(np.float32),
    )
    mean, var = rng.standard_normal(4).astype(np.float32), rng.uniform(0.5, 2, 4).astype(np.float32)
    const = rng.standard_normal((8, 8)).astype(np.float32)

    def conv_bn(x):
        y = cuvil.conv2d(x, w, padding=(1, 1, 1, 1))
        return cuvil.relu(cuvil.batch_norm(y, scale, bias, mean, var, epsilon=1e-3))

    def constants(x):
        folded = np.transpose(const * 2.0).reshape(64)[:8] + 1.0
        return cuvil.dropout(np.tanh(x) * folded, 0.5) - (-x)

    return [
        ("mlp", mlp.mlp.__wrapped__, mlp.make_inputs()),
        ("transformer", transformer.transformer_block.__wrapped__, transformer.make_inputs()),
        ("conv_bn", conv_bn, (rng.standard_normal((2, 3, 8, 8)).astype(np.float32),)),
        ("constants", constants, (rng.standard_normal((4, 8)).astype(np.float32),)),
    ]


OPTIONAL = [p.qualified_name for p in cuvil.PipelineBuilder().passes if p.optional]


def test_optional_passes_are_the_graph_level_ones():
    assert OPTIONAL == [
        "cuvil:cuvil-strip-training-ops",
        "cuvil:cuvil-fold-batch-norm",
        "cuvil:cuvil-fold-constants",
        "cuvil:cuvil-merge-sibling-matmuls",
        "cuvil:canonicalize",
        "cuvil:cse",
        "linalg:canonicalize",
        "linalg:cse",
        "fusion:cuvil-fuse-elementwise",
        "fusion:canonicalize",
        "fusion:cse",
        "schedule:cuvil-tag-kernels",
        "bufferize:cuvil-plan-memory",
        "bufferize:cuvil-cpu-pack-gemm-panels",
        "bufferize:cuvil-instrument-kernels",
        "llvm:cuvil-approximate-math",
    ]


def _runs(jitted, qualified):
    stage, _, name = qualified.partition(":")
    return sum(1 for s in _snapshots(jitted) if (s["stage"], s["name"]) == (stage, name))


@pytest.mark.parametrize("disabled", OPTIONAL)
def test_each_optional_pass_off_gives_the_same_results(disabled, snapshots):
    rng = np.random.default_rng(3)
    for name, fn, inputs in _graphs(rng):
        default = cuvil.jit(fn)
        reference = default(*inputs)
        pb = cuvil.PipelineBuilder()
        pb.disable(disabled)
        jitted = cuvil.jit(fn, pipeline=pb)
        result = jitted(*inputs)
        assert cuvil.last_fallback_reason(jitted) is None, name
        assert _runs(jitted, disabled) == _runs(default, disabled) - 1, name
        np.testing.assert_allclose(result, reference, rtol=2e-5, atol=2e-5, err_msg=name)


# ----- plugins ------------------------------------------------------------------------------


@pytest.mark.skipif(not PLUGIN.exists(), reason=f"example plugin not built at {PLUGIN}")
def test_cpp_plugin_pass_from_python(snapshots):
    pb = cuvil.PipelineBuilder()
    pb.load_plugin(str(PLUGIN))
    pb.load_plugin(str(PLUGIN))  # loading twice is harmless
    info = pb.insert_before("cuvil-fold-constants", "cuvil-example-fold-double-negation")
    assert info.kind == "plugin" and info.stage == "cuvil"

    @cuvil.jit(pipeline=pb)
    def f(x):
        return -(-x) * 2.0  # noqa: B002 (a double negation for the pass to remove)

    x = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(f(x), x * 2.0)
    step = [s for s in _snapshots(f) if s["name"] == "cuvil-example-fold-double-negation"]
    assert step and step[0]["changed"] and "cuvil.neg" not in step[0]["ir"]


def test_plugin_errors_name_the_file_and_pass(tmp_path):
    pb = cuvil.PipelineBuilder()
    with pytest.raises(FileNotFoundError, match="no-plugin.so does not exist"):
        pb.load_plugin(str(tmp_path / "no-plugin.so"))
    bogus = tmp_path / "bogus.so"
    bogus.write_text("not a library")
    with pytest.raises(ValueError, match=f"cannot load pass plugin {bogus}"):
        pb.load_plugin(str(bogus))
    with pytest.raises(ValueError, match="'no-such-pass' is not a usable pass"):
        pb.insert_after("cuvil-fold-constants", "no-such-pass")


def test_example_python_pass_from_plugins(snapshots):
    pb = cuvil.PipelineBuilder()
    pb.insert_after("cuvil-fold-constants", DivisionByConstantToMultiply())

    @cuvil.jit(pipeline=pb)
    def f(x):
        return x / 4.0 + x / 3.0

    x = np.linspace(-3, 3, 16, dtype=np.float32)
    np.testing.assert_array_equal(f(x), x / 4.0 + x / 3.0)
    ir = _ir_after(f, "division-by-constant-to-multiply")
    assert "dense<2.500000e-01>" in ir and "cuvil.mul" in ir
    assert ir.count("cuvil.div") == 1  # x / 3 is not exact as a product: kept


def test_frontend_module_compiles_with_a_pipeline():
    pb = cuvil.PipelineBuilder()
    pb.insert_before("convert-cuvil-to-linalg", MulToAdd())
    module = cuvil.frontend.build_ir(model=lambda x: x * x, input_spec={"x": (2, 3)})
    compiled = module.compile(pipeline=pb)
    x = np.full((2, 3), 5.0, np.float32)
    np.testing.assert_array_equal(compiled(x), x + x)
    np.testing.assert_array_equal(module.compile()(x), x * x)  # default pipeline still cached apart
