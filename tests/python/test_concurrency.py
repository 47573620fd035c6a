"""Compiled functions called and compiled from several Python threads at once."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import cuvil

THREADS = 8


def _run_together(fn, count: int = THREADS):
    """Run ``fn(i)`` on ``count`` threads released at the same moment; their results."""
    barrier = threading.Barrier(count)

    def start(i):
        barrier.wait()
        return fn(i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(start, range(count)))


def test_one_compiled_function_called_from_many_threads(tmp_path, monkeypatch):
    monkeypatch.setenv("CUVIL_CACHE_DIR", str(tmp_path))

    @cuvil.jit
    def mlp(x, w1, w2):
        return np.tanh(x @ w1) @ w2

    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((64, 128)).astype(np.float32)
    w2 = rng.standard_normal((128, 16)).astype(np.float32)
    inputs = [rng.standard_normal((32, 64)).astype(np.float32) for _ in range(THREADS)]
    mlp(inputs[0], w1, w2)  # compiled once, before the threads

    def call(i):
        return [mlp(inputs[i], w1, w2) for _ in range(20)]

    for i, results in enumerate(_run_together(call)):
        expected = np.tanh(inputs[i] @ w1) @ w2
        for got in results:
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert cuvil.last_fallback_reason(mlp) is None


def test_one_function_compiled_from_many_threads_at_once(tmp_path, monkeypatch, capfd):
    """The first call races in every thread: one result each, right, and nothing on stderr."""
    monkeypatch.setenv("CUVIL_CACHE_DIR", str(tmp_path))

    @cuvil.jit
    def affine(x, w, b):
        return np.maximum(x @ w + b, 0.0)

    rng = np.random.default_rng(1)
    w = rng.standard_normal((24, 40)).astype(np.float32)
    b = rng.standard_normal(40).astype(np.float32)
    xs = [rng.standard_normal((9, 24)).astype(np.float32) for _ in range(THREADS)]
    results = _run_together(lambda i: affine(xs[i], w, b))
    for x, got in zip(xs, results, strict=True):
        np.testing.assert_allclose(got, np.maximum(x @ w + b, 0.0), rtol=1e-5, atol=1e-5)
    assert cuvil.last_fallback_reason(affine) is None
    captured = capfd.readouterr()
    assert "error" not in captured.err.lower(), captured.err
    # No cache entry is left half-written under a temporary name.
    leftovers = [p.name for p in tmp_path.rglob("*") if p.is_file() and ".tmp" in p.name]
    assert not leftovers, leftovers


def test_distinct_functions_compiled_from_many_threads(tmp_path, monkeypatch):
    monkeypatch.setenv("CUVIL_CACHE_DIR", str(tmp_path))
    x = np.linspace(-2.0, 2.0, 257, dtype=np.float32).reshape(1, 257)

    def compile_and_call(i):
        scale = np.float32(i + 1)

        @cuvil.jit
        def scaled(a):
            return np.exp(a * scale) - a / scale

        return scaled(x), scaled

    for i, (got, fn) in enumerate(_run_together(compile_and_call)):
        scale = np.float32(i + 1)
        np.testing.assert_allclose(got, np.exp(x * scale) - x / scale, rtol=1e-5, atol=1e-5)
        assert cuvil.last_fallback_reason(fn) is None


def test_calls_release_the_gil(tmp_path, monkeypatch):
    """Another Python thread runs while a call is inside compiled code.

    With the GIL held, no other thread could take a timestamp between the
    call's start and end except within one switch interval of them.
    """
    monkeypatch.setenv("CUVIL_CACHE_DIR", str(tmp_path))

    @cuvil.jit
    def heavy(a, b):
        return (((a @ b) @ b) @ b).sum()

    # Long enough (about 20-60 ms on two cores) that the window inside the call, a switch
    # interval away from either end, is wide even when another process shares the cores.
    a = np.ones((1024, 1024), np.float32)
    heavy(a, a)
    span = []
    done = threading.Event()

    def call():
        start = time.perf_counter()
        heavy(a, a)
        span.extend((start, time.perf_counter()))
        done.set()

    stamps = []
    thread = threading.Thread(target=call)
    thread.start()
    while not done.is_set():
        stamps.append(time.perf_counter())
    thread.join()
    start, end = span
    margin = 2 * sys.getswitchinterval()
    inside = [t for t in stamps if start + margin < t < end - margin]
    assert end - start <= 2 * margin or inside, (end - start, len(stamps))
