"""Reduced precision (bf16, fp16) and quantization (int4 weight-only, int8 static) through
IRModule.optimize: each compiled result is checked against a NumPy model of the same
arithmetic (so a wrong code, scale or nibble fails), the report's sizes and accuracy
against float32, packages carrying the narrow weights, and clear errors for bad options."""

from __future__ import annotations

import math

import numpy as np
import pytest

import cuvil
from cuvil import _precision

D_IN, D_HIDDEN, D_OUT = 256, 128, 64


def _weights():
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((D_IN, D_HIDDEN), dtype=np.float32) / np.float32(math.sqrt(D_IN))
    b1 = (0.1 * rng.standard_normal(D_HIDDEN)).astype(np.float32)
    w2 = rng.standard_normal((D_HIDDEN, D_OUT), dtype=np.float32) / np.float32(math.sqrt(D_HIDDEN))
    return w1, b1, w2


W1, B1, W2 = _weights()


def mlp(x):
    return np.maximum(x @ W1 + B1, 0.0) @ W2


def _data(rows=16, count=8, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((rows, D_IN), dtype=np.float32) for _ in range(count)]


@pytest.fixture(scope="module")
def module():
    return cuvil.frontend.build_ir(mlp, {"x": (16, D_IN)})


def _bf16(a):
    """float32 rounded to bfloat16 (nearest even), as float64."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def _int4(w, group):
    k, n = w.shape
    groups = w.reshape(k // group, group, n).astype(np.float32)
    scale = np.abs(groups).max(axis=1, keepdims=True) / np.float32(7)
    safe = np.where(scale > 0, scale, 1)
    codes = np.clip(np.round(groups / safe), -7, 7)
    return (codes * scale).reshape(k, n).astype(np.float64)


def _int8_weight(w):
    scale = np.abs(w).max(axis=0) / np.float32(127)
    codes = np.clip(np.round(w / np.where(scale > 0, scale, 1)), -127, 127)
    return codes.astype(np.float64), scale.astype(np.float64)


def _int8_activation(x, scale):
    inverse = np.float32(1.0 / np.float32(scale))
    return np.clip(np.round(x * inverse), -127, 127).astype(np.float64)


def _relative(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_narrow_matmuls_match_a_model_of_their_rounding(module, precision):
    reduced = module.optimize(precision=precision, calibrate_dataset=_data())
    report = reduced.precision_report
    assert report["precision"] == precision
    # Weights stored in 2 bytes instead of 4; the bias stays float32.
    assert report["weight_bytes"] - report["quantized_weight_bytes"] == (W1.size + W2.size) * 2
    assert reduced.fingerprint != module.fingerprint
    assert "xbf16>" in reduced.text if precision == "bf16" else "xf16>" in reduced.text
    x = _data(count=1, seed=3)[0]
    got = reduced.compile()(x).astype(np.float64)
    narrow = _bf16 if precision == "bf16" else (lambda a: a.astype(np.float16).astype(np.float64))
    hidden = np.maximum(narrow(x) @ narrow(W1) + B1, 0.0)
    expected = narrow(hidden.astype(np.float32)) @ narrow(W2)
    # A hidden value on a rounding boundary may round the other way (computed
    # in float32 here, float64 above): a few ulps of fp16, well under its error.
    assert _relative(got, expected) < 1e-4
    # Against float32: the precision's error, reported.
    accuracy = report["accuracy"]
    assert accuracy["samples"] == 8
    bound = 2e-2 if precision == "bf16" else 3e-3
    assert 0 < accuracy["relative_l2_error"] < bound


def test_tf32_is_a_permission_the_cpu_leaves_unused(module):
    """precision="tf32" changes no type: the IR records that the float32 matmuls may
    read TF32 operands (cuda's tensor cores), and the CPU still computes them in
    float32, bit for bit."""
    reduced = module.optimize(precision="tf32", calibrate_dataset=_data())
    report = reduced.precision_report
    assert report["precision"] == "tf32"
    assert report["weight_bytes"] == report["quantized_weight_bytes"]
    assert "cuvil.tf32_matmuls" in reduced.text and "bf16" not in reduced.text
    assert reduced.fingerprint != module.fingerprint
    x = _data(count=1, seed=3)[0]
    assert np.array_equal(reduced.compile()(x), module.compile()(x))
    assert report["accuracy"]["max_abs_error"] == 0.0


def test_int4_weights_match_group_wise_dequantization(module):
    reduced = module.optimize(quantization="int4", group_size=64)
    report = reduced.precision_report
    assert report["quantized_matmuls"] == 2 and report["remarks"] == []
    assert "cuvil.quantized_matmul" in reduced.text
    # 4 bits per weight plus one float32 scale per 64 rows and column.
    weights = W1.size + W2.size
    saved = weights * 4 - (weights // 2 + weights // 64 * 4)
    assert report["weight_bytes"] - report["quantized_weight_bytes"] == saved
    x = _data(count=1, seed=4)[0]
    got = reduced.compile()(x).astype(np.float64)
    hidden = np.maximum(x @ _int4(W1, 64) + B1, 0.0)
    assert _relative(got, hidden @ _int4(W2, 64)) < 1e-5
    # Default groups of 128 are coarser: a larger error against float32.
    coarse = module.optimize(quantization="int4", calibrate_dataset=_data())
    fine = module.optimize(quantization="int4", group_size=32, calibrate_dataset=_data())
    assert (
        fine.precision_report["accuracy"]["relative_l2_error"]
        < coarse.precision_report["accuracy"]["relative_l2_error"]
        < 0.2
    )


def test_int4_rows_not_filling_register_tiles_and_symbolic_batches():
    # 5 rows: the register kernel's last, partial tile; symbolic rows: any batch.
    fixed = cuvil.frontend.build_ir(mlp, {"x": (5, D_IN)}).optimize(quantization="int4")
    x = _data(rows=5, count=1, seed=5)[0]
    expected = np.maximum(x @ _int4(W1, 128) + B1, 0.0) @ _int4(W2, 128)
    assert _relative(fixed.compile()(x).astype(np.float64), expected) < 1e-5
    dynamic = cuvil.frontend.to_ir_with_dynamic_shape(
        mlp, input_spec=[cuvil.TensorSpec(shape=("n", D_IN), dtype="float32")]
    ).optimize(quantization="int4")
    compiled = dynamic.compile()
    for rows in (1, 13, 40):
        x = _data(rows=rows, count=1, seed=rows)[0]
        expected = np.maximum(x @ _int4(W1, 128) + B1, 0.0) @ _int4(W2, 128)
        assert _relative(compiled(x).astype(np.float64), expected) < 1e-5


def test_int4_keeps_shapes_it_cannot_schedule_in_float32():
    w = np.random.default_rng(0).standard_normal((D_IN, 48)).astype(np.float32)
    reduced = cuvil.frontend.build_ir(lambda x: x @ w, {"x": (8, D_IN)}).optimize(
        quantization="int4"
    )
    report = reduced.precision_report
    assert report["quantized_matmuls"] == 0
    assert len(report["remarks"]) == 1
    assert "kept in float32: N=48 is not a multiple of 64" in report["remarks"][0]
    assert "test_precision.py" in report["remarks"][0]  # the model's source line
    x = _data(rows=8, count=1)[0]
    np.testing.assert_allclose(reduced.compile()(x), x @ w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("calibration", ["kl", "percentile"])
def test_int8_is_calibrated_and_matches_integer_arithmetic(module, calibration):
    data = _data(count=16)
    reduced = module.optimize(quantization="int8", calibrate_dataset=data, calibration=calibration)
    report = reduced.precision_report
    sx1, sx2 = report["activation_scales"]
    # A scale covers the bulk of the activations: at most their largest magnitude / 127.
    assert 0 < sx1 <= max(float(np.abs(d).max()) for d in data) / 127 + 1e-9
    x = data[0]
    q1, s1 = _int8_weight(W1)
    q2, s2 = _int8_weight(W2)
    hidden = (
        (_int8_activation(x, sx1) @ q1).astype(np.float32) * np.float32(sx1) * s1.astype(np.float32)
    )
    hidden = np.maximum(hidden + B1, 0.0).astype(np.float32)
    expected = (_int8_activation(hidden, sx2) @ q2) * (np.float32(sx2) * s2.astype(np.float32))
    got = reduced.compile()(x).astype(np.float64)
    assert _relative(got, expected) < 1e-4
    assert report["quantized_weight_bytes"] < report["weight_bytes"] / 3
    assert 0 < report["accuracy"]["relative_l2_error"] < 0.05


def test_kl_threshold_clips_outliers():
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.standard_normal(100_000), [80.0, -95.0]])
    threshold = _precision.kl_threshold(values)
    assert 2.0 < threshold < 20.0


def test_packages_carry_the_narrow_weights(module, tmp_path):
    full, small = tmp_path / "fp32.irpkg", tmp_path / "int4.irpkg"
    module.save(full)
    reduced = module.optimize(quantization="int4")
    reduced.save(small)
    assert small.stat().st_size < full.stat().st_size / 4
    loaded = cuvil.load_irpkg(small)
    assert loaded.fingerprint == reduced.fingerprint
    x = _data(count=1, seed=9)[0]
    compiled = reduced.compile()
    np.testing.assert_array_equal(loaded.compile()(x), compiled(x))
    package = tmp_path / "int4.cuvil"
    compiled.export(package)
    function = cuvil.runtime.load_executable(str(package)).get_function("main")
    np.testing.assert_array_equal(function(x).numpy(), compiled(x))


def test_bad_options_are_refused_by_name(module):
    with pytest.raises(ValueError, match="precision='int3' is not one of"):
        module.optimize(precision="int3")
    with pytest.raises(ValueError, match="quantization='int2' is not one of"):
        module.optimize(quantization="int2")
    with pytest.raises(ValueError, match="group_size must be a positive int"):
        module.optimize(quantization="int4", group_size=0)
    with pytest.raises(ValueError, match="static quantization.*calibrate_dataset"):
        module.optimize(quantization="int8")
    with pytest.raises(ValueError, match="sample 1 has 2 array"):
        module.optimize(quantization="int8", calibrate_dataset=[_data()[0], (1, 2)])
    with pytest.raises(ValueError, match="input 'x' has shape"):
        module.optimize(quantization="int8", calibrate_dataset=[np.zeros((3, 3), np.float32)])
    with pytest.raises(ValueError, match="calibrate_dataset is empty"):
        module.optimize(quantization="int8", calibrate_dataset=[])


# ----- float16 through the NumPy tracer ----------------------------------------------------


def test_jit_traces_float16_with_numpy_dtypes_and_computes_in_float32():
    rng = np.random.default_rng(3)
    w16 = rng.standard_normal((32, 16)).astype(np.float16)
    w32 = rng.standard_normal((16, 8)).astype(np.float32)

    @cuvil.jit
    def half(x, w):
        return np.maximum(x @ w, 0) * 0.5  # float16 throughout, as in NumPy

    @cuvil.jit
    def mixed(x):
        return (x @ w16) @ w32  # float16 meets a float32 array: float32

    x = rng.standard_normal((4, 32)).astype(np.float16)
    got = half(x, w16)
    assert cuvil.last_fallback_reason(half) is None and got.dtype == np.float16
    exact = np.maximum(x.astype(np.float64) @ w16.astype(np.float64), 0) * 0.5
    # float32 inside: within the one final rounding to float16 of the exact result.
    np.testing.assert_allclose(got, exact, rtol=2**-10, atol=2**-14)
    assert mixed(x).dtype == np.float32 and cuvil.last_fallback_reason(mixed) is None
    np.testing.assert_allclose(
        mixed(x), (x.astype(np.float32) @ w16.astype(np.float32)) @ w32, rtol=1e-5, atol=1e-5
    )
    # The compiled code takes float32: the float16 argument is converted at the call.
    assert "xf16>" not in cuvil.inspect_ir(half, stage="input")


def test_build_ir_and_packages_keep_a_float16_signature(tmp_path):
    module = cuvil.frontend.build_ir(
        lambda x, w: x @ w, {"x": ((4, 8), "float16"), "w": ((8, 4), "float16")}
    )
    assert module.input_spec["x"].dtype == "float16" and module.output_spec[0].dtype == "float16"
    x, w = np.ones((4, 8), np.float16), np.full((8, 4), 0.5, np.float16)
    compiled = module.compile()
    np.testing.assert_array_equal(compiled(x, w), np.full((4, 4), 4.0, np.float16))
    with pytest.raises(TypeError, match="has dtype float32.*float16"):
        compiled(x.astype(np.float32), w)
    compiled.export(tmp_path / "half.cuvil")
    function = cuvil.runtime.load_executable(tmp_path / "half.cuvil").get_function()
    out = function(x, w).numpy()
    assert out.dtype == np.float16 and np.array_equal(out, compiled(x, w))


# ----- session options at compile time -----------------------------------------------------


@pytest.mark.parametrize(
    "level, expected",
    [
        ("disable_all", set()),
        ("basic", {"cuvil-fold-constants", "cuvil-fold-batch-norm"}),
        ("all", {"cuvil-fold-constants", "cuvil-fold-batch-norm", "cuvil-fuse-elementwise"}),
    ],
)
@pytest.mark.parametrize("mem_pattern", [True, False])
def test_optimization_level_and_memory_pattern_choose_the_optional_passes(
    module, level, expected, mem_pattern
):
    previous = cuvil.snapshot_capture_enabled()
    cuvil.set_snapshot_capture(True)
    try:
        compiled = module.optimize(
            optimization_level=level, enable_mem_pattern=mem_pattern
        ).compile()
    finally:
        cuvil.set_snapshot_capture(previous)
    ran = {s["name"] for s in compiled.compilation.compiled.snapshots}
    optional = {
        "cuvil-fold-constants",
        "cuvil-fold-batch-norm",
        "cuvil-fuse-elementwise",
        "cuvil-plan-memory",
    }
    assert ran & optional == expected | ({"cuvil-plan-memory"} if mem_pattern else set())
    x = _data(count=1)[0]
    np.testing.assert_allclose(compiled(x), mlp(x), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="optimization_level='max' is not one of"):
        module.optimize(optimization_level="max")


# ----- random shapes -------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_random_gemm_shapes_match_the_numpy_model_of_each_form(seed):
    """GEMMs of random shapes (rows that do not fill a register tile, batch dims,
    several groups, N over several register tiles) in every form, against NumPy
    models of the same arithmetic."""
    rng = np.random.default_rng(1000 + seed)
    group = int(rng.choice([32, 64, 128]))
    k = group * int(rng.integers(1, 4))
    n = 64 * int(rng.integers(1, 5))
    rows = int(rng.integers(1, 70))
    batch = tuple(int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, 3))))
    w = (rng.standard_normal((k, n)) / math.sqrt(k)).astype(np.float32)
    shape = (*batch, rows, k)

    def model(x):
        return x @ w

    module = cuvil.frontend.build_ir(model, {"x": shape})
    x = rng.standard_normal(shape).astype(np.float32)
    int4 = module.optimize(quantization="int4", group_size=group)
    assert int4.precision_report["quantized_matmuls"] == 1
    expected = x.astype(np.float64) @ _int4(w, group)
    assert _relative(int4.compile()(x).astype(np.float64), expected) < 1e-5
    bf16 = module.optimize(precision="bf16").compile()(x).astype(np.float64)
    assert _relative(bf16, _bf16(x) @ _bf16(w)) < 1e-5
    int8 = module.optimize(quantization="int8", calibrate_dataset=[x], calibration="percentile")
    (sx,) = int8.precision_report["activation_scales"]
    q, s = _int8_weight(w)
    expected = (_int8_activation(x, sx) @ q) * (np.float32(sx) * s.astype(np.float32))
    assert _relative(int8.compile()(x).astype(np.float64), expected) < 1e-5
