"""The Workbench worker opens model files: a file declaring a PyTorch, JAX or TensorFlow model.

Each test drives ``cuvil._worker`` through its protocol (``run`` then
``execute``) in a process of its own, as the Workbench does, and checks that
the declared model is compiled through the CLI's code path, run on its example
inputs and compared with the framework's own output.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from conftest import EXAMPLES_DIR, UNSUPPORTED_TORCH_MODEL, line_of, run_python

MODELS_DIR = EXAMPLES_DIR / "models"

# Runs the file given as argv[1] in a worker, executes its last compilation,
# and prints the protocol's messages after a marker.
_DRIVER = textwrap.dedent(
    """
    import io, sys
    from cuvil import _worker
    out = io.StringIO()
    worker = _worker.Worker(out)
    worker.install_hooks()
    worker.run(sys.argv[1])
    if worker.recorded:
        worker.execute({"index": len(worker.recorded) - 1})
    sys.stdout.write("MESSAGES\\n" + out.getvalue())
    """
)


def _worker_messages(path) -> list[dict]:
    result = run_python(["-c", _DRIVER, str(path)])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("MESSAGES\n", 1)[1].splitlines()
    return [json.loads(line) for line in lines]


def _only(messages: list[dict], kind: str) -> dict:
    (message,) = [m for m in messages if m["type"] == kind]
    return message


def test_a_torch_model_file_is_compiled_executed_against_pytorch_and_named():
    path = MODELS_DIR / "torch_cnn.py"
    messages = _worker_messages(path)
    assert [m["type"] for m in messages] == ["started", "compilation", "finished", "executed"]
    assert messages[2]["ok"]
    compilation = _only(messages, "compilation")
    assert compilation["function"] == "TinyCNN"
    assert compilation["source"] == f"{path}:{line_of('class TinyCNN', str(path))}"
    assert compilation["inputs"] == [{"dtype": "float32", "shape": [1, 3, 32, 32]}]
    assert compilation["snapshots"], "the per-pass snapshots of the Pass explorer"
    # Ops carry the FX node name around the nn.Module path and the forward's line.
    forward_line = line_of("x = self.features(x)", str(path))
    assert f'"convolution"("features.conv1"("{path}":{forward_line}:' in compilation["input_ir"]
    executed = _only(messages, "executed")
    assert executed["outputs"] == [[1, 10]]
    assert executed["max_error"] < 1e-4  # against PyTorch's own output
    assert executed["reference"] == "PyTorch"
    with open(executed["trace"], encoding="utf-8") as trace:
        events = json.load(trace)["traceEvents"]
    nodes = {e["args"].get("node") for e in events if e.get("cat") == "cpu_kernel"}
    assert "features.conv1/convolution" in nodes  # profile rows name module and FX node


@pytest.mark.parametrize(
    "name, function, framework",
    [("jax_mlp", "mlp", "JAX"), ("tf_mlp", "classify", "TensorFlow")],
)
def test_jax_and_tensorflow_model_files_execute_against_their_framework(name, function, framework):
    messages = _worker_messages(MODELS_DIR / f"{name}.py")
    assert [m["type"] for m in messages] == ["started", "compilation", "finished", "executed"]
    assert _only(messages, "compilation")["function"] == function
    executed = _only(messages, "executed")
    assert executed["outputs"] == [[8, 4]]
    assert executed["max_error"] < 1e-5
    assert executed["reference"] == framework


def test_a_jit_script_and_a_declared_model_are_both_reported(tmp_path):
    script = tmp_path / "both.py"
    script.write_text(
        textwrap.dedent(
            """
            import numpy as np
            import torch
            import cuvil

            @cuvil.jit
            def double(x):
                return x * 2.0

            double(np.ones(4, np.float32))
            model = torch.nn.Linear(4, 3)
            example_inputs = (torch.randn(2, 4),)
            """
        )
    )
    messages = _worker_messages(script)
    functions = [m["function"] for m in messages if m["type"] == "compilation"]
    assert functions == ["double", "Linear"]  # the script's own compilation first
    assert _only(messages, "executed")["max_error"] < 1e-5


def test_a_model_that_fails_to_import_is_reported_at_its_node_and_line(tmp_path):
    script = tmp_path / "scan.py"
    script.write_text(UNSUPPORTED_TORCH_MODEL)
    messages = _worker_messages(script)
    assert [m["type"] for m in messages] == ["started", "exception", "finished"]
    exception = _only(messages, "exception")
    assert exception["exc_type"] == "UnsupportedConstructError"
    assert "aten.cumprod (FX node 'cumprod')" in exception["message"]
    assert exception["file"] == str(script)
    assert exception["line"] == line_of("torch.cumprod", str(script))
    assert not messages[-1]["ok"]


def test_a_bad_declaration_names_the_file_and_the_convention(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("def cuvil_model():\n    return 42\n")
    exception = _only(_worker_messages(script), "exception")
    assert exception["exc_type"] == "DeclarationError"
    assert f"{script}: cuvil_model() returned 'int'" in exception["message"]
    assert "(model, example_inputs)" in exception["message"]
