"""The cuda target without a GPU: PTX, SASS and fat binaries from the toolkit, the
runtime's "no driver" and "stub driver" answers, the fallback to the CPU.

Runs where the CUDA toolkit is installed (ptxas, fatbinary, libdevice under CUDA_HOME or
/usr/local/cuda); the numerics on a GPU are in tests/gpu (label ``gpu``)."""

from __future__ import annotations

import json
import logging
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import test_ops
from target_files import EXAMPLE_FUNCTIONS, EXAMPLES, assert_close, example

import cuvil

CUDA_HOME = pathlib.Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda")
STUB_DRIVER = CUDA_HOME / "lib64" / "stubs" / "libcuda.so"

pytestmark = pytest.mark.skipif(
    not (CUDA_HOME / "bin" / "ptxas").exists(),
    reason=f"no CUDA toolkit at {CUDA_HOME} (ptxas): the cuda target assembles with it",
)


def _runs_here() -> bool:
    return cuvil._targets.unavailable_reason("cuda", 0) is None


def _compile_for_cuda(fn, *args):
    """Compiles ``fn`` for cuda: the host library is built (PTX, ptxas, fatbinary) when it
    is; returns the jit function after a call that either ran on a GPU or said why not."""
    jitted = cuvil.jit(fn, target="cuda")
    if _runs_here():
        return jitted, jitted(*args)
    with pytest.raises(RuntimeError, match="cannot run CUDA code here"):
        jitted(*args)
    return jitted, None


def test_cuda_is_a_registered_target_with_its_stages_and_artifacts():
    assert "cuda" in cuvil.available_targets()
    assert {"ptx", "cubin", "fatbin"} <= set(cuvil._targets.artifact_kinds())
    assert "ptx" in cuvil.IR_STAGES


def test_ptx_of_a_compiled_function_has_one_entry_per_kernel():
    a = np.random.default_rng(0).standard_normal((64, 96), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((96, 32), dtype=np.float32)

    def mlp(a, b):
        return np.tanh(a @ b)

    jitted, _ = _compile_for_cuda(mlp, a, b)
    stages = cuvil.compilations()[-1].compiled.stages
    assert "ptx" in stages
    ptx = cuvil.inspect_ir(jitted, "ptx")
    assert ".target sm_90" in ptx
    entries = ptx.count(".entry ")
    lowered = cuvil.inspect_ir(jitted, "llvm-dialect")
    # One kernel: the fill, the GEMM and the tanh after it are one launch of
    # 16 x 16 threads staging both operands in shared memory.
    assert entries == lowered.count("gpu.launch_func") == 1
    assert ".maxntid 16, 16, 1" in ptx and ".shared" in ptx
    # Math comes from libdevice, linked in: nothing is left to resolve.
    assert ".extern .func" not in ptx


def test_the_call_names_the_missing_driver_and_the_fix():
    if _runs_here():
        pytest.skip("a CUDA driver is installed here")
    jitted = cuvil.jit(lambda x: x * 2.0, target="cuda")
    with pytest.raises(RuntimeError) as error:
        jitted(np.ones(16, np.float32))
    message = str(error.value)
    assert "libcuda.so.1" in message and "install the NVIDIA driver" in message
    assert "target='cpu'" in message


_DRIVER_CHILD = """
import numpy as np, cuvil
f = cuvil.jit(lambda x: x + 1.0, target="cuda")
try:
    f(np.ones(4, np.float32))
except RuntimeError as error:
    print("RuntimeError:", error)
print("reason:", cuvil._targets.unavailable_reason("cuda", 0))
"""


@pytest.mark.parametrize("driver", ["stub", "missing"])
def test_stub_and_missing_drivers_give_clear_errors(driver, tmp_path):
    """The toolkit's stub answers every call with CUDA_ERROR_STUB_LIBRARY; a driver path
    that does not exist cannot be opened. Neither crashes the process."""
    if driver == "stub" and not STUB_DRIVER.exists():
        pytest.skip(f"no stub driver at {STUB_DRIVER}")
    path = str(STUB_DRIVER) if driver == "stub" else str(tmp_path / "libcuda.so.1")
    env = dict(os.environ, CUVIL_CUDA_DRIVER=path)
    run = subprocess.run(
        [sys.executable, "-c", _DRIVER_CHILD], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    expected = "stub library" if driver == "stub" else "cannot load"
    assert run.stdout.count(expected) == 2, run.stdout
    assert "RuntimeError: cuvil: compiled function" in run.stdout
    assert "install the NVIDIA driver" in run.stdout


def test_fallback_target_runs_on_the_cpu_and_says_why(caplog):
    if _runs_here():
        pytest.skip("a CUDA driver is installed here: nothing to fall back from")
    x = np.linspace(-2, 2, 48, dtype=np.float32).reshape(6, 8)

    @cuvil.jit(target="cuda", fallback_target="cpu")
    def gelu_ish(x):
        return x * (1.0 / (1.0 + np.exp(-1.702 * x)))

    with caplog.at_level(logging.WARNING, logger="cuvil"):
        result = gelu_ish(x)
    assert_close(result, x * (1.0 / (1.0 + np.exp(-1.702 * x))))
    assert "cannot run here" in caplog.text and "cpu:0" in caplog.text
    # Both compilations are recorded: the cuda one (PTX to inspect) and the cpu one.
    targets = [c.target for c in cuvil.compilations() if c.function.endswith("gelu_ish")]
    assert targets[-2:] == ["cuda", "cpu"]


@pytest.mark.parametrize("kind", ["ptx", "cubin", "fatbin", "so"])
def test_cli_emits_every_cuda_artifact(kind, tmp_path):
    """``cuvil compile --target cuda --emit KIND``: works without a GPU (the example's own
    call then runs as Python, and says so)."""
    out = tmp_path / f"mlp.{kind}"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "cuvil",
            "compile",
            str(EXAMPLES / "mlp.py"),
            "--target",
            "cuda",
            "--emit",
            kind,
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    data = out.read_bytes()
    if kind == "ptx":
        text = data.decode()
        assert text.startswith("//") and ".target sm_90" in text and ".entry" in text
        assert "\0" not in text
    elif kind == "cubin":
        assert data[:4] == b"\x7fELF"
    elif kind == "fatbin":
        assert data[:4] == bytes.fromhex("50ed55ba")  # the fat binary's magic
    else:
        assert data[:4] == b"\x7fELF"


@pytest.mark.parametrize("example_name, function", EXAMPLE_FUNCTIONS)
def test_examples_assemble_for_sm90(example_name, function):
    """Every kernel of the examples goes through ptxas (sm_90) and fatbinary."""
    namespace = example(example_name)
    inputs = namespace["make_inputs"]()
    _, result = _compile_for_cuda(namespace[function].__cuvil_function__, *inputs)
    if result is not None:
        assert_close(result, namespace["reference"](*inputs))


@pytest.mark.parametrize("info, sample", test_ops.CASES)
def test_op_table_assembles_for_sm90(info, sample):
    """Every op of the op table compiles to kernels ptxas accepts (on a GPU: and matches
    NumPy)."""
    jitted, result = _compile_for_cuda(test_ops._traced_function(info, sample), *sample.args)
    if result is not None:
        test_ops._assert_matches(result, info.reference(sample), info.tolerance(sample))


FAKE_DRIVER_SOURCE = pathlib.Path(__file__).parent / "fake_cuda" / "fake_cuda.c"

_FAKE_CHILD = """
import ctypes, json, os
import numpy as np, cuvil
fake = ctypes.CDLL(os.environ["CUVIL_CUDA_DRIVER"])
fake.fake_cuda_counter.restype = ctypes.c_long
w = np.linspace(-1, 1, 64 * 32, dtype=np.float32).reshape(64, 32)

@cuvil.jit(target="cuda")
def f(x):
    return np.tanh(x @ w) + 1.0

x = np.ones((16, 64), np.float32)
out = {"reason": cuvil._targets.unavailable_reason("cuda", 0)}
try:
    for _ in range(3):
        y = f(x)
    out["shape"] = list(y.shape)
except RuntimeError as error:
    out["error"] = str(error)
out["copies"] = cuvil.device_copies(f)
for name in ("launches", "module_loads", "live_allocations", "host_to_device",
             "device_to_host", "bad_launches"):
    out[name] = fake.fake_cuda_counter(name.encode())
out["kernels"] = cuvil.inspect_ir(f, "llvm-dialect").count("gpu.launch_func")
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    """The stand-in driver, built once for the module's tests."""
    driver = tmp_path_factory.mktemp("fake-cuda") / "libfakecuda.so"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-O1", "-o", str(driver), str(FAKE_DRIVER_SOURCE)], check=True
    )
    return driver


def _run_with_fake_driver(driver, child: str, *args, **env) -> dict:
    """Runs ``child`` (a script printing one JSON line last) in a process of its own on
    the stand-in driver; its JSON."""
    run = subprocess.run(
        [sys.executable, "-c", child, *map(str, args)],
        env=dict(os.environ, CUVIL_CUDA_DRIVER=str(driver), **env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def test_runtime_drives_a_driver_as_the_generated_code_asks(fake_driver):
    """With a stand-in driver (host memory, kernels not run): the module is loaded once,
    each call copies its input in and its output back, the constant weight goes to the
    device once, every kernel is launched within CUDA's limits, nothing leaks."""
    out = _run_with_fake_driver(fake_driver, _FAKE_CHILD)
    assert out["reason"] is None and "error" not in out, out
    assert out["shape"] == [16, 32]
    assert out["module_loads"] == 1
    assert out["kernels"] >= 1 and out["launches"] == 3 * out["kernels"]
    assert out["bad_launches"] == 0
    assert out["host_to_device"] == 3 + 1 and out["device_to_host"] == 3
    assert out["live_allocations"] == 1  # the weight's device copy, until unload
    assert out["copies"] == {
        "host_to_device": 4,
        "host_to_device_bytes": 3 * 16 * 64 * 4 + 64 * 32 * 4,
        "device_to_host": 3,
        "device_to_host_bytes": 3 * 16 * 32 * 4,
        "calls": 3,
    }


def test_a_failing_launch_is_a_clear_error_and_leaks_nothing(fake_driver):
    out = _run_with_fake_driver(fake_driver, _FAKE_CHILD, FAKE_CUDA_FAIL="launch")
    assert "launching a kernel (cuLaunchKernel) failed: CUDA_ERROR_LAUNCH_FAILED" in out["error"]
    assert "the outputs were not written" in out["error"]
    assert out["launches"] == 0 and out["live_allocations"] == 1


_PROFILE_CHILD = """
import json, numpy as np, cuvil

@cuvil.jit(target="cuda")
def block(x, w):
    h = np.maximum(x @ w, 0.0)
    return h - h.max(axis=1, keepdims=True)

x = np.ones((64, 96), np.float32); w = np.ones((96, 128), np.float32)
block(x, w)
with cuvil.profile() as prof:
    block(x, w)
ops = [s.name for s in prof.key_averages()]
kernels = cuvil.compilations()[-1].compiled.kernels
print(json.dumps({"ops": ops, "kernels": [k[0] for k in kernels],
                  "locs": [k[1] for k in kernels], "gpu_note": prof.gpu_note}))
"""


def test_profiled_launches_carry_their_ir_ops(fake_driver):
    """Each launch reaches the profiler as its kernel of the table: IR op name and the
    user's line (the CPU side of the launch; GPU time comes from CUPTI on a GPU)."""
    out = _run_with_fake_driver(fake_driver, _PROFILE_CHILD)
    assert any("linalg.matmul" in name for name in out["kernels"]), out
    assert all(loc.startswith("<string>:") for loc in out["locs"]), out
    assert any("linalg.matmul" in op for op in out["ops"]), out
    # CUPTI cannot collect from a stand-in driver: the profile says why it has
    # no GPU lanes instead of failing.
    assert out["gpu_note"], out


def test_ir_modules_compile_for_cuda_and_dynamic_shapes_are_refused():
    from cuvil.frontend import build_ir, to_ir_with_dynamic_shape

    def f(x, w):
        return np.tanh(x @ w).sum(axis=1)

    module = build_ir(f, {"x": (8, 64), "w": (64, 32)})
    compiled = module.compile(target="cuda:0")
    assert cuvil.compilations()[-1].target == "cuda"
    assert ".entry f_k0(" in compiled.inspect("ptx")
    assert module.compile(target="cuda") is compiled  # cached per target
    assert module.compile() is not compiled  # the module's own (cpu)
    dynamic = to_ir_with_dynamic_shape(
        f,
        input_spec=[
            cuvil.TensorSpec(shape=("n", 64), dtype="float32"),
            cuvil.TensorSpec(shape=(64, 32), dtype="float32"),
        ],
    )
    with pytest.raises(cuvil.CompileError, match="cuda target compiles static shapes only"):
        dynamic.compile(target="cuda")


def _two_gemm_mlp(rng):
    """A 50x96 -> 128 -> 40 MLP with random weights, and its IR module."""
    from cuvil.frontend import build_ir

    w1 = rng.standard_normal((96, 128), dtype=np.float32)
    w2 = rng.standard_normal((128, 40), dtype=np.float32)

    def mlp(x):
        return np.maximum(x @ w1, 0.0) @ w2

    return mlp, build_ir(mlp, {"x": (50, 96)})


@pytest.mark.parametrize("precision, ptx_type", [("bf16", "bf16"), ("fp16", "f16")])
def test_reduced_precision_matmuls_run_on_tensor_cores(precision, ptx_type):
    """A model's matmuls under precision="bf16"/"fp16" become tensor-core kernels
    (ldmatrix + mma.sync m16n8k16 with float32 sums) that ptxas assembles for sm_90; the
    float32 model's stay FMA kernels."""
    rng = np.random.default_rng(0)
    mlp, module = _two_gemm_mlp(rng)
    narrow = module.optimize(precision=precision).compile(target="cuda")
    ptx = narrow.inspect("ptx")
    mma = f"mma.sync.aligned.m16n8k16.row.col.f32.{ptx_type}.{ptx_type}.f32"
    assert ptx.count(mma) == 2 * 16, ptx_type  # two GEMMs, 16 MMAs a slice
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx
    assert ".maxntid 32, 4, 1" in ptx
    assert "mma.sync" not in module.compile(target="cuda").inspect("ptx")
    if _runs_here():
        x = rng.standard_normal((50, 96), dtype=np.float32)
        reference = mlp(x)
        result = np.asarray(narrow(x))
        assert np.abs(result - reference).max() <= 0.05 * np.abs(reference).max()


def test_tf32_matmuls_run_on_tensor_cores_where_allowed():
    """precision="tf32" lets the float32 matmuls read TF32 operands: the cuda target
    rounds them on their way to shared memory (cvt.rna) and multiplies with
    mma.sync m16n8k8, float32 sums; ptxas assembles it for sm_90."""
    rng = np.random.default_rng(1)
    mlp, module = _two_gemm_mlp(rng)
    tf32 = module.optimize(precision="tf32").compile(target="cuda")
    ptx = tf32.inspect("ptx")
    assert ptx.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") == 2 * 32
    assert "cvt.rna.tf32.f32" in ptx and "ldmatrix" not in ptx
    assert ".maxntid 32, 4, 1" in ptx
    if _runs_here():
        x = rng.standard_normal((50, 96), dtype=np.float32)
        reference = mlp(x)
        result = np.asarray(tf32(x))
        # Operands carry 11 significant bits: about 1e-3 relative per product.
        assert np.abs(result - reference).max() <= 1e-2 * np.abs(reference).max()


_DEVICE_CHILD = """
import json, numpy as np, cuvil
x = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
w = np.ones((32, 8), np.float32)
a = cuvil.nd.array(x, device="cuda:0")
wd = cuvil.nd.array(w, device="cuda")
out = {"device": a.device, "roundtrip": bool(np.array_equal(a.numpy(), x))}

class Foreign:  # another library's CUDA tensor, seen through DLPack only
    def __init__(self, inner): self.inner = inner
    def __dlpack__(self, stream=None): return self.inner.__dlpack__(stream=stream)
    def __dlpack_device__(self): return self.inner.__dlpack_device__()

b = cuvil.nd.from_dlpack(Foreign(a))
out["shared"] = b.data_ptr == a.data_ptr and bool(np.array_equal(b.numpy(), x))
f = cuvil.jit(lambda x, w: np.tanh(x @ w), target="cuda")
y = f(a, Foreign(wd))
out["result"] = [y.device, list(y.shape), str(y.dtype), type(y).__name__]
out["copies"] = cuvil.device_copies(f)
try:
    f(a, w)
except TypeError as error:
    out["mixed"] = str(error)
print(json.dumps(out))
"""


def test_gpu_arrays_and_dlpack_pass_without_copies(fake_driver):
    """cuvil.nd arrays on cuda:0 and DLPack CUDA tensors go into compiled code as device
    pointers; results come back as cuvil.nd arrays on the GPU; nothing is copied."""
    out = _run_with_fake_driver(fake_driver, _DEVICE_CHILD)
    assert out["device"] == "cuda:0" and out["roundtrip"] and out["shared"], out
    assert out["result"] == ["cuda:0", [16, 8], "float32", "NDArray"], out
    assert out["copies"]["calls"] == 1
    assert out["copies"]["host_to_device"] == out["copies"]["device_to_host"] == 0
    assert "argument 'w' is on cpu" in out["mixed"]


def test_the_workbench_reports_copies_per_call():
    from cuvil._worker import _copies_per_call

    assert _copies_per_call({}) == ""
    text = _copies_per_call(
        {
            "host_to_device": 7,
            "host_to_device_bytes": 3 * 40960 + 8192,
            "device_to_host": 3,
            "device_to_host_bytes": 3 * 8192,
            "calls": 3,
        }
    )
    assert text.startswith("2.33 copies to the GPU (43.7 KB) and 1 back (8.2 KB) per call")


_PACKAGE_CHILD = """
import ctypes, json, os, sys, numpy as np, cuvil
from cuvil.frontend import build_ir
fake = ctypes.CDLL(os.environ["CUVIL_CUDA_DRIVER"])
fake.fake_cuda_counter.restype = ctypes.c_long

def mlp(x, w):
    return np.tanh(x @ w)

path = sys.argv[1]
build_ir(mlp, {"x": (16, 64), "w": (64, 32)}).compile(target="cuda").export(path)
rt = cuvil.runtime.Runtime(device="cuda:0")
f = rt.load_executable(path).get_function("mlp")
y = f(np.ones((16, 64), np.float32), np.ones((64, 32), np.float32))
out = {"shape": list(np.asarray(y.numpy() if hasattr(y, "numpy") else y).shape),
       "launches": fake.fake_cuda_counter(b"launches"),
       "h2d": fake.fake_cuda_counter(b"host_to_device")}
try:
    cuvil.runtime.Runtime(device="wasm")
except ValueError as error:
    out["refused"] = str(error)
print(json.dumps(out))
"""


def test_runtime_runs_packages_compiled_for_cuda(fake_driver, tmp_path):
    """A .cuvil exported from a cuda compilation loads in cuvil.runtime on cuda:0 (the
    stand-in driver here): its host library wrapped in the CUDA runtime, NumPy in and
    out, the kernels launched."""
    out = _run_with_fake_driver(fake_driver, _PACKAGE_CHILD, tmp_path / "mlp.cuvil")
    assert out["shape"] == [16, 32], out
    assert out["launches"] >= 1 and out["h2d"] == 2, out
    assert "runs code for the CPU and CUDA GPUs" in out["refused"]


_ASYNC_CHILD = """
import ctypes, json, os, sys, numpy as np, cuvil
from cuvil.frontend import build_ir
fake = ctypes.CDLL(os.environ["CUVIL_CUDA_DRIVER"])
fake.fake_cuda_counter.restype = ctypes.c_long
count = lambda name: fake.fake_cuda_counter(name.encode())

def mlp(x, w):
    return np.tanh(x @ w)

path = sys.argv[1]
build_ir(mlp, {"x": (16, 64), "w": (64, 32)}).compile(target="cuda").export(path)
rt = cuvil.runtime.Runtime(device="cuda:0", enable_async=True, memory_pool_size_mb=64)
out = {"pool_keep_mb": count("pool_keep_mb"), "pool_allocations": count("live_allocations")}
f = rt.load_executable(path).get_function("mlp")
x, w = np.ones((16, 64), np.float32), np.ones((64, 32), np.float32)
f(x, w)  # loads the code; one synchronous call
out["sync_call"] = {k: count(k) for k in ("launches", "event_syncs", "stream_syncs")}
out["pool_keep_mb_after_load"] = count("pool_keep_mb")
# Three calls queued on the stream, none waited for yet.
outputs = [np.empty((16, 32), np.float32) for _ in range(3)]
queued = [f._handle.enqueue([x, w], [o]) for o in outputs]
out["queued"] = {k: count(k) for k in ("launches", "event_records", "event_syncs",
                                        "stream_syncs", "device_to_host")}
queued[0].wait()
out["after_first_wait"] = count("event_syncs")
for q in queued[1:]:
    q.wait()
try:
    queued[0].wait()
except ValueError as error:
    out["second_wait"] = str(error)
# The Python API: futures resolved in order by the runtime's stream thread.
futures = [f.call_async(x, w) for _ in range(4)]
out["shapes"] = [list(fut.result().numpy().shape) for fut in futures]
rt.synchronize()
# A queued call dropped without waiting still gives its memory back.
f._handle.enqueue([x, w], [np.empty((16, 32), np.float32)])
out["end"] = {k: count(k) for k in ("live_events", "live_pinned", "event_syncs")}
print(json.dumps(out))
"""


def test_async_calls_queue_on_the_gpu_stream_without_waiting(fake_driver, tmp_path):
    """Runtime(device="cuda:0", enable_async=True, memory_pool_size_mb=64): the device's
    pool keeps 64 MiB (reserved, then given back to the pool; executables loaded later
    keep the size); a call is queued on the device's stream (copies in, launches,
    copies out, an event) and returns without waiting; waiting for it synchronizes on
    its event, not the stream; staging memory and events are given back, also for a
    call dropped unwaited."""
    out = _run_with_fake_driver(fake_driver, _ASYNC_CHILD, tmp_path / "mlp.cuvil")
    assert out["pool_keep_mb"] == 64 and out["pool_keep_mb_after_load"] == 64, out
    assert out["pool_allocations"] == 0, out
    kernels = out["sync_call"]["launches"]
    assert kernels >= 1 and out["sync_call"]["event_syncs"] == 1, out
    stream_syncs = out["sync_call"]["stream_syncs"]
    queued = out["queued"]
    assert queued["launches"] == 4 * kernels, out
    assert queued["event_records"] == 4 and queued["device_to_host"] == 4, out
    # Nothing waited for while queueing.
    assert queued["event_syncs"] == 1 and queued["stream_syncs"] == stream_syncs, out
    assert out["after_first_wait"] == 2, out
    assert "already waited for" in out["second_wait"], out
    assert out["shapes"] == [[16, 32]] * 4, out
    assert out["end"]["live_events"] == 0, out
    assert out["end"]["event_syncs"] == 1 + 3 + 4 + 1, out
    # At most the executable's spare staging buffers stay pinned.
    assert 1 <= out["end"]["live_pinned"] <= 4, out
