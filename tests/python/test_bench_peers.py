"""benchmarks/bench_peers.py on its smallest setting: the output format, JSON and a missing peer."""

from __future__ import annotations

import json

import numpy as np
from conftest import REPO_ROOT, run_python

SCRIPT = str(REPO_ROOT / "benchmarks" / "bench_peers.py")


def test_numpy_row_markdown_json_and_a_missing_peer(tmp_path):
    out = tmp_path / "peers.json"
    result = run_python(
        [SCRIPT, "--only", "matmul_small", "--rounds", "1", "--batch-s", "0.001"]
        + ["--peers", "numpy,iree", "--no-first-call", "--markdown", "--json", str(out)]
    )
    assert result.returncode == 0, result.stderr
    assert "matmul_small: matmul 64×64 · 64×64" in result.stdout
    assert "| workload | numpy | iree |" in result.stdout
    data = json.loads(out.read_text())
    assert data["environment"]["threads"] == 2
    (row,) = data["rows"]
    numpy_result = row["peers"]["numpy"]
    assert numpy_result["min_ms"] <= numpy_result["ms"] <= numpy_result["max_ms"]
    assert np.isclose(numpy_result["gflops"], row["flops"] / numpy_result["ms"] / 1e6)
    # float32 against the float64 product of 64-term sums: a rounding-sized difference.
    assert 0 < numpy_result["max_error"] < 1e-4
    # The project's environment has no IREE (make bench-peers adds it): a row, not a crash.
    assert row["peers"]["iree"]["error"].startswith("not installed")
