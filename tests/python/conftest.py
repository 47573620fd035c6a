"""Shared pytest setup for the Python API tests: import path, isolated disk cache, helpers."""

from __future__ import annotations

import importlib.util
import inspect
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

#: Running under `make test-asan` (the ASan runtime preloaded into Python): memory
#: figures then include ASan's shadow memory and quarantine.
UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON_PACKAGE_DIR = REPO_ROOT / "embedded_python"
EXAMPLES_DIR = REPO_ROOT / "resources" / "examples"
EXAMPLE_NAMES = ("matmul_inference", "mlp", "transformer_block")

if str(PYTHON_PACKAGE_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_PACKAGE_DIR))

# Every test process (and subprocess) gets its own compilation cache, never ~/.cache/cuvil.
_SESSION_CACHE = tempfile.mkdtemp(prefix="cuvil-test-cache-")
os.environ["CUVIL_CACHE_DIR"] = _SESSION_CACHE
os.environ.pop("CUVIL_DISABLE_DISK_CACHE", None)
os.environ.pop("CUVIL_CAPTURE_SNAPSHOTS", None)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


# A model file (the CLI's and the Workbench's convention) whose one op no importer supports.
UNSUPPORTED_TORCH_MODEL = """\
import torch

class Scan(torch.nn.Module):
    def forward(self, x):
        return torch.cumprod(x, 0)

model, example_inputs = Scan(), (torch.randn(3),)
"""


def caller_line() -> int:
    """The line number of the statement that calls this function."""
    return inspect.currentframe().f_back.f_lineno


def line_of(marker: str, path: str) -> int:
    """The 1-based number of the first line of ``path`` containing ``marker``."""
    with open(path, encoding="utf-8") as source:
        for number, text in enumerate(source, start=1):
            if marker in text:
                return number
    raise AssertionError(f"marker {marker!r} not found in {path}")


def subprocess_env(**overrides: str) -> dict:
    """Environment for a child Python that imports this checkout's cuvil."""
    env = dict(os.environ)
    paths = [str(PYTHON_PACKAGE_DIR)] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p
    ]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(overrides)
    return env


def run_python(args, env=None, cwd=None, timeout=600) -> subprocess.CompletedProcess:
    """Run this interpreter (the project's virtual environment) with ``args``."""
    return subprocess.run(
        [sys.executable, *args],
        env=env or subprocess_env(),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def load_example(name: str):
    """Import ``resources/examples/<name>.py`` as a module."""
    path = EXAMPLES_DIR / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"cuvil_example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True, scope="module")
def fresh_compilation_history():
    """Each test module starts with an empty ``cuvil.compilations()``: tests count new
    records from its length, which stops growing once a module before them (the c
    target's op table) filled the history to its bound."""
    from cuvil import _jit

    with _jit._registry_lock:
        _jit._registry.clear()
    yield


@pytest.fixture
def rng():
    """A deterministic random generator per test."""
    import numpy as np

    return np.random.default_rng(0)


# Frameworks round every float16 intermediate; Cuvil computes float16 models in float32.
FLOAT16_TOLERANCE = {"rtol": 1e-2, "atol": 1e-2}


def assert_outputs_match_in_their_dtypes(got, expected) -> None:
    """Each output has the framework's dtype and shape, and its values within float16
    tolerances (``expected``: the framework's arrays or tensors, converted with NumPy)."""
    import numpy as np

    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, g.shape, e.dtype, e.shape)
        np.testing.assert_allclose(g.astype(np.float32), e.astype(np.float32), **FLOAT16_TOLERANCE)


def check_float16_model(module, reference, shape_of_size, sizes=(1, 4)):
    """``module`` (float16 inputs) holds no float16 in its IR, compiles, and matches
    ``reference`` (float16 array -> the framework's outputs) at each size; the compiled model."""
    import numpy as np

    assert "f16" not in module.text  # computed in float32 inside
    compiled = module.compile()
    rng = np.random.default_rng(0)
    for size in sizes:
        x = rng.standard_normal(shape_of_size(size)).astype(np.float16)
        assert_outputs_match_in_their_dtypes(compiled(x), reference(x))
    return compiled
