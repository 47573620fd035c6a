"""Cuvil in one process with PyTorch, Triton, JAX, TensorFlow and ONNX Runtime, in every order.

Each case runs in its own interpreter: the framework is imported before Cuvil,
after ``import cuvil`` but before Cuvil has JIT-compiled anything, or after a
JIT compilation (Cuvil's LLVM/MLIR then loaded); both then do real work. A
crash (a signal) is reported with the order that caused it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest
from conftest import subprocess_env

# Real work for each framework once both are loaded: a result we can check.
_FRAMEWORK_WORK = {
    "torch": "import torch\nassert float(torch.ones(3).add(1).sum()) == 6.0",
    "triton": "import triton, triton.language as tl\nassert triton.__version__",
    "jax": "import jax.numpy as jnp\nassert float(jnp.arange(4.0).sum()) == 6.0",
    "tensorflow": "import tensorflow as tf\nassert float(tf.reduce_sum(tf.ones(3) + 1)) == 6.0",
    "onnxruntime": (
        "import onnxruntime as ort\nassert 'CPUExecutionProvider' in ort.get_available_providers()"
    ),
}

_IMPORT_CUVIL = "import cuvil, numpy as np"
_JIT = textwrap.dedent(
    """
    @cuvil.jit
    def _affine(x, w):
        return np.tanh(x @ w) + 1.0
    _x, _w = np.ones((4, 3), np.float32), np.full((3, 2), 0.5, np.float32)
    np.testing.assert_allclose(_affine(_x, _w), np.tanh(_x @ _w) + 1.0, rtol=1e-5)
    assert cuvil.last_fallback_reason(_affine) is None, cuvil.last_fallback_reason(_affine)
    """
)

# order -> the script's steps, with {work} standing for the framework's work.
_ORDERS = {
    "framework-first": [None, _IMPORT_CUVIL, _JIT],
    "cuvil-first-before-jit": [_IMPORT_CUVIL, None, _JIT],
    "cuvil-jit-then-framework": [_IMPORT_CUVIL, _JIT, None],
}

# Every pair must work. Triton and TensorFlow imported after a JIT compilation crashed until
# compiled code was loaded privately, and TensorFlow imported first until the extension was
# loaded with RTLD_DEEPBIND.


def _script(framework: str, order: str) -> str:
    steps = [_FRAMEWORK_WORK[framework] if step is None else step for step in _ORDERS[order]]
    return "\n".join(steps) + "\nprint('ok')\n"


def _cases():
    for framework in _FRAMEWORK_WORK:
        for order in _ORDERS:
            yield pytest.param(framework, order, id=f"{framework}-{order}")


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


@pytest.mark.parametrize("framework, order", list(_cases()))
def test_cuvil_and_framework_share_a_process(framework, order, tmp_path):
    # A fresh disk cache: Cuvil's code must really be compiled in this process.
    env = subprocess_env(CUVIL_CACHE_DIR=str(tmp_path / "cache"), TF_CPP_MIN_LOG_LEVEL="3")
    run = subprocess.run(
        [sys.executable, "-c", _script(framework, order)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), (
        f"Cuvil with {framework} ({order}) failed: {_describe(run.returncode)}\n"
        f"--- stderr (last 3000 characters) ---\n{run.stderr[-3000:]}"
    )
