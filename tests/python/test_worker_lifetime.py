"""The Workbench's worker does not outlive the Workbench, and leaves no trace folders."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from conftest import REPO_ROOT, subprocess_env

from cuvil import _worker

WORKER = REPO_ROOT / "build" / "bin" / "cuvil-worker"

# Stands in for the Workbench: starts the worker as WorkerClient does (its own process
# group, fd 3 for replies, CUVIL_WORKBENCH_PID), asks it to run a file, then waits.
FAKE_WORKBENCH = """
import json, os, subprocess, sys, time
read, write = os.pipe()  # replies are never read; the read end stays open
if read == 3:
    read = os.dup2(read, 10)
os.dup2(write, 3)
env = dict(os.environ, CUVIL_WORKBENCH_PID=str(os.getpid()))
worker = subprocess.Popen(
    [sys.argv[1]], stdin=subprocess.PIPE, env=env, process_group=0, pass_fds=(3,)
)
worker.stdin.write(json.dumps({"cmd": "run", "file": sys.argv[2]}).encode() + b"\\n")
worker.stdin.flush()
print(worker.pid, flush=True)
time.sleep(600)
"""


USER_FILE = """
import subprocess
child = subprocess.Popen(["sleep", "300"])
with open({pids!r} + ".tmp", "w") as out:
    out.write(f"{{child.pid}}\\n")
import os
os.rename({pids!r} + ".tmp", {pids!r})
while True:
    pass
"""


def _runs(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def _wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_worker_and_its_children_end_when_the_workbench_is_killed(tmp_path):
    # `make test` builds the worker before it runs pytest: its absence is a failure.
    assert WORKER.exists(), f"cuvil-worker is not built at {WORKER}: run `make` first"
    pids = tmp_path / "pids"
    user_file = tmp_path / "loops.py"
    user_file.write_text(textwrap.dedent(USER_FILE.format(pids=str(pids))))
    workbench = subprocess.Popen(
        [sys.executable, "-c", FAKE_WORKBENCH, str(WORKER), str(user_file)],
        stdout=subprocess.PIPE,
        env=subprocess_env(),
        text=True,
    )
    try:
        worker_pid = int(workbench.stdout.readline())
        assert _wait_until(pids.exists, 120), "the user's file did not start"
        child_pid = int(pids.read_text())
        assert _runs(worker_pid) and _runs(child_pid)
        workbench.send_signal(signal.SIGKILL)
        workbench.wait()
        # Generous bounds: this checks that they end, not how fast.
        assert _wait_until(lambda: not _runs(worker_pid), 30), "the worker kept running"
        assert _wait_until(lambda: not _runs(child_pid), 30), "the user's child kept running"
    finally:
        workbench.kill()
        workbench.wait()


def test_stale_trace_folders_are_removed_and_live_ones_kept(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid now names no process
    prefix = _worker._TRACE_DIR_PREFIX
    stale = tmp_path / f"{prefix}{gone.pid}-abc"
    (stale / "nested").mkdir(parents=True)
    (stale / "nested" / "profile-1.json").write_text("[]")
    own = tmp_path / f"{prefix}{os.getpid()}-def"
    own.mkdir()
    running = tmp_path / f"{prefix}1-ghi"  # pid 1 always runs
    running.mkdir()
    other = tmp_path / "cuvil-worker-traces-notapid"
    other.mkdir()
    assert _worker.remove_stale_trace_dirs(str(tmp_path)) == [str(stale)]
    assert not stale.exists()
    assert own.exists() and running.exists() and other.exists()


def test_trace_folders_are_named_after_their_worker(tmp_path, monkeypatch):
    monkeypatch.setattr(_worker.tempfile, "tempdir", str(tmp_path))

    class Trace:
        event_count = 1

    class Profile:
        trace = Trace()

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def export_chrome_trace(self, path):
            with open(path, "w") as out:
                out.write("[]")

    class Program:
        def run(self, inputs):
            pass

    class Record:
        program = Program()

    monkeypatch.setattr("cuvil._profile.profile", lambda: Profile())
    worker = _worker.Worker(open(os.devnull, "w"))
    path = worker._profile(Record(), [], 1)
    assert os.path.basename(worker.trace_dir).startswith(f"cuvil-worker-traces-{os.getpid()}-")
    assert os.path.dirname(path) == worker.trace_dir
