"""``cuvil.jit(constants=...)``: arguments compiled into the code, as a model's weights are."""

import re

import numpy as np
import pytest

import cuvil


def _compiled_count(fn) -> int:
    return sum(1 for c in cuvil.compilations() if c.function == fn.__qualname__)


def _mlp(x, w1, b1, w2):
    return cuvil.gelu(x @ w1 + b1) @ w2


def _weights(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    w1 = rng.standard_normal((32, 64)).astype(np.float32)
    b1 = rng.standard_normal(64).astype(np.float32)
    w2 = rng.standard_normal((64, 24)).astype(np.float32)
    return x, w1, b1, w2


def test_constant_arrays_are_compiled_in_and_calls_reuse_the_code():
    x, w1, b1, w2 = _weights()

    def mlp(x, w1, b1, w2):
        return _mlp(x, w1, b1, w2)

    plain = cuvil.jit(_mlp)
    f = cuvil.jit(mlp, constants=("w1", "b1", "w2"))
    expected = plain(x, w1, b1, w2)
    np.testing.assert_allclose(f(x, w1, b1, w2), expected, rtol=1e-5, atol=1e-5)
    assert cuvil.last_fallback_reason(f) is None
    # The traced function takes the activation only; the weights are constants.
    traced = cuvil.inspect_ir(f, "input")
    signature = re.search(r"func\.func @\w+\((.*?)\) ->", traced).group(1)
    assert signature.count("%arg") == 1, signature
    assert traced.count("cuvil.constant") >= 3
    for _ in range(5):
        np.testing.assert_allclose(f(x * 2, w1, b1, w2), plain(x * 2, w1, b1, w2), rtol=1e-5)
    np.testing.assert_allclose(f(x, w1=w1, b1=b1, w2=w2), expected, rtol=1e-5, atol=1e-5)
    assert _compiled_count(f) == 1


def test_constant_arrays_become_read_only():
    x, w1, b1, w2 = _weights()
    f = cuvil.jit(_mlp, constants="w1")
    f(x, w1, b1, w2)
    assert not w1.flags.writeable
    assert b1.flags.writeable, "only the constants are frozen"
    with pytest.raises(ValueError, match="read-only"):
        w1[0, 0] = 1.0


def test_another_array_compiles_again_and_replaces_the_old_code(caplog):
    x, w1, b1, w2 = _weights()

    def mlp(x, w1, b1, w2):
        return _mlp(x, w1, b1, w2)

    f = cuvil.jit(mlp, constants=("w1", "w2"))
    f(x, w1, b1, w2)
    new_w1 = w1 * 0.5
    np.testing.assert_allclose(
        f(x, new_w1, b1, w2), cuvil.jit(_mlp)(x, new_w1, b1, w2), rtol=1e-5, atol=1e-5
    )
    assert "mlp: compiling again: constant argument 'w1' is not the array" in caplog.text
    assert _compiled_count(f) == 2
    assert len(f._cache) == 1, "the code of the replaced weights is dropped"


def test_hashable_constants_are_keyed_by_value_and_steer_python():
    def scaled(x, scale, mode):
        return x * scale if mode == "mul" else x + scale

    f = cuvil.jit(scaled, constants=("scale", "mode"))
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(f(x, 2.0, "mul"), x * 2.0)
    np.testing.assert_array_equal(f(x, 2.0, "add"), x + 2.0)
    np.testing.assert_array_equal(f(x, 3.0, "mul"), x * 3.0)
    np.testing.assert_array_equal(f(x, 2.0, "mul"), x * 2.0)
    assert cuvil.last_fallback_reason(f) is None
    assert _compiled_count(f) == 3


def test_bad_constants_are_named():
    with pytest.raises(TypeError, match=r"'w3', which is not a named parameter .* x, w1, b1, w2"):
        cuvil.jit(_mlp, constants=("w1", "w3"))
    with pytest.raises(TypeError, match="parameter names"):
        cuvil.jit(_mlp, constants=(1,))

    def gather(x, index):
        return x * 2.0

    f = cuvil.jit(gather, constants="index")
    x = np.ones(4, np.float32)
    np.testing.assert_array_equal(f(x, [1, 2]), x * 2.0)
    reason = cuvil.last_fallback_reason(f)
    assert "constant argument 'index' is a list" in reason and "hashable" in reason, reason


_RESOURCE_MODULE = """
!t = tensor<1024xf32>
module {
  func.func @f(%arg0: !t) -> (!t) {
    %0 = "cuvil.constant"() <{value = dense_resource<w> : !t}> : () -> !t
    %1 = "cuvil.mul"(%arg0, %0) : (!t, !t) -> !t
    "func.return"(%1) : (!t) -> ()
  }
}
"""


def test_large_constants_reach_the_compiler_as_bytes_and_show_as_dense_values():
    """cuvil.jit hands constants of 4 KiB or more to the compiler as their bytes (the
    text names them `dense_resource<...>`): the code is the same as from hex, and the
    input IR shows the values once the text is asked for."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    w = rng.standard_normal((64, 32)).astype(np.float32)  # 8 KiB

    def layer(x, w):
        return np.tanh(x @ w)

    f = cuvil.jit(layer, constants=("w",))
    np.testing.assert_allclose(f(x, w), np.tanh(x @ w), rtol=1e-5, atol=1e-5)
    record = cuvil.compilations()[-1]
    text, constants = record.program.compiler_input()
    assert "dense_resource<__cuvil_constant_0>" in text and 'dense<"0x' not in text
    assert [name for name, _ in constants] == ["__cuvil_constant_0"]
    assert bytes(constants[0][1]) == w.tobytes()
    hex_compiled = cuvil._native.load().compile(record.mlir, record.func_name)
    assert hex_compiled.fingerprint == record.compiled.fingerprint
    shown = cuvil.inspect_ir(f, "input")
    assert 'dense<"0x' in shown and "dense_resource" not in shown


def test_constant_bytes_that_do_not_fit_their_resource_are_refused_by_name():
    """The driver checks the bytes against the resource's type and names the constant;
    a resource without bytes, and a strided buffer, are refused too."""
    ext = cuvil._native.load()
    data = np.arange(1024, dtype=np.float32)
    compiled = ext.compile(_RESOURCE_MODULE, "f", constants=[("w", data.view(np.uint8))])
    assert compiled.fingerprint
    with pytest.raises(ext.CompileError, match=r"constant 'w'.*4092 bytes were given for 4096"):
        ext.compile(_RESOURCE_MODULE, "f", constants=[("w", data.view(np.uint8)[:4092])])
    with pytest.raises(ext.CompileError, match=r"constant 'w'.*no bytes were given"):
        ext.compile(_RESOURCE_MODULE, "f", constants=[("other", data.view(np.uint8))])
    with pytest.raises(ValueError, match="constant 'w'.*contiguous"):
        ext.compile(_RESOURCE_MODULE, "f", constants=[("w", memoryview(data.view(np.uint8))[::2])])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_compiled_in_arrays_keep_their_values_at_every_width(dtype, tmp_path):
    """The object code holds a constant array of 1 KiB or more as its bytes (an
    array of numbers is written a number at a time): every element width, nested
    rows and a small array beside it keep their values; a GEMM's packed weights
    keep the alignment its vector loads need."""
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((48, 40)) * 100).astype(dtype)  # 7.5-15 KiB, rows nested
    small = (rng.standard_normal(40) * 100).astype(dtype)  # under 1 KiB
    x = (rng.standard_normal((48, 40)) * 100).astype(dtype)

    def shift(x, w, small):
        return x + w * 3 - small

    f = cuvil.jit(shift, constants=("w", "small"))
    np.testing.assert_array_equal(f(x, w, small), x + w * 3 - small)
    assert cuvil.last_fallback_reason(f) is None
    # Only the object code holds bytes: the LLVM dialect keeps its values after
    # an object was emitted from it, and LLVM IR shows the numbers.
    compiled = cuvil.compilations()[-1].compiled
    compiled.emit("obj", str(tmp_path / "shift.o"))
    assert (tmp_path / "shift.o").stat().st_size > w.nbytes
    dialect = cuvil.inspect_ir(f, "llvm-dialect")
    assert re.search(r"llvm\.mlir\.global [a-z ]*constant @\S+\(dense<", dialect)
    element = {np.float32: "float", np.float64: "double", np.int32: "i32", np.int64: "i64"}[dtype]
    assert re.search(rf"\[48 x \[40 x {element}\]\]", cuvil.inspect_ir(f, "llvm"))

    # Booleans are bit-packed in MLIR's constants and a byte each in LLVM's.
    mask = rng.standard_normal((48, 40)) > 0

    def pick(x, mask):
        return np.where(mask, x, x * 2)

    p = cuvil.jit(pick, constants=("mask",))
    np.testing.assert_array_equal(p(x, mask), np.where(mask, x, x * 2))
    assert cuvil.last_fallback_reason(p) is None

    if dtype == np.float32:
        a = rng.standard_normal((64, 256)).astype(np.float32)
        b = rng.standard_normal((256, 512)).astype(np.float32)

        def project(a, b):
            return a @ b

        g = cuvil.jit(project, constants=("b",))
        np.testing.assert_allclose(g(a, b), a @ b, rtol=1e-4, atol=1e-3)
        assert cuvil.last_fallback_reason(g) is None
