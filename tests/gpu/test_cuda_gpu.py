"""The cuda target on a GPU: numerics of the op table and the examples against NumPy,
copies counted, fallbacks absent. Label ``gpu`` in CTest; every test skips, saying why,
where no CUDA driver or GPU is usable (scripts/gpu-check.sh runs them on a GPU machine)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))

import test_ops  # noqa: E402
from target_files import EXAMPLE_FUNCTIONS, assert_close, example  # noqa: E402

import cuvil  # noqa: E402

REASON = cuvil._targets.unavailable_reason("cuda", 0)
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no CUDA GPU here: {REASON}")


@pytest.mark.parametrize("info, sample", test_ops.CASES)
def test_op_table_matches_numpy_on_the_gpu(info, sample):
    jitted = cuvil.jit(test_ops._traced_function(info, sample), target="cuda")
    result = jitted(*sample.args)
    assert cuvil.last_fallback_reason(jitted) is None, cuvil.last_fallback_reason(jitted)
    test_ops._assert_matches(result, info.reference(sample), info.tolerance(sample))
    # The second call reuses the loaded module and the device constants.
    test_ops._assert_matches(jitted(*sample.args), info.reference(sample), info.tolerance(sample))


@pytest.mark.parametrize("example_name, function", EXAMPLE_FUNCTIONS)
def test_examples_match_their_references_on_the_gpu(example_name, function):
    namespace = example(example_name)
    jitted = cuvil.jit(namespace[function].__cuvil_function__, target="cuda")
    inputs = namespace["make_inputs"]()
    for _ in range(2):
        assert_close(jitted(*inputs), namespace["reference"](*inputs))
    copies = cuvil.device_copies(jitted)
    assert copies["calls"] == 2
    assert copies["device_to_host"] == 2 * len(cuvil.compilations()[-1].output_types)


def test_large_grids_and_odd_sizes():
    """Sizes that do not divide the block (guards), a grid past 65535 rows on x."""
    x = np.random.default_rng(0).standard_normal((3, 70001), dtype=np.float32)
    y = np.random.default_rng(1).standard_normal((517, 333), dtype=np.float32)
    w = np.random.default_rng(2).standard_normal((333, 129), dtype=np.float32)
    rows = cuvil.jit(lambda x: np.exp(x) * 2.0 - 1.0, target="cuda")
    np.testing.assert_allclose(rows(x), np.exp(x) * 2.0 - 1.0, rtol=1e-5, atol=1e-5)
    gemm = cuvil.jit(lambda y, w: np.maximum(y @ w, 0.0), target="cuda")
    assert_close(gemm(y, w), np.maximum(y @ w, 0.0))


def test_profile_has_gpu_lanes_attributed_to_ir_ops():
    """CUPTI's kernels join the trace, each attributed to the IR op that launched it."""
    x = np.random.default_rng(3).standard_normal((256, 512), dtype=np.float32)
    w = np.random.default_rng(4).standard_normal((512, 256), dtype=np.float32)
    f = cuvil.jit(lambda x, w: np.maximum(x @ w, 0.0), target="cuda")
    f(x, w)
    with cuvil.profile() as prof:
        f(x, w)
    assert prof.gpu_note is None, prof.gpu_note
    gpu = prof.key_averages(kind="gpu_kernel")
    assert gpu, "no GPU kernel events in the profile"
    # Attributed to the user's line through the launch's IR op.
    assert any(s.location for s in gpu), [(s.name, s.location) for s in gpu]
    assert all(s.total_ms > 0 for s in gpu)


def _bf16(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to bfloat16 (nearest, ties to even), as float64."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


@pytest.mark.parametrize("m, k, n", [(64, 64, 64), (50, 96, 40), (517, 333, 129), (1, 1000, 3)])
def test_tensor_core_gemms_match_the_rounded_product(m, k, n):
    """precision="bf16": the MMAs' float32 sums of bf16 products equal the float64
    product of the rounded operands to float32 accuracy (any size: edges guarded)."""
    from cuvil.frontend import build_ir

    rng = np.random.default_rng(m + k + n)
    w = rng.standard_normal((k, n), dtype=np.float32)
    x = rng.standard_normal((m, k), dtype=np.float32)

    def gemm(x):
        return np.maximum(x @ w, 0.0)

    compiled = build_ir(gemm, {"x": (m, k)}).optimize(precision="bf16").compile(target="cuda")
    assert "mma.sync" in compiled.inspect("ptx")
    expected = np.maximum(_bf16(x) @ _bf16(w), 0.0)
    np.testing.assert_allclose(np.asarray(compiled(x)), expected, rtol=1e-4, atol=1e-4 * k)


def _tf32(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to TF32 (10-bit mantissa; nearest, ties away), as float64."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x1000) & 0xFFFFE000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


@pytest.mark.parametrize("m, k, n", [(64, 64, 64), (50, 96, 40), (517, 333, 129)])
def test_tf32_gemms_match_the_rounded_product(m, k, n):
    """precision="tf32": float32 operands rounded to TF32 (cvt.rna), float32 sums of
    their products: the float64 product of the rounded operands to float32 accuracy."""
    from cuvil.frontend import build_ir

    rng = np.random.default_rng(m * k + n)
    w = rng.standard_normal((k, n), dtype=np.float32)
    x = rng.standard_normal((m, k), dtype=np.float32)

    def gemm(x):
        return x @ w

    compiled = build_ir(gemm, {"x": (m, k)}).optimize(precision="tf32").compile(target="cuda")
    assert "m16n8k8.row.col.f32.tf32" in compiled.inspect("ptx")
    expected = _tf32(x) @ _tf32(w)
    np.testing.assert_allclose(np.asarray(compiled(x)), expected, rtol=1e-4, atol=1e-4 * k)


def test_async_calls_on_the_stream_match_synchronous_ones(tmp_path):
    """Runtime(enable_async=True) on cuda:0: calls queued back to back on the stream give
    what calls one at a time give, each with its own inputs (changed after queueing)."""
    from cuvil.frontend import build_ir

    w = np.random.default_rng(5).standard_normal((256, 128), dtype=np.float32)
    path = tmp_path / "mlp.cuvil"

    def mlp(x):
        return np.tanh(x @ w)

    build_ir(mlp, {"x": (64, 256)}).compile(target="cuda").export(path)
    rt = cuvil.runtime.Runtime(device="cuda:0", enable_async=True)
    f = rt.load_executable(path).get_function("mlp")
    x = np.random.default_rng(6).standard_normal((64, 256), dtype=np.float32)
    futures, expected = [], []
    for i in range(8):
        x[:] = i
        futures.append(f.call_async(x))
        expected.append(np.tanh(x.astype(np.float64) @ w))
    for future, reference in zip(futures, expected):
        assert_close(future.result().numpy(), reference)
