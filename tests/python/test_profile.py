"""cuvil.profile(): compiled calls and their kernels, attributed to IR ops and Python lines."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import EXAMPLES_DIR, caller_line, load_example, run_python, subprocess_env

import cuvil

MLP_FILE = str(EXAMPLES_DIR / "mlp.py")


def _profiled_mlp(runs=3):
    mlp = load_example("mlp")
    inputs = mlp.make_inputs()
    mlp.mlp(*inputs)  # compile outside the profile
    with cuvil.profile() as prof:
        for _ in range(runs):
            mlp.mlp(*inputs)
    return prof


def test_key_averages_attribute_kernels_to_ir_ops_and_lines():
    prof = _profiled_mlp(runs=3)
    rows = {(r.kind, r.name): r for r in prof.key_averages()}
    call = rows[("python", "mlp")]
    assert call.count == 3 and call.location == ""
    kernels = [r for r in prof.key_averages() if r.kind == "cpu_kernel"]
    assert all(r.count == 3 for r in kernels)
    # Both GEMMs, each with its fused epilogue, on the lines of mlp.py that wrote them.
    gemms = [r for r in kernels if "linalg.matmul" in r.name]
    assert len(gemms) == 2
    source = open(MLP_FILE).read().splitlines()
    for r in gemms:
        path, line, _ = r.location.rsplit(":", 2)
        assert path == MLP_FILE and "@" in source[int(line) - 1]
    assert any("erf" in r.name for r in gemms)  # GELU fused into the first GEMM
    # Kernels run inside the call: the call's self time is what they leave.
    kernel_total = sum(r.total_ms for r in kernels)
    assert kernel_total <= call.total_ms
    assert call.self_ms == pytest.approx(call.total_ms - kernel_total, abs=1e-3)
    for r in kernels:
        assert 0 < r.p50_ms <= r.p99_ms <= r.max_ms


def test_events_carry_the_callers_python_stack():
    mlp = load_example("mlp")
    inputs = mlp.make_inputs()
    mlp.mlp(*inputs)

    def run_model():
        return mlp.mlp(*inputs)

    with cuvil.profile() as prof:
        run_model()
    line = caller_line() - 1
    events = prof.trace.events()
    (call,) = [e for e in events if e["kind"] == "python"]
    kernels = [e for e in events if e["kind"] == "cpu_kernel"]
    assert kernels
    inner = call["stack"][-1]
    assert inner[0].endswith("run_model") and inner[1] == __file__
    assert (call["stack"][-2][0], call["stack"][-2][2]) == (
        "test_events_carry_the_callers_python_stack",
        line,
    )
    for k in kernels:
        assert k["correlation"] == call["correlation"] and k["stack"] == call["stack"]
        assert call["start_ns"] <= k["start_ns"]
        assert k["start_ns"] + k["duration_ns"] <= call["start_ns"] + call["duration_ns"]


def test_chrome_trace_is_nested_with_metadata_and_flows(tmp_path):
    prof = _profiled_mlp(runs=2)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    complete = [e for e in events if e["ph"] == "X"]
    assert {e["cat"] for e in complete} == {"python", "cpu_kernel"}
    assert any(e["ph"] == "M" and e["name"] == "process_name" for e in events)
    assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in events)
    starts = [e for e in events if e["ph"] == "s"]
    finishes = [e for e in events if e["ph"] == "f"]
    kernel_count = sum(1 for e in complete if e["cat"] == "cpu_kernel")
    assert len(starts) == len(finishes) == kernel_count
    # Strictly nested on each thread: every kernel lies inside one call.
    calls = [e for e in complete if e["cat"] == "python"]
    for k in (e for e in complete if e["cat"] == "cpu_kernel"):
        parents = [
            c
            for c in calls
            if c["tid"] == k["tid"]
            and c["ts"] <= k["ts"]
            and k["ts"] + k["dur"] <= c["ts"] + c["dur"]
        ]
        assert len(parents) == 1


def test_folded_and_speedscope_exports(tmp_path):
    prof = _profiled_mlp(runs=1)
    folded = tmp_path / "stacks.folded"
    prof.export_stacks(str(folded))
    lines = folded.read_text().splitlines()
    kernel_lines = [l for l in lines if "linalg.matmul" in l]
    assert kernel_lines and all(";mlp;" in l for l in kernel_lines)
    assert all(int(l.rsplit(" ", 1)[1]) > 0 for l in lines)
    speedscope = tmp_path / "profile.speedscope.json"
    prof.export_speedscope(str(speedscope))
    doc = json.loads(speedscope.read_text())
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    assert doc["profiles"] and doc["shared"]["frames"]
    with pytest.raises(ValueError, match="unknown format 'svg'"):
        prof.export(str(tmp_path / "x.svg"), "svg")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        prof.export_chrome_trace(str(tmp_path / "missing" / "t.json"))


def test_nothing_is_recorded_outside_a_profile():
    recorder = cuvil._jit._extension().profiler
    mlp = load_example("mlp")
    inputs = mlp.make_inputs()
    mlp.mlp(*inputs)
    with cuvil.profile():
        pass
    mlp.mlp(*inputs)
    assert not recorder.recording() and recorder.recorded_count() == 0


def test_profiles_do_not_nest_and_results_need_a_finished_profile():
    prof = cuvil.profile()
    with pytest.raises(RuntimeError, match="nothing recorded yet"):
        prof.key_averages()
    with cuvil.profile():
        with pytest.raises(RuntimeError, match="do not nest"):
            with cuvil.profile():
                pass


def test_without_instrumentation_calls_are_still_timed():
    pb = cuvil.PipelineBuilder()
    pb.disable("cuvil-instrument-kernels")

    @cuvil.jit(pipeline=pb)
    def f(x):
        return np.tanh(x) * 2.0

    x = np.linspace(-1, 1, 64, dtype=np.float32)
    np.testing.assert_allclose(f(x), np.tanh(x) * 2.0, rtol=1e-6)
    assert not f._last_compiled.compiled.instrumented
    assert f._last_compiled.compiled.kernels == []
    with cuvil.profile() as prof:
        f(x)
    assert [(r.kind, r.count) for r in prof.key_averages()] == [("python", 1)]


def test_kernels_of_a_function_loaded_from_the_disk_cache(tmp_path):
    script = tmp_path / "profile_mlp.py"
    script.write_text(
        f"""
import sys
sys.path.insert(0, {str(EXAMPLES_DIR)!r})
import cuvil, mlp
inputs = mlp.make_inputs()
mlp.mlp(*inputs)
with cuvil.profile() as prof:
    mlp.mlp(*inputs)
record = cuvil.compilations()[-1]
print(record.from_cache, sorted(r.location for r in prof.key_averages() if r.kind == "cpu_kernel"))
"""
    )
    env = subprocess_env(CUVIL_CACHE_DIR=str(tmp_path / "cache"))
    first = run_python([str(script)], env=env)
    second = run_python([str(script)], env=env)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert first.stdout.startswith("False ") and second.stdout.startswith("True ")
    assert first.stdout.split(" ", 1)[1] == second.stdout.split(" ", 1)[1]
    assert "mlp.py:14" in second.stdout


def test_cli_profile_writes_a_trace_and_prints_the_table(tmp_path):
    out = tmp_path / "mlp.json"
    result = run_python(["-m", "cuvil", "profile", MLP_FILE, "--runs", "2", "-o", str(out)])
    assert result.returncode == 0, result.stderr
    assert "2 run(s)" in result.stdout and "linalg.matmul" in result.stdout
    assert f"wrote chrome trace to {out}" in result.stdout
    events = json.loads(out.read_text())["traceEvents"]
    calls = [e for e in events if e.get("cat") == "python" and e["ph"] == "X"]
    assert len(calls) == 2
    folded = tmp_path / "mlp.folded"
    result = run_python(["-m", "cuvil", "profile", MLP_FILE, "-o", str(folded)])
    assert result.returncode == 0 and ";mlp;" in folded.read_text()


def test_cli_profile_errors(tmp_path):
    missing = run_python(["-m", "cuvil", "profile", str(tmp_path / "nope.py")])
    assert missing.returncode == 2 and "no such file" in missing.stderr
    no_out = run_python(["-m", "cuvil", "profile", MLP_FILE, "--format", "folded"])
    assert no_out.returncode == 2 and "--format needs -o OUT" in no_out.stderr
    nothing = tmp_path / "nothing.py"
    nothing.write_text("print('no compiled code here')\n")
    empty = run_python(["-m", "cuvil", "profile", str(nothing)])
    assert empty.returncode == 1 and "no compiled code ran" in empty.stderr
    failing = tmp_path / "failing.py"
    failing.write_text("raise ValueError('model file is broken')\n")
    broken = run_python(["-m", "cuvil", "profile", str(failing)])
    assert broken.returncode == 1
    assert "model file is broken" in broken.stderr and f'{failing}", line 1' in broken.stderr


def test_nvtx_ranges_wrap_kernels_for_an_injected_tool(tmp_path):
    """NVTX loads the tool named by NVTX_INJECTION64_PATH, as Nsight Systems does."""
    import os
    import pathlib

    from conftest import REPO_ROOT

    build = pathlib.Path(os.environ.get("CUVIL_BUILD_DIR", REPO_ROOT / "build"))
    tool = build / "lib" / "libCuvilNvtxRecordingTool.so"
    if not tool.exists():
        pytest.skip(f"NVTX test tool not built ({tool}): nvtx3 headers were not found")
    log = tmp_path / "nvtx.log"
    env = subprocess_env(NVTX_INJECTION64_PATH=str(tool), CUVIL_NVTX_LOG=str(log))
    result = run_python([MLP_FILE], env=env)
    assert result.returncode == 0, result.stderr
    lines = log.read_text().splitlines()
    pushes = [l for l in lines if l.startswith("push ")]
    # One range per kernel: the two GEMMs with their fused epilogues.
    assert len(pushes) == 2 and lines.count("pop") == 2
    assert all(l.startswith("push cuvil mlp: ") for l in pushes)  # domain, function
    assert "linalg.matmul" in pushes[0] and "erf" in pushes[0]
    # Ranges close in order and carry distinct IR op ids as payload.
    assert [l.startswith("push") for l in lines] == [True, False] * 2
    assert len({l.rsplit("|", 1)[1] for l in pushes}) == 2
    # Without a tool nothing is injected: the same run writes no log.
    quiet = tmp_path / "quiet.log"
    result = run_python([MLP_FILE], env=subprocess_env(CUVIL_NVTX_LOG=str(quiet)))
    assert result.returncode == 0 and not quiet.exists()


_NAMED_MODULE = """
func.func @graph(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = cuvil.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(#gemm)
  %1 = cuvil.relu %0 : tensor<8x8xf32> loc(#act)
  return %1 : tensor<8x8xf32>
}
#gemm = loc("node_7"("model.onnx":0:0))
#act = loc("relu_3"("model.onnx":0:0))
"""


def test_model_node_names_reach_kernels_profiles_and_traces(tmp_path):
    """A NameLoc (an imported model's node name) survives to the profile's kernel rows."""
    from cuvil import _cuvil

    compiled = _cuvil.compile(_NAMED_MODULE, "graph", enable_fusion=False)
    nodes = [source["name"] for _name, _loc, source in compiled.kernels]
    assert "node_7" in nodes and "relu_3" in nodes
    x = np.ones((8, 8), np.float32)
    out = np.empty((8, 8), np.float32)
    with cuvil.profile() as prof:
        compiled([x, x], [out])
    np.testing.assert_allclose(out, 8.0)
    rows = {row.node: row for row in prof.key_averages(kind="cpu_kernel")}
    assert {"node_7", "relu_3"} <= set(rows)
    assert rows["node_7"].location == "model.onnx:0:0"
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert any(e.get("args", {}).get("node") == "node_7" for e in events)
