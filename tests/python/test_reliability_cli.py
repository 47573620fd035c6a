"""Hostile inputs and bad arguments at the command line: deep stacks, bytes that are not
UTF-8, numbers too large for their type, exit codes and output paths (issue 16)."""

from __future__ import annotations

import json
import textwrap

from conftest import run_python

DEPTH = 30_000


def cuvil_cli(*args):
    return run_python(["-m", "cuvil", *args], timeout=300)


def deep_folded(tmp_path, name="deep.folded", weight=5):
    path = tmp_path / name
    path.write_text(";".join(f"f{i}" for i in range(DEPTH)) + f" {weight}\n")
    return str(path)


def test_tree_and_diff_of_a_30000_frame_stack(tmp_path):
    deep = deep_folded(tmp_path)
    faster = deep_folded(tmp_path, "faster.folded", weight=3)
    result = cuvil_cli("trace", deep, "--tree", "--diff", faster)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"[depth {DEPTH}] f{DEPTH - 1} total=5 self=5" in result.stdout
    assert f"[depth {DEPTH}] f{DEPTH - 1} 3 -> 5 (+2, slower)" in result.stdout


def test_reader_message_quoting_invalid_utf8_reaches_the_user(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[{"name":"a","ph":"X","ts":1,"dur":2, \xff\xfe}]')
    result = cuvil_cli("trace", str(bad))
    assert result.returncode == 1
    message = result.stderr.strip()
    assert message.startswith(f"cuvil trace: error: {bad}:1: (byte "), message
    assert "\\xff" in message, message


def test_trace_error_str_is_never_empty(tmp_path):
    from cuvil import _profiler

    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[{"name":"a","ph":"X","ts":1,"dur":2, \xff\xfe}]')
    try:
        _profiler.read_trace(str(bad))
    except _profiler.trace_error_type() as error:
        assert str(error).startswith(f"{bad}:1:") and "\\xff" in str(error)
    else:
        raise AssertionError("a corrupt trace was read")


def test_names_that_are_not_utf8_are_shown_with_replacement(tmp_path):
    bad = tmp_path / "names.folded"
    bad.write_bytes(b"main;\xff\xfeop 5\n")
    result = cuvil_cli("trace", str(bad), "--tree")
    assert result.returncode == 0, result.stderr
    assert "\ufffd\ufffdop total=5 self=5" in result.stdout
    from cuvil import _profiler

    trace = _profiler.read_trace(str(bad))
    names = {row["name"] for row in trace.op_table()}
    assert "\ufffd\ufffdop" in names
    assert {event["name"] for event in trace.events()} == {"main", "\ufffd\ufffdop"}
    assert "\ufffd\ufffdop" in trace.to_folded()


def test_speedscope_export_of_a_line_beyond_uint32(tmp_path):
    trace = tmp_path / "big.json"
    event = {"name": "op", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1}
    event["args"] = {"loc": "model.py:99999999999:1"}
    trace.write_text(json.dumps({"traceEvents": [event]}))
    out = tmp_path / "x.speedscope.json"
    result = cuvil_cli("trace", str(trace), "-o", str(out))
    assert result.returncode == 0, result.stderr
    frames = json.loads(out.read_text())["shared"]["frames"]
    assert any(frame.get("file") == "model.py:99999999999:1" for frame in frames), frames


def write_script(tmp_path, body: str):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    return str(script)


def test_exit_status_beyond_255_is_not_success(tmp_path):
    for code in (256, 512, -256):
        script = write_script(tmp_path, f"import sys\nsys.exit({code})\n")
        result = cuvil_cli("compile", script)
        assert result.returncode == 1, (code, result.stderr)
        assert f"exited with status {code}" in result.stderr
    script = write_script(tmp_path, "import sys\nsys.exit(3)\n")
    assert cuvil_cli("compile", script).returncode == 3


def test_profile_negative_top_is_refused(tmp_path):
    script = write_script(tmp_path, "print('ran')\n")
    result = cuvil_cli("profile", script, "--top", "-1")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "cuvil profile: error: --top takes a count of rows" in result.stderr
    assert "ran" not in result.stderr + result.stdout


def test_unwritable_output_is_refused_before_the_script_runs(tmp_path):
    marker = tmp_path / "ran"
    script = write_script(tmp_path, f"open({str(marker)!r}, 'w').close()\n")
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    for out in (tmp_path, not_a_folder / "trace.json"):
        for command in ("profile", "compile"):
            result = cuvil_cli(command, script, "-o", str(out))
            assert result.returncode == 2, (command, out, result.stderr)
            assert "Traceback" not in result.stderr
            assert f"cannot write {out}: " in result.stderr, result.stderr
            assert not marker.exists(), (command, out)
    folded = tmp_path / "in.folded"
    folded.write_text("a;b 1\n")
    result = cuvil_cli("trace", str(folded), "-o", str(not_a_folder / "x.json"))
    assert result.returncode == 2 and "cannot write" in result.stderr, result.stderr
