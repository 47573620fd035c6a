"""``cuvil trace`` and the profiler bindings: summaries, conversions, errors, the recorder."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest
from conftest import REPO_ROOT, run_python

FIXTURES = REPO_ROOT / "tests" / "profiler" / "fixtures"
GOLDEN = REPO_ROOT / "tests" / "profiler" / "golden"
ORT = str(FIXTURES / "ort_profile.json")
PYTORCH = str(FIXTURES / "pytorch_profile.json")


def cuvil_trace(*args):
    return run_python(["-m", "cuvil", "trace", *args])


@pytest.fixture(scope="module")
def profiler():
    from cuvil._jit import _extension

    return _extension().profiler


def test_summary_of_an_onnx_runtime_profile():
    result = cuvil_trace(ORT, "--top", "3")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{ORT}: 20 events on 1 threads/streams over ")
    header = lines[1].split()
    assert header[:2] == ["Name", "Kind"] and "Self" in header and "P99" in header
    assert len(lines) == 2 + 3 + 1 and lines[-1] == "(5 more rows)"  # 4 session spans, 4 nodes
    # Session-level spans enclose the nodes, so they come first by total time.
    assert lines[2].split()[0] in {"model_run", "session_initialization"}


def test_per_kernel_summary_of_a_pytorch_profile():
    result = cuvil_trace(PYTORCH, "--kind", "gpu_kernel", "--kind", "memcpy", "--top", "0")
    assert result.returncode == 0, result.stderr
    rows = result.stdout.splitlines()[2:]
    assert len(rows) == 3
    assert rows[0].startswith("ampere_sgemm_32x32_sliced1x4_tn")
    assert "gpu_kernel" in rows[0] and " 1 " in rows[0]
    assert any(row.startswith("Memcpy DtoH") and "memcpy" in row for row in rows)


def test_convert_to_every_format_and_read_back(tmp_path, profiler):
    for name, fmt in (
        ("out.json", "chrome"),
        ("out.folded", "folded"),
        ("out.speedscope.json", "speedscope"),
    ):
        target = tmp_path / name
        result = cuvil_trace(PYTORCH, "-o", str(target))
        assert result.returncode == 0, result.stderr
        assert f"wrote {fmt} to {target}" in result.stderr
        back = profiler.read_trace(str(target))
        assert back.event_count > 0
    chrome = json.loads((tmp_path / "out.json").read_text())
    phases = {event["ph"] for event in chrome["traceEvents"]}
    assert {"X", "M", "s", "f"} <= phases
    speedscope = json.loads((tmp_path / "out.speedscope.json").read_text())
    assert speedscope["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    assert speedscope["profiles"][0]["type"] == "evented"


def test_folded_to_stdout_matches_the_golden_tree(profiler):
    result = cuvil_trace(str(GOLDEN / "model.folded"), "--format", "folded")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / "model.refolded").read_text()
    tree = profiler.read_trace(str(GOLDEN / "model.folded")).call_tree()
    assert tree == (GOLDEN / "model.tree").read_text()


def test_tree_and_diff(tmp_path):
    result = cuvil_trace(
        str(GOLDEN / "model_faster.folded"),
        "--diff",
        str(GOLDEN / "model.folded"),
        "--tree",
        "--depth",
        "1",
    )
    assert result.returncode == 0, result.stderr
    assert "main total=995 self=0\n" in result.stdout
    assert "  forward" not in result.stdout.split("difference")[0]
    assert result.stdout.endswith((GOLDEN / "model.diff").read_text())


def test_malformed_and_truncated_traces_give_clear_errors(tmp_path):
    text = pathlib.Path(ORT).read_text()
    truncated = tmp_path / "cut.json"
    truncated.write_text(text[:1000])
    result = cuvil_trace(str(truncated))
    assert result.returncode == 1
    assert f"cuvil trace: error: {truncated}:5: (byte 1000) truncated JSON" in result.stderr
    assert "Traceback" not in result.stderr

    folded = tmp_path / "bad.folded"
    folded.write_text("a;b 3\na;b;c\n")
    result = cuvil_trace(str(folded))
    assert result.returncode == 1
    assert f"{folded}:2: (byte 6) line without a count" in result.stderr

    missing = cuvil_trace(str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_help_lists_the_trace_command():
    result = run_python(["-m", "cuvil", "--help"])
    assert result.returncode == 0
    assert "trace" in result.stdout and "compile" in result.stdout


def test_recorder_builds_a_trace_with_stacks_and_flows(profiler, tmp_path):
    profiler.set_recording(True)
    try:
        call = profiler.intern("forward")
        op = profiler.intern("cuvil.matmul")
        loc = profiler.intern("model.py:3:9")
        stack = profiler.intern_stack([("<module>", "run.py", 1), ("main", "run.py", 4)])
        correlation = profiler.new_correlation()
        start = profiler.now_ns()
        profiler.record(op, start + 10, start + 60, "cpu_kernel", 5, loc, stack, correlation)
        profiler.record(call, start, start + 100, "python", stack=stack, correlation=correlation)
        assert profiler.recorded_count() >= 2
    finally:
        profiler.set_recording(False)
    trace = profiler.take_trace("pytest")
    events = trace.events()
    assert [e["name"] for e in events[:2]] == ["forward", "cuvil.matmul"]
    kernel = events[1]
    assert kernel["op_id"] == 5 and kernel["loc"] == "model.py:3:9"
    assert kernel["stack"] == [("<module>", "run.py", 1), ("main", "run.py", 4)]
    assert trace.flows() == [(0, 1)]
    rows = trace.op_table(kinds=["cpu_kernel"])
    assert rows[0]["name"] == "cuvil.matmul" and rows[0]["total_ns"] == 50
    assert trace.call_tree().splitlines()[2].strip() == "forward total=100 self=50"
    # Recording off: nothing is kept.
    profiler.record(op, 0, 1)
    assert profiler.take_trace().event_count == 0


def test_generated_onnx_runtime_profile(tmp_path):
    """A fresh profile from the installed onnxruntime, through cuvil trace."""
    pytest.importorskip("onnx", reason="onnx is not installed in this environment")
    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed in this environment")
    out = tmp_path / "ort.json"
    made = subprocess.run(
        [sys.executable, str(FIXTURES / "make_ort_profile.py"), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    result = cuvil_trace(str(out), "--kind", "cpu_kernel", "--top", "0")
    assert result.returncode == 0, result.stderr
    names = {row.split()[0] for row in result.stdout.splitlines()[2:]}
    assert {
        "fc/MatMul_kernel_time",
        "fc/Add_kernel_time",
        "act/Relu_kernel_time",
        "head/Softmax_kernel_time",
    } <= names


def test_nsight_systems_sqlite_export(tmp_path):
    """A hand-made file following `nsys export --type sqlite`'s schema."""
    import sqlite3

    path = tmp_path / "report.sqlite"
    gtid = (77 << 24) | 78
    db = sqlite3.connect(path)
    db.executescript(
        f"""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'cuvil_gelu_kernel');
        CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
                                  text TEXT, globalTid INTEGER, domainId INTEGER);
        INSERT INTO NVTX_EVENTS VALUES (100, 900, 59, 'cuvil.gelu', {gtid}, 0);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
            eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
        INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (200, 300, 1, {gtid}, 9, 1),
                                                       (400, 500, 1, {gtid}, 10, 1);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
            deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER,
            globalPid INTEGER, shortName INTEGER);
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (350, 650, 0, 1, 13, 9, {77 << 24}, 2),
                                                      (660, 760, 0, 1, 13, 10, {77 << 24}, 2);
        """
    )
    db.commit()
    db.close()
    result = cuvil_trace(str(path), "--kind", "gpu_kernel", "--tree")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "2 flows" in lines[0]
    row = lines[2].split()
    assert row[:3] == ["cuvil_gelu_kernel", "gpu_kernel", "2"] and row[3] == "0.000"
    # The kernels hang under the NVTX range and the launch that ran them.
    assert "cuvil.gelu total=400 self=0" in result.stdout
    assert "  cudaLaunchKernel_v7000 total=400 self=0" in result.stdout
    assert "    cuvil_gelu_kernel total=400 self=400" in result.stdout


def test_a_real_pytorch_cpu_profile(profiler):
    """pytorch_cpu_profile.json was written by torch.profiler (record_pytorch_profile.py)."""
    trace = profiler.read_trace(str(FIXTURES / "pytorch_cpu_profile.json"))
    rows = {(r["name"], r["kind"]): r for r in trace.op_table()}
    # Two forward passes of Linear -> GELU -> Linear.
    assert rows[("aten::addmm", "cpu_kernel")]["count"] == 4
    assert rows[("aten::gelu", "cpu_kernel")]["count"] == 2
    assert rows[("aten::linear", "cpu_kernel")]["count"] == 4
    assert rows[("model_inference", "nvtx")]["count"] == 1  # record_function
    linear = rows[("aten::linear", "cpu_kernel")]
    assert linear["self_ns"] < linear["total_ns"]  # addmm runs inside it
    # with_stack=True: the Python frames nest above the ops in the call tree.
    lines = trace.call_tree().splitlines()

    def depth_of(prefix):
        line = next(l for l in lines if l.strip().startswith(prefix))
        return lines.index(line), len(line) - len(line.lstrip())

    chain = [
        depth_of(p)
        for p in (
            "nn.Module: Linear_0",
            "torch/nn/modules/linear.py(130): forward",
            "aten::linear",
            "aten::addmm",
        )
    ]
    assert chain == sorted(chain) and len({d for _, d in chain}) == 4
    # And it converts like any other trace.
    folded = trace.to_folded()
    assert any(line.split(";")[-1].startswith("aten::addmm ") for line in folded.splitlines())
