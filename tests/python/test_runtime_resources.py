"""Bounded compilation history, unloading of dropped code, failed allocations in compiled code."""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import gc, numpy as np, cuvil

    def mapped_libraries():
        # Field 6 is the path: compiled code is loaded from an in-memory
        # file, "/memfd:cuvil_<function> (deleted)", one per library.
        with open("/proc/self/maps") as maps:
            fields = [line.split() for line in maps]
        paths = {f[5] for f in fields if len(f) > 5 and "cuvil" in f[5]}
        assert not any(p.startswith("/tmp") for p in paths), paths  # never a reusable path
        inodes = {f[4] for f in fields if len(f) > 5 and f[5].startswith("/memfd:cuvil_")}
        return inodes

    a = np.ones((4, 4), np.float32)
    kept = cuvil.jit(lambda x: x * 0.5)
    kept(a)
    for i in range(12):
        f = cuvil.jit(eval(f"lambda x: x * {i + 2}.0 + 1.0"))
        assert float(f(a)[0, 0]) == i + 3.0
        del f
    gc.collect()
    history = cuvil.compilations()
    print(len(history), len(mapped_libraries()))
    assert float(kept(a)[0, 0]) == 0.5
    """
)


def test_history_is_bounded_and_dropped_code_is_unloaded(tmp_path):
    env = dict(os.environ, CUVIL_COMPILATION_HISTORY="3", CUVIL_DISABLE_DISK_CACHE="1")
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    history, mapped = (int(word) for word in done.stdout.split())
    assert history == 3
    # The three records in the history and the function still alive keep
    # their code loaded; the other ten libraries were closed.
    assert 1 <= mapped <= 4, f"{mapped} compiled libraries still mapped"


def test_failed_allocation_in_compiled_code_raises_memory_error():
    import numpy as np

    import cuvil

    f = cuvil.jit(lambda a, b: (a @ b).sum())
    a = np.ones((1 << 20, 8), np.float32)
    b = np.ones((8, 1 << 20), np.float32)
    # The (2^20 x 2^20) product is 4 TiB: its buffer cannot be allocated (the
    # arena also holds b's copy in unaliased rows, 32 MiB: cuvil-cpu-unalias-gemm-rows).
    with pytest.raises(
        MemoryError,
        match=r"compiled function '.*' could not allocate "
        r"4398\d{9} bytes \(4096\.0 GiB\)",
    ):
        f(a, b)
    # The process and the function stay usable.
    small = np.ones((4, 8), np.float32), np.ones((8, 4), np.float32)
    assert float(f(*small)) == 128.0
