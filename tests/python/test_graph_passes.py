"""Graph-level passes seen through the Python API: results and the IR after each pass."""

import re

import numpy as np
import pytest

import cuvil


@pytest.fixture
def snapshots():
    cuvil.set_snapshot_capture(True)
    yield
    cuvil.set_snapshot_capture(False)


def _wide_vectors():
    """The CPU pipeline scheduled for AVX-512's 16-lane vectors (8-row register tiles)
    on any host, for the tests that check that schedule's structure; without AVX-512,
    LLVM splits each vector in two and the results stay exact."""
    pb = cuvil.PipelineBuilder()
    pb.configure("cuvil-cpu-conv-to-gemm", vector_lanes=16)
    pb.configure("cuvil-cpu-schedule", vector_lanes=16)
    return pb


def _ir_after(jitted, pass_name):
    record = jitted._last_compiled
    for snapshot in record.compiled.snapshots:
        if snapshot["name"] == pass_name:
            return snapshot["ir"]
    raise AssertionError(f"no snapshot for {pass_name}")


def _conv_bn_weights(rng):
    weight = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, 4).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    mean = rng.standard_normal(4).astype(np.float32)
    var = rng.uniform(0.5, 2.0, 4).astype(np.float32)
    return weight, scale, bias, mean, var


def test_batch_norm_folds_into_constant_conv_weights(snapshots):
    rng = np.random.default_rng(1)
    weight, scale, bias, mean, var = _conv_bn_weights(rng)

    @cuvil.jit
    def conv_bn(x):
        y = cuvil.conv2d(x, weight, padding=(1, 1, 1, 1))
        return cuvil.batch_norm(y, scale, bias, mean, var, epsilon=1e-3)

    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    result = conv_bn(x)
    assert cuvil.last_fallback_reason(conv_bn) is None
    expected = conv_bn.__wrapped__(x)  # the same model run by NumPy
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)
    folded = _ir_after(conv_bn, "cuvil-fold-batch-norm")
    assert "cuvil.batch_norm" not in folded
    constants = _ir_after(conv_bn, "cuvil-fold-constants")
    # The scaled weights are one constant: no elementwise op remains on them.
    assert "cuvil.rsqrt" not in constants and "cuvil.mul" not in constants
    assert "cuvil.conv2d" in constants


def test_batch_norm_with_runtime_weights_is_rewritten_not_dropped(snapshots):
    rng = np.random.default_rng(2)
    weight, scale, bias, mean, var = _conv_bn_weights(rng)

    @cuvil.jit
    def conv_bn(x, w):
        return cuvil.batch_norm(cuvil.conv2d(x, w), scale, bias, mean, var, epsilon=1e-3)

    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(
        conv_bn(x, weight), conv_bn.__wrapped__(x, weight), rtol=1e-4, atol=1e-4
    )
    folded = _ir_after(conv_bn, "cuvil-fold-batch-norm")
    assert "cuvil.batch_norm" not in folded and "cuvil.mul" in folded


def test_dropout_is_removed_in_inference(snapshots):
    @cuvil.jit
    def block(x):
        return cuvil.relu(cuvil.dropout(x, ratio=0.5)) * 2.0

    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    np.testing.assert_array_equal(block(x), np.maximum(x, 0) * 2.0)
    assert "cuvil.dropout" in block._last_compiled.compiled.ir("input")
    assert "cuvil.dropout" not in _ir_after(block, "cuvil-strip-training-ops")


def test_weight_transpose_is_computed_at_compile_time(snapshots):
    w = np.arange(6, dtype=np.float32).reshape(2, 3)

    @cuvil.jit
    def project(x):
        return x @ (w.T * 0.5 + 1.0)

    x = np.ones((5, 3), np.float32)
    np.testing.assert_allclose(project(x), x @ (w.T * 0.5 + 1.0), rtol=1e-6)
    folded = _ir_after(project, "cuvil-fold-constants")
    assert "cuvil.transpose" not in folded and "cuvil.matmul" in folded


def test_memory_plan_reuses_intermediate_buffers():
    """A chain of intermediates: the plan's arena is smaller than their sum (the first
    and third activations share storage; each GEMM's result lives only in its
    epilogue's registers)."""

    @cuvil.jit
    def chain(x, w):
        h = np.tanh(x @ w)
        h = np.exp(-(h @ w))
        h = np.tanh(h @ w)
        return (h @ w) * 2.0

    x = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
    w = (np.eye(64) * 0.5).astype(np.float32)
    np.testing.assert_allclose(chain(x, w), chain.__wrapped__(x, w), rtol=1e-5, atol=1e-6)
    compiled = chain._last_compiled.compiled
    assert 0 < compiled.planned_peak_bytes < compiled.unplanned_bytes


def test_enable_fusion_false_also_keeps_epilogues_out_of_gemm_tiles(snapshots):
    """With fusion on, bias + GELU run inside the first GEMM's tiles; off, after it."""
    from conftest import load_example

    mlp = load_example("mlp")
    inputs = mlp.make_inputs()
    tiles = {}
    for fusion in (True, False):
        f = cuvil.jit(mlp.mlp.__wrapped__, enable_fusion=fusion)
        np.testing.assert_allclose(f(*inputs), mlp.reference(*inputs), rtol=1e-4, atol=1e-4)
        scheduled = _ir_after(f, "cuvil-cpu-schedule")
        start = scheduled.index("scf.forall")
        tiles[fusion] = scheduled[start : scheduled.index("scf.forall.in_parallel", start)]
    assert "math.erf" in tiles[True] and "arith.addf" in tiles[True]
    assert "math.erf" not in tiles[False] and "arith.addf" not in tiles[False]


@pytest.mark.parametrize(
    "m,k,n",
    [
        (101, 97, 103),
        (1, 300, 257),
        (130, 7, 45),
        (64, 999, 1001),
        (9, 16, 31),
        (640, 768, 300),
        (1000, 1001, 999),
        (300, 3072, 96),
    ],
    ids=[
        "primes",
        "gemv",
        "skinny-k",
        "odd-k-and-n",
        "one-row-tile-over",
        "large-128-row-tiles-256-k-blocks",
        "large-partial-tiles",
        "narrow-deep-1024-k-blocks",
    ],
)
@pytest.mark.parametrize("epilogue", [False, True], ids=["plain", "bias-relu"])
def test_gemms_no_tile_divides_are_scheduled_and_exact(snapshots, m, k, n, epilogue):
    """Odd, prime and single-row GEMMs get the tiled, vectorized schedule with peeled rests."""

    def plain(a, b, bias):
        return a @ b

    def fused(a, b, bias):
        return np.maximum(a @ b + bias, 0.0)

    f = cuvil.jit(fused if epilogue else plain, pipeline=_wide_vectors())
    rng = np.random.default_rng(m * n + k)
    a, b, bias = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (n,)))
    reference = a.astype(np.float64) @ b.astype(np.float64)
    if epilogue:
        reference = np.maximum(reference + bias, 0.0)
    np.testing.assert_allclose(f(a, b, bias), reference, rtol=1e-4, atol=1e-4 * np.sqrt(k))
    scheduled = _ir_after(f, "cuvil-cpu-schedule")
    assert "vector.fma" in scheduled
    assert "linalg.matmul ins" not in scheduled  # every tile became vector code
    if (m, k) == (640, 768):  # large: 256-deep K blocks over 128-row tiles
        assert re.search(r"scf\.for %\w+ = %c0 to %c768 step %c256", scheduled)
        assert re.search(r"scf\.for %\w+ = %c0 to %c128 step %c8", scheduled)
    if (k, n) == (3072, 96):  # narrow and deep: A streamed in 1024-deep K blocks
        assert re.search(r"scf\.for %\w+ = %c0 to %c3072 step %c1024", scheduled)


@pytest.mark.parametrize("m", [49, 57])
@pytest.mark.parametrize("constant", [False, True], ids=["b-input", "b-constant"])
def test_remainder_rows_add_their_k_steps_in_partial_sums(snapshots, m, constant):
    """A GEMM whose rows end one short of a register tile (49 or 57 rows in tiles of
    4 or 8) computes its last row, whose two accumulators would each wait for the FMA
    before, with its K steps in several partial sums (cuvil-cpu-split-accumulators),
    added up after the K loop; the full tiles keep theirs. Results stay close to
    float64."""

    def gemm(a, b):
        return a @ b

    f = cuvil.jit(gemm, constants=("b",) if constant else ())
    rng = np.random.default_rng(m)
    a = rng.standard_normal((m, 256)).astype(np.float32)
    b = rng.standard_normal((256, 128)).astype(np.float32)
    reference = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(f(a, b), reference, rtol=1e-4, atol=1e-4 * np.sqrt(256))
    before = _ir_after(f, "cuvil-gathers-as-loads")
    after = _ir_after(f, "cuvil-cpu-split-accumulators")
    assert not re.search(r"arith\.addf %\w+#0, %\w+#1", before)
    # The remainder's loop carries its sum and the partial sums that start at zero.
    loop = re.search(r"%(\w+):(\d) = scf\.for .* iter_args\((.*)\) -> \((vector<\w+>)", after)
    assert loop is not None, after
    assert int(loop.group(2)) == 4 and loop.group(3).count("%cst") == 3
    assert re.search(rf"arith\.addf %{loop.group(1)}#0, %{loop.group(1)}#1", after)


@pytest.mark.parametrize(
    "m,k,n,dtype,packed",
    [
        (256, 64, 1024, np.float32, "blocks"),  # rows 4 KiB apart (aliasing in L1)
        (300, 96, 2048, np.float32, "blocks"),  # 8 KiB, M no tile divides
        (256, 128, 512, np.float64, "blocks"),  # float64 rows 4 KiB apart
        (256, 64, 1000, np.float32, "blocks"),  # unaligned rows, a remainder tile
        (64, 200, 1001, np.float32, "blocks"),  # odd width, K blocks of two sizes
        (1024, 64, 1024, np.float32, "whole"),  # 16 row tiles read each block
        (1100, 96, 1000, np.float32, "whole"),  # 18, the last partial; unaligned rows
        (1024, 128, 512, np.float64, "whole"),  # float64
        (8, 512, 1024, np.float32, None),  # too few result rows repay the copy
    ],
)
@pytest.mark.parametrize("epilogue", [False, True], ids=["plain", "bias-gelu"])
def test_gemm_right_operands_are_packed_into_panels_and_exact(
    snapshots, m, k, n, dtype, packed, epilogue
):
    """cuvil-cpu-pack-gemm-panels packs B into panels of the register tile's width when
    enough result rows read them: all of it once, before the threads start, when 16 row
    tiles or more read each K block (on the heap), else each K block where it is read (on
    each thread's stack); results are unchanged, with or without a remainder tile and an
    epilogue."""

    def plain(a, b, bias):
        return a @ b

    def fused(a, b, bias):
        return cuvil.gelu(a @ b + bias)

    f = cuvil.jit(fused if epilogue else plain)
    rng = np.random.default_rng(m + k + n)
    a, b, bias = (rng.standard_normal(s).astype(dtype) for s in ((m, k), (k, n), (n,)))
    reference = a.astype(np.float64) @ b.astype(np.float64)
    if epilogue:
        reference = cuvil.gelu(reference + bias)  # in float64, outside tracing
    result = f(a, b, bias)
    assert cuvil.last_fallback_reason(f) is None
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(result, reference, rtol=tolerance, atol=tolerance * np.sqrt(k))
    after = _ir_after(f, "cuvil-cpu-pack-gemm-panels")
    element = "f32" if dtype == np.float32 else "f64"
    blocks = re.search(rf"memref\.view .* to memref<\d+x\d+x\d+x{element}>", after)
    whole = re.search(rf"memref\.alloc\(\) .* : memref<(\d+)x{k}x(\d+)x{element}>", after)
    assert (blocks is not None) is (packed == "blocks"), after[:3000]
    assert (whole is not None) is (packed == "whole"), after[:3000]
    if whole:  # the panels cover B's columns, and are freed after the GEMM
        panels, width = map(int, whole.groups())
        assert n <= panels * width < n + width
        assert "memref.dealloc" in after[whole.end() :]


def test_host_calls_keep_their_intermediates_memory_from_call_to_call():
    """What a call allocates (here B packed whole: 256 x 1024 floats as panels) comes,
    after the first call, from memory the function keeps: it grows once, to what one call
    took, and later calls take it again without growing; results stay exact."""
    f = cuvil.jit(lambda a, b: a @ b)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((1024, 256)).astype(np.float32)
    b = rng.standard_normal((256, 1024)).astype(np.float32)
    reference = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(f(a, b), reference, rtol=1e-4, atol=1e-3)
    memory = f._last_compiled.compiled.call_memory
    panels = 256 * 1024 * 4
    assert memory["grows"] == 1 and memory["held_bytes"] >= panels, memory
    for _ in range(5):
        np.testing.assert_allclose(f(a, b), reference, rtol=1e-4, atol=1e-3)
    after = f._last_compiled.compiled.call_memory
    assert after["calls"] == memory["calls"] + 5, after
    assert after["grows"] == 1 and after["held_bytes"] == memory["held_bytes"], after
    assert panels <= after["peak_bytes"] <= after["held_bytes"], after
    # Given back, then taken again by the next call.
    compiled = f._last_compiled.compiled
    assert compiled.release_call_memory() == after["held_bytes"]
    assert compiled.call_memory["held_bytes"] == 0
    np.testing.assert_allclose(f(a, b), reference, rtol=1e-4, atol=1e-3)
    assert compiled.call_memory["held_bytes"] >= panels


@pytest.mark.parametrize(
    "m,k,n",
    [
        (64, 128, 512),  # a Transformer block's FFN: each thread's columns
        (8, 512, 1024),  # too few rows to repay a copy, packed all the same
        (256, 512, 2048),  # K blocks and M tiles: each reads the panels in place
        (64, 200, 1001),  # odd width: split by columns into 992, then 9 (one range each)
    ],
)
@pytest.mark.parametrize("epilogue", [False, True], ids=["plain", "bias-gelu"])
def test_constant_right_operands_are_packed_once_at_compile_time(snapshots, m, k, n, epilogue):
    """A weight compiled in (``constants=``) is packed into panels of the register
    tile's width when compiled: a constant global of panels replaces the weight's, the
    blocks read it in place (no copy on the stack), and results are unchanged."""

    def plain(a, b, bias):
        return a @ b

    def fused(a, b, bias):
        return cuvil.gelu(a @ b + bias)

    f = cuvil.jit(fused if epilogue else plain, constants=("b", "bias"))
    rng = np.random.default_rng(m + k + n)
    a, b, bias = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (n,)))
    reference = a.astype(np.float64) @ b.astype(np.float64)
    if epilogue:
        reference = cuvil.gelu(reference + bias)  # in float64, outside tracing
    result = f(a, b, bias)
    assert cuvil.last_fallback_reason(f) is None
    np.testing.assert_allclose(result, reference, rtol=1e-4, atol=1e-4 * np.sqrt(k))
    after = _ir_after(f, "cuvil-cpu-pack-gemm-panels")
    panels = re.findall(
        rf'memref\.global "private" constant @\w+_panels : memref<(\d+)x{k}x(\d+)xf32>', after
    )
    assert panels, after[:3000]
    # Panels of each GEMM's register tile width cover the columns. An odd width is
    # split by columns, a constant per range; a range narrower than a vector is one
    # register tile wide, its rows already the panel it reads.
    narrow = re.findall(rf'memref\.global "private" constant @\w+ : memref<{k}x(\d+)xf32>', after)
    assert all(int(width) < 16 for width in narrow), narrow
    covered = sum(int(count) * int(width) for count, width in panels)
    covered += sum(int(width) for width in narrow)
    assert n <= covered < n + max(int(width) for _, width in panels)
    assert not re.search(rf"memref\.global .* : memref<{k}x{n}xf32>", after), "weight kept"
    assert "memref.view" not in after, "a constant is not copied at run time"


@pytest.mark.parametrize("n,k", [(4096, 512), (1000, 999), (512, 1024), (128, 64)])
def test_gemv_register_tiles_are_one_row_sweeping_the_right_operand(snapshots, n, k):
    """A one-row GEMM (batch-1 inference) gets a register tile of one row by eight
    vector registers, so each row of the right operand is read as one run; results
    are exact, also for widths no tile divides."""
    f = cuvil.jit(lambda a, b: a @ b)
    rng = np.random.default_rng(n + k)
    a = rng.standard_normal((1, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    result = f(a, b)
    assert cuvil.last_fallback_reason(f) is None
    reference = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(result, reference, rtol=1e-4, atol=1e-4 * np.sqrt(k))
    scheduled = _ir_after(f, "cuvil-cpu-schedule")
    # Eight registers of 16 (AVX-512) or 8 (AVX2) lanes.
    assert re.search(r"vector<1x(128|64)xf32>", scheduled), scheduled[:3000]


@pytest.mark.parametrize(
    "n,c,hw,f,kernel,strides,padding,dilations",
    [
        (1, 3, (17, 19), 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # odd image, same padding
        (1, 16, (14, 14), 24, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),  # pointwise: no copy
        (2, 5, (16, 15), 7, (3, 2), (2, 1), (0, 1, 2, 0), (1, 1)),  # a batch, strides, odd pads
        (3, 4, (20, 20), 6, (3, 3), (1, 2), (2, 2, 2, 2), (2, 2)),  # dilated
        (1, 8, (7, 7), 40, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1)),  # strided 1x1 (downsample)
    ],
)
def test_convolutions_run_as_gemms(snapshots, n, c, hw, f, kernel, strides, padding, dilations):
    """Ungrouped convolutions become columns + a GEMM with the GEMM schedule, and stay exact."""
    rng = np.random.default_rng(n * 100 + f)
    x = rng.standard_normal((n, c, *hw)).astype(np.float32)
    w = rng.standard_normal((f, c, *kernel)).astype(np.float32)
    bias = rng.standard_normal((1, f, 1, 1)).astype(np.float32)

    def block(x, w, bias):
        return np.maximum(cuvil.conv2d(x, w, strides, padding, dilations) + bias, 0.0)

    f_jit = cuvil.jit(block)
    reference = np.maximum(
        cuvil.conv2d(x.astype(np.float64), w.astype(np.float64), strides, padding, dilations)
        + bias,
        0.0,
    )
    np.testing.assert_allclose(f_jit(x, w, bias), reference, rtol=1e-4, atol=1e-4)
    as_gemm = _ir_after(f_jit, "cuvil-cpu-conv-to-gemm")
    assert "linalg.conv_2d_nchw_fchw ins" not in as_gemm
    # A batch of images is one GEMM over all their columns: the weights are not
    # broadcast to a copy per image.
    assert "linalg.matmul ins" in as_gemm and "linalg.batch_matmul" not in as_gemm
    pointwise = kernel == (1, 1) and strides == (1, 1)
    assert ("tensor.extract %" in as_gemm) != pointwise  # the columns are copied unless 1x1
    assert "vector.fma" in _ir_after(f_jit, "cuvil-cpu-schedule")


@pytest.mark.parametrize(
    "n,c,hw,f,kernel,stride,form",
    [
        (1, 16, 28, 24, 3, 1, "tasks"),  # 784 pixels: tasks of 4 output rows
        (1, 3, 64, 16, 7, 2, "tasks"),  # a strided stem, 32 x 32 out: tasks of whole rows
        (1, 8, 14, 48, 3, 1, "split"),  # 196 pixels, 48 filters: split 192 + 4
        (3, 16, 28, 24, 3, 1, "tasks"),  # a batch: tasks within one image each
        (2, 64, 7, 40, 3, 1, "split"),  # a batch of 49-pixel images: 98 columns split
        (1, 8, 28, 32, 3, 1, "rows of 14"),  # 784 pixels, 32 filters: tasks of half the image
        (1, 12, 14, 64, 3, 1, "rows of 7"),  # 196 pixels: tasks of 98 rows, 2 done one at a time
        (1, 64, 7, 64, 3, 1, "rows of 7"),  # 49 pixels: one image, two tasks of 32 filters
        (2, 64, 7, 64, 3, 1, "rows of 7"),  # a batch of them: 98 rows, a task per image
        (1, 8, 9, 32, 3, 2, "rows"),  # strided: 5 x 5 out, too little work for tasks
    ],
)
def test_convolution_columns_per_task_split_columns_and_pixel_rows_stay_exact(
    snapshots, n, c, hw, f, kernel, stride, form
):
    """A convolution computes its columns inside the GEMM's thread tasks, whole
    output rows of one image each, where tasks can cover whole vectors; otherwise its
    odd columns are split off. A batch is one GEMM over all images' columns. Bias and
    ReLU stay the GEMM's epilogue (read back as NCHW for a batch). Where the pixels
    are no whole register tiles but the filters are (with 16 lanes), the pixels are
    the GEMM's rows, gathered from the image made NHWC, and the constant weights,
    reordered at compile time, its right operand. Results are exact."""
    rng = np.random.default_rng(c * hw + f + n)
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w = rng.standard_normal((f, c, kernel, kernel)).astype(np.float32)
    bias = rng.standard_normal((1, f, 1, 1)).astype(np.float32)
    pad = kernel // 2

    def block(x, w, bias):
        return np.maximum(cuvil.conv2d(x, w, stride, pad) + bias, 0.0)

    f_jit = cuvil.jit(block, constants=("w", "bias"), pipeline=_wide_vectors())
    reference = np.maximum(
        cuvil.conv2d(x.astype(np.float64), w.astype(np.float64), stride, pad) + bias, 0.0
    )
    np.testing.assert_allclose(f_jit(x, w, bias), reference, rtol=1e-4, atol=1e-4)
    assert cuvil.last_fallback_reason(f_jit) is None
    scheduled = _ir_after(f_jit, "cuvil-cpu-schedule")
    out = (hw + 2 * pad - kernel) // stride + 1
    if form.startswith("rows"):
        # Each thread task gathers the rows of its own output pixels, whole output
        # rows of one image: [1, rows, OW, KH, KW, C], inside the GEMM's tasks.
        task = re.search(rf"tensor<1x(\d+)x{out}x{kernel}x{kernel}x{c}xf32>", scheduled)
        assert task is not None, scheduled[:4000]
        in_tasks = "scf.forall" in scheduled[: task.start()]
        assert in_tasks == (form != "rows"), scheduled[:4000]
        if in_tasks:
            assert int(task.group(1)) == int(form.split()[-1])
        as_gemm = _ir_after(f_jit, "cuvil-cpu-conv-to-gemm")
        rows, depth = n * out * out, c * kernel * kernel
        assert (
            f"tensor<{n}x{out}x{out}x{kernel}x{kernel}x{c}xf32> into tensor<{rows}x{depth}xf32>"
            in as_gemm
        )
        assert f"tensor<{rows}x{depth}xf32>, tensor<{depth}x{f}xf32>" in as_gemm  # weights [K, F]
        # The image to NHWC ([N, C, H*W] to [N, H*W, C]) and the product back to
        # NCHW ([N, OH*OW, F] to [N, F, OH*OW]).
        assert as_gemm.count("permutation = [0, 2, 1]") == 2
        assert "vector<8x32xf32>" in scheduled  # whole register tiles of filters
        # Bias and ReLU (one op) on the product: the GEMM's epilogue before the
        # transpose, on whole register tiles of filters.
        assert re.search(r"arith\.maximumf %\S+, %\S+ : vector<\d+x32xf32>", scheduled)
        return
    # A task's columns: [1, C, KH, KW, rows, OW] (one image) or [C, KH, KW, 1, rows,
    # OW] (a batch) for fewer rows than an image has.
    shape = rf"1x{c}x{kernel}x{kernel}" if n == 1 else rf"{c}x{kernel}x{kernel}x1"
    tile = re.search(rf"tensor<{shape}x(\d+)x{out}xf32>", scheduled)
    assert (tile is not None and int(tile.group(1)) < out) == (form == "tasks"), scheduled[:4000]
    if n == 1:  # the ReLU in the GEMM's register loop, never a kernel on the image
        assert re.search(r"arith\.maximumf %\S+, %\S+ : vector<\d+x\d+xf32>", scheduled)
        assert not re.search(rf"arith\.maximumf .* : vector<1x1x1x{out}xf32>", scheduled)
    if stride == 2:
        # Every other pixel of a row: a gather of a whole output row, read as one
        # load of the row's span and a shuffle keeping every other element.
        assert "vector.gather" in scheduled and f"vector<{out}xindex>" in scheduled
        lowered = _ir_after(f_jit, "cuvil-gathers-as-loads")
        assert "vector.gather" not in lowered, lowered[:4000]
        span = 2 * (out - 1) + 1
        assert re.search(
            rf"vector\.load %\S+\[%\S+\] : memref<\d+xf32>, vector<{span}xf32>", lowered
        )
        evens = ", ".join(str(2 * i) for i in range(out))
        assert re.search(rf"vector\.shuffle %(\S+), %\1 \[{evens}\] : vector<{span}xf32>", lowered)


@pytest.mark.parametrize(
    "n,c,hw,f,kernel,strides,padding,dilations,dtype",
    [
        (1, 1, (14, 14), 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), np.float32),  # one channel
        (2, 3, (9, 11), 32, (5, 3), (1, 2), (0, 2, 1, 0), (1, 1), np.float32),  # odd pads
        (1, 17, (14, 14), 64, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), np.float32),  # strided
        (1, 8, (14, 14), 32, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), np.float32),  # dilated
        (1, 8, (7, 7), 32, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), np.float32),  # 1x1
        (2, 8, (7, 7), 64, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), np.float64),  # float64
        (1, 256, (7, 7), 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), np.float32),  # rows by 64
        (1, 144, (7, 7), 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), np.float32),  # rows by 16
    ],
)
def test_pixel_row_convolutions_stay_exact(
    snapshots, n, c, hw, f, kernel, strides, padding, dilations, dtype
):
    """Convolutions whose pixels are the GEMM's rows (constant weights, odd pixel
    counts) match a float64 reference whatever their strides, padding, dilation,
    batch and element type."""
    rng = np.random.default_rng(c * f + n)
    x = rng.standard_normal((n, c, *hw)).astype(dtype)
    w = rng.standard_normal((f, c, *kernel)).astype(dtype)

    def block(x, w):
        return np.maximum(cuvil.conv2d(x, w, strides, padding, dilations), 0.0)

    f_jit = cuvil.jit(block, constants=("w",))
    reference = np.maximum(
        cuvil.conv2d(x.astype(np.float64), w.astype(np.float64), strides, padding, dilations),
        0.0,
    )
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(f_jit(x, w), reference, rtol=tolerance, atol=tolerance)
    assert cuvil.last_fallback_reason(f_jit) is None
    pointwise = kernel == (1, 1) and strides == (1, 1)
    rows = "permutation = [0, 2, 1]" in _ir_after(f_jit, "cuvil-cpu-conv-to-gemm")
    assert rows != pointwise  # a 1x1 kernel reads the image itself as its columns


@pytest.mark.parametrize(
    "n,c,hw,f,kernel,padding,dilations,constant,dtype",
    [
        (1, 16, (28, 28), 32, (3, 3), (1, 1, 1, 1), (1, 1), True, np.float32),
        (2, 32, (20, 20), 48, (3, 3), (1, 1, 1, 1), (1, 1), True, np.float32),  # a batch
        (1, 32, (60, 60), 32, (3, 3), (2, 2, 2, 2), (2, 2), True, np.float32),  # dilated
        (1, 24, (33, 31), 40, (5, 3), (2, 1, 2, 1), (1, 1), False, np.float32),  # weights vary
        (1, 64, (56, 56), 64, (3, 3), (1, 1, 1, 1), (1, 1), True, np.float32),  # ResNet's
        (1, 32, (14, 14), 64, (3, 3), (1, 1, 1, 1), (1, 1), True, np.float32),  # 224 for 196
        (1, 32, (20, 20), 32, (3, 1), (1, 0, 1, 0), (1, 1), True, np.float32),  # one column
        (1, 32, (20, 20), 40, (1, 3), (0, 1, 0, 1), (1, 1), True, np.float32),  # one row
        (1, 32, (24, 24), 32, (3, 3), (0, 2, 1, 0), (1, 1), True, np.float64),  # odd pads
    ],
)
def test_implicit_gemm_convolutions_stay_exact(
    snapshots, n, c, hw, f, kernel, padding, dilations, constant, dtype
):
    """Unit-stride convolutions with enough channels and filters read the padded
    image in place as the GEMM's right operand (no columns are copied), the weights
    packed by register rows; bias and ReLU follow. Results match a float64 reference
    whatever the batch, dilation, kernel, padding and element type."""
    rng = np.random.default_rng(c * f + n)
    x = rng.standard_normal((n, c, *hw)).astype(dtype)
    w = (rng.standard_normal((f, c, *kernel)) / np.sqrt(c * kernel[0] * kernel[1])).astype(dtype)
    bias = rng.standard_normal((1, f, 1, 1)).astype(dtype)

    def block(x, w, bias):
        return np.maximum(cuvil.conv2d(x, w, 1, padding, dilations) + bias, 0.0)

    f_jit = cuvil.jit(
        block, constants=("w", "bias") if constant else ("bias",), pipeline=_wide_vectors()
    )
    reference = np.maximum(
        cuvil.conv2d(x.astype(np.float64), w.astype(np.float64), 1, padding, dilations) + bias,
        0.0,
    )
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(f_jit(x, w, bias), reference, rtol=tolerance, atol=tolerance)
    assert cuvil.last_fallback_reason(f_jit) is None
    as_gemm = _ir_after(f_jit, "cuvil-cpu-conv-to-gemm")
    assert "cuvil.implicit_conv" in as_gemm and "tensor.extract %" not in as_gemm
    assert ("linalg.transpose" in as_gemm) != constant  # packed at compile time
    scheduled = _ir_after(f_jit, "cuvil-cpu-schedule")
    element = "f32" if dtype == np.float32 else "f64"
    # 8 filters by 3 vectors of columns (2 for float64 or narrower vectors)
    assert re.search(rf"-> \(vector<8x[23]x\d+x{element}>\)", scheduled), scheduled[:3000]


def test_every_snapshot_is_valid_mlir_with_the_users_locations(snapshots):
    """What the Workbench exports for a step can be fed back to cuvil-opt."""
    from conftest import load_example

    mlp = load_example("mlp")
    mlp.mlp(*mlp.make_inputs())
    ext = cuvil._jit._extension()
    steps = mlp.mlp._last_compiled.compiled.snapshots
    assert len(steps) > 40
    for step in steps:
        ext.verify(step["ir"])  # raises CompileError when it does not parse
        assert 'mlp.py":14:' in step["ir"], step["name"]


@pytest.mark.parametrize("m,k,n", [(64, 512, 128), (64, 128, 512)])
def test_gemm_accumulator_fills_stay_vector_stores_and_small_gemms_share_threads(
    snapshots, m, k, n
):
    """The fill of a GEMM's accumulator tile stays vector stores (LLVM would call memset
    once per tile row), and a GEMM whose one cache tile holds 2^22 multiply-adds is cut
    in two thread tiles; results are exact."""
    f = cuvil.jit(lambda a, b: a @ b, pipeline=_wide_vectors())
    rng = np.random.default_rng(m * k + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(
        f(a, b), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4 * np.sqrt(k)
    )
    assert not re.search(r"call .*memset", cuvil.inspect_ir(f, "llvm"))
    scheduled = _ir_after(f, "cuvil-cpu-schedule")
    assert re.search(r"scf\.forall \(.*\) in \((2|1, 2|2, 1)\)", scheduled), scheduled[:2000]


def test_parallel_regions_call_cuvils_thread_pool_through_slots():
    """A GEMM split across threads forks through the slot the loader fills with
    Cuvil's thread pool (no OpenMP runtime is linked: the variadic __kmpc_fork_call
    is gone, its loop shares still come from __kmpc_for_static_init); exact results."""
    f = cuvil.jit(lambda a, b: a @ b)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((256, 512)).astype(np.float32)
    b = rng.standard_normal((512, 1024)).astype(np.float32)
    result = f(a, b)
    assert cuvil.last_fallback_reason(f) is None
    np.testing.assert_allclose(result, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
    llvm = cuvil.inspect_ir(f, "llvm")
    assert "@cuvil_slot_cuvil_fork_call" in llvm, llvm[:2000]
    assert "@__kmpc_fork_call(" not in llvm
    assert "@cuvil_slot___kmpc_for_static_init_8u" in llvm
    assert "__kmpc_barrier(" not in llvm, "a region's loop ends it without a barrier"


def _loop_holding(ir, text):
    """The body of the scf.forall whose body holds ``text`` (up to its in_parallel), or ''."""
    for body in ir.split("scf.forall (")[1:]:
        body = body.split("scf.forall.in_parallel")[0]
        if text in body:
            return body
    return ""


@pytest.mark.parametrize(
    "heads,queries,keys,d_head,masked,fused",
    [
        (4, 64, 64, 32, False, True),  # the example block's attention
        (8, 256, 256, 64, False, True),  # blocks of 16 queries, 128 tasks
        (2, 48, 96, 16, True, True),  # 24-row blocks, a causal mask, d_head under a tile
        (2, 16, 32, 8, False, True),  # blocks of one register tile of queries
        (4, 64, 40, 32, False, False),  # 40 keys: not whole register tiles, unfused
        (1, 64, 2048, 32, False, True),  # rows reduced in chunks of 1024 lanes
    ],
)
@pytest.mark.parametrize("scaled", [True, False], ids=["scaled", "unscaled"])
def test_attention_runs_as_one_loop_over_blocks_of_queries(
    snapshots, heads, queries, keys, d_head, masked, fused, scaled
):
    """softmax(q·kᵀ [·scale] [+ mask])·v is one kernel: each block of query rows gets
    its scores, softmax and product with v in L1, in 8 x 32 register tiles; the scores
    are never written whole (unscaled, the softmax's maximum and differences both read
    the scores: one copy of that GEMM). Results match float64 NumPy, fused or not."""

    def attention(q, k, v, mask):
        s = q @ k.transpose(0, 2, 1)
        if scaled:
            s = s * np.float32(1.0 / np.sqrt(d_head))
        if masked:
            s = s + mask
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ v

    f = cuvil.jit(attention, pipeline=_wide_vectors())
    rng = np.random.default_rng(heads * queries + keys)
    q = rng.standard_normal((heads, queries, d_head)).astype(np.float32)
    k, v = (rng.standard_normal((heads, keys, d_head)).astype(np.float32) for _ in range(2))
    v = np.ascontiguousarray(np.concatenate([v] * max(1, 32 // d_head), axis=2))  # 32+ wide
    mask = np.triu(np.full((queries, keys), -1e4, np.float32), k=1)
    result = f(q, k, v, mask)
    assert cuvil.last_fallback_reason(f) is None
    reference = attention(*(x.astype(np.float64) for x in (q, k, v, mask)))
    np.testing.assert_allclose(result, reference, rtol=1e-5, atol=1e-5)
    scheduled = _ir_after(f, "cuvil-cpu-schedule")
    loop = _loop_holding(scheduled, "math.exp")
    # Both GEMMs' register loops, once each, and the softmax in one loop over blocks.
    register_loops = loop.count("-> (vector<1x8x32xf32>)")
    assert (register_loops == 2 and "arith.divf" in loop) is fused, loop[:2000]
    assert "linalg.batch_matmul ins" not in scheduled
    bufferized = _ir_after(f, "cuvil-cpu-stack-buffers")
    # The blocks' scores and probabilities: on each thread's stack (at 2048 keys a block's
    # buffers are 64 KiB each, over the 128 KiB a thread's loop may take: some stay heap).
    if fused and keys <= 256:
        assert "memref.alloca()" in bufferized and "memref.alloc()" not in _loop_holding(
            bufferized.replace("scf.parallel (", "scf.forall ("), "math.exp"
        )


@pytest.mark.parametrize("constants", [True, False], ids=["weights-compiled-in", "arguments"])
def test_projections_of_one_input_with_constant_weights_are_one_gemm(snapshots, constants):
    """Attention's q, k and v projections of one input, with weights compiled in, run as
    one GEMM with the weights side by side (concatenated when compiled); each result is
    a column slice of it. Weights passed as arguments keep three GEMMs. Results match
    float64 NumPy either way."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 128)).astype(np.float32)
    wq, wk, wv = (rng.standard_normal((128, n)).astype(np.float32) for n in (128, 128, 96))

    def projections(x, wq, wk, wv):
        q = (x @ wq).reshape(64, 4, 32).transpose(1, 0, 2)
        k = (x @ wk).reshape(64, 4, 32).transpose(1, 0, 2)
        return q @ k.transpose(0, 2, 1), np.tanh(x @ wv)

    f = cuvil.jit(projections, constants=("wq", "wk", "wv") if constants else ())
    result = f(x, wq, wk, wv)
    assert cuvil.last_fallback_reason(f) is None
    reference = projections(*(a.astype(np.float64) for a in (x, wq, wk, wv)))
    for got, want in zip(result, reference):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    merged = _ir_after(f, "cuvil-merge-sibling-matmuls")
    products = re.findall(r"cuvil\.matmul .* -> tensor<([\dx]+)xf32>", merged)
    if constants:
        assert products == ["64x352", "4x64x64"], products  # q|k|v, then q·kᵀ
        assert merged.count("cuvil.slice") == 3
    else:
        assert sorted(products) == ["4x64x64", "64x128", "64x128", "64x96"], products


def test_attention_reads_heads_of_q_and_v_in_place(snapshots):
    """Attention whose q, k and v are heads split off one projection (seq 256, 8 heads
    of 64): the fused attention kernel reads each block's rows of q and each head of v
    straight from the projection (transform.cuvil.fold_transpose_slices), so no kernel
    copies q or v into a [heads, seq, 64] tensor first; k, transposed, still is. Results
    match float64 NumPy."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((256, 512)).astype(np.float32)
    wq, wk, wv = (rng.standard_normal((512, 512)).astype(np.float32) / 23 for _ in range(3))

    def attention(x, wq, wk, wv):
        def heads(t):
            return t.reshape(256, 8, 64).transpose(1, 0, 2)

        q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
        s = (q @ k.transpose(0, 2, 1)) * 0.125
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ v

    f = cuvil.jit(attention, constants=("wq", "wk", "wv"))
    got = f(x, wq, wk, wv)
    assert cuvil.last_fallback_reason(f) is None
    want = attention(*(a.astype(np.float64) for a in (x, wq, wk, wv)))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    scheduled = _ir_after(f, "cuvil-cpu-schedule")
    # Kernels writing a [heads, seq, 64] tensor: the attention's own output only.
    writers = re.findall(r"scf\.forall .* -> \(tensor<8x256x64xf32>\)", scheduled)
    assert len(writers) == 1, writers
    assert re.search(r"scf\.forall .* -> \(tensor<8x64x256xf32>\)", scheduled)  # kᵀ


@pytest.mark.parametrize("length", [2048, 4096, 3072])
def test_rows_longer_than_1024_reduce_in_vector_chunks(snapshots, length):
    """A row reduction over more than 1024 elements (a softmax over 2048 keys, a layer
    norm over 4096 features) reduces chunks of whole vectors into the row's running value
    instead of one scalar step per element; NaN and infinities still propagate."""
    rng = np.random.default_rng(length)
    x = rng.standard_normal((16, length)).astype(np.float32)
    x[3, 1000], x[5, length - 1], x[6, :] = np.nan, np.inf, -np.inf

    def reductions(a):
        shifted = np.exp(a - a.max(axis=-1, keepdims=True))
        return a.max(axis=-1), a.min(axis=-1), a.sum(axis=-1), shifted.sum(axis=-1)

    f = cuvil.jit(reductions)
    got = f(x)
    assert cuvil.last_fallback_reason(f) is None
    with np.errstate(all="ignore"):
        want = reductions(x.astype(np.float64))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-4, equal_nan=True)
    chunks = re.findall(
        r"vector\.reduction <(\w+)>.*: vector<(\d+)xf32> into f32",
        _ir_after(f, "cuvil-cpu-schedule"),
    )
    assert {kind for kind, _ in chunks} >= {"maximumf", "minimumf", "add"}, chunks
    assert all(length % int(width) == 0 and int(width) <= 1024 for _, width in chunks)
