"""The wasm target: a .wasm that imports nothing and an ES module, run in Node."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess

import numpy as np
import pytest
import test_ops
from target_files import (
    EXAMPLE_FUNCTIONS,
    assert_close,
    check_example_on,
    check_op_on,
    compile_file,
    example,
)

import cuvil
from cuvil.frontend import build_ir, to_ir_with_dynamic_shape

NODE = shutil.which("node") or shutil.which("nodejs")


def _node(script: str, cwd):
    """Runs ``script`` as an ES module in ``cwd`` with Node (scripts/setup.sh installs it)."""
    assert NODE, "no node on PATH: make test's set-up installs Debian's nodejs"
    (cwd / "main.mjs").write_text(script)
    return subprocess.run(
        [NODE, str(cwd / "main.mjs")], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("example_name, function", EXAMPLE_FUNCTIONS)
def test_examples_run_on_the_wasm_target(example_name, function):
    check_example_on("wasm", example_name, function)


@pytest.mark.parametrize("info, sample", test_ops.CASES)
def test_op_table_on_the_wasm_target(info, sample):
    """Every op of the op table, compiled to wasm and run in Node, against NumPy."""
    check_op_on("wasm", info, sample)


# A program of its own: reads the inputs, calls the function through the ES
# module, writes the output; and reports what the module imports and exports.
PROGRAM = """
import {{ readFileSync, writeFileSync }} from 'node:fs';
import {{ load }} from './wasm/{name}.mjs';

const bytes = readFileSync('./wasm/{name}.wasm');
const compiled = new WebAssembly.Module(bytes);
const model = await load('./wasm/{name}.wasm');
const {{ inputs }} = model.signature.{name};
const args = inputs.map((v, i) => {{
  const data = readFileSync(`in${{i}}.bin`);
  return new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
}});
const out = model.{name}(...args);
writeFileSync('out.bin', Buffer.from(out.buffer));
console.log(JSON.stringify({{
  imports: WebAssembly.Module.imports(compiled),
  exports: WebAssembly.Module.exports(compiled).map((e) => e.name),
  signature: model.signature,
  output: out.constructor.name,
}}));
"""


@pytest.mark.parametrize("example_name, function", EXAMPLE_FUNCTIONS)
def test_exported_module_runs_in_a_node_program_of_its_own(tmp_path, example_name, function):
    """The files alone, no Cuvil: a Node program imports the .mjs, which loads the .wasm;
    the module imports nothing, exports the function and its memory, and computes what
    NumPy does."""
    compile_file(tmp_path, example_name, function, "wasm", (".wasm", ".mjs"))
    namespace = example(example_name)
    inputs = namespace["make_inputs"]()
    expected = namespace["reference"](*inputs)
    for i, x in enumerate(inputs):
        np.ascontiguousarray(x, dtype=np.float32).tofile(tmp_path / f"in{i}.bin")
    run = _node(PROGRAM.format(name=function), tmp_path)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["imports"] == []
    assert {"memory", "__heap_base", f"cuvil_{function}"} <= set(report["exports"])
    assert report["output"] == "Float32Array"
    signature = report["signature"][function]
    assert [v["shape"] for v in signature["inputs"]] == [list(x.shape) for x in inputs]
    assert signature["outputs"] == [{"dtype": "float32", "shape": list(expected.shape)}]
    result = np.fromfile(tmp_path / "out.bin", dtype=np.float32).reshape(expected.shape)
    assert_close(result, expected)


MISUSE = """
import { readFileSync } from 'node:fs';
import { load } from './out/model.mjs';

const attempts = {
  count: (m) => m.model(new Float32Array(12)),
  type: (m) => m.model(new Float64Array(12), new Int32Array(4)),
  length: (m) => m.model(new Float32Array(11), new Int32Array(4)),
  array: (m) => m.model([1, 2, 3], new Int32Array(4)),
};
const report = {};
for (const source of ['default', 'bytes', 'path']) {
  const m = source === 'default' ? await load()
    : source === 'bytes' ? await load(new Uint8Array(readFileSync('./out/model.wasm')))
    : await load('./out/model.wasm');
  const x = Float32Array.from({ length: 12 }, (_, i) => i - 6);
  const k = Int32Array.from([1, 2, 3, 4]);
  const [y, z] = m.model(x, k);
  const types = [y.constructor.name, z.constructor.name];
  report[source] = { y: Array.from(y), z: Array.from(z), types };
}
const m = await load();
for (const [name, attempt] of Object.entries(attempts)) {
  try {
    attempt(m);
    report[name] = 'no error';
  } catch (e) {
    report[name] = `${e.name}: ${e.message}`;
  }
}
try { await load('./out/missing.wasm'); } catch (e) { report.missing = e.message; }
console.log(JSON.stringify(report));
"""


def test_es_module_loads_from_any_source_and_rejects_wrong_inputs(tmp_path):
    """``load()`` takes nothing (the .wasm beside it), bytes or a path; two outputs come
    back as an array of typed arrays of their dtypes; a wrong count, type or length is
    a clear JS error naming the function and input."""

    def model(x, k):
        return np.tanh(x.reshape(3, 4)) * 2.0, k * 3

    module = build_ir(model, {"x": (12,), "k": ((4,), np.int32)}, target="wasm")
    module.compile().export(tmp_path / "out")
    run = _node(MISUSE, tmp_path)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    x = np.arange(12, dtype=np.float32) - 6
    for source in ("default", "bytes", "path"):
        np.testing.assert_allclose(report[source]["y"], np.tanh(x) * 2.0, rtol=1e-5, atol=1e-6)
        assert report[source]["z"] == [3, 6, 9, 12]
        assert report[source]["types"] == ["Float32Array", "Int32Array"]
    assert report["count"].startswith("TypeError: model: takes 2 inputs (float32[12], int32[4])")
    assert report["type"] == (
        "TypeError: model: input 0 must be a Float32Array (float32[12]), got Float64Array"
    )
    assert report["length"] == (
        "RangeError: model: input 0 must have 12 elements (float32[12], row-major), got 11"
    )
    assert report["array"].endswith("got Array")
    assert "missing.wasm" in report["missing"]


def test_module_uses_simd_and_imports_nothing():
    def gelu_layer(x, w):
        return np.tanh(x @ w) * 0.5 + np.exp(-x @ w)

    compiled = cuvil.jit(gelu_layer, target="wasm")
    x = np.random.default_rng(0).standard_normal((8, 16), dtype=np.float32)
    w = np.random.default_rng(1).standard_normal((16, 16), dtype=np.float32)
    np.testing.assert_allclose(compiled(x, w), gelu_layer(x, w), rtol=1e-4, atol=1e-5)
    text = cuvil.inspect_ir(compiled, "wat")  # wasm2wat: wabt, from make test's set-up
    assert "f32x4.mul" in text and "(import" not in text
    assert '(export "cuvil_gelu_layer"' in text
    llvm = cuvil.inspect_ir(compiled, "llvm")
    assert 'target triple = "wasm32-unknown-unknown"' in llvm
    assert "<4 x float>" in llvm


def test_float64_math_and_fmod_come_from_the_module_itself():
    """What has no polynomial (f64 transcendental functions, fmod) is linked into the
    module from wasi-libc's libm: still no import."""

    def model(x, y):
        return np.exp(x) + np.fmod(y, 0.75)

    x = np.linspace(-3, 3, 10)
    y = np.linspace(-5, 5, 10)
    compiled = cuvil.jit(model, target="wasm")
    np.testing.assert_allclose(compiled(x, y), model(x, y), rtol=1e-12)


def test_names_libm_defines_are_not_captured():
    def exp(x):
        return np.exp(x.astype(np.float64)) + 1.0

    compiled = cuvil.jit(exp, target="wasm")
    x = np.linspace(-2, 2, 12, dtype=np.float32)
    np.testing.assert_allclose(compiled(x), np.exp(x.astype(np.float64)) + 1.0, rtol=1e-12)


def test_dynamic_shapes_are_refused_naming_the_op_and_line():
    def model(x):
        return np.tanh(x) * 2.0

    spec = [cuvil.TensorSpec(("n", 4), "float32")]
    module = to_ir_with_dynamic_shape(model, spec, target="wasm")
    with pytest.raises(cuvil.CompileError) as raised:
        module.compile()
    message = str(raised.value)
    assert "the wasm target compiles static shapes only" in message
    assert "test_wasm_target.py:" in message and "?x4xf32" in message


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DEMO = pathlib.Path(__file__).resolve().parents[2] / "resources" / "wasm-demo"


def _serve(folder: pathlib.Path):
    """An HTTP server for ``folder`` on a free local port (browsers load ES modules only over
    HTTP), serving .mjs as JavaScript; its base URL and the server."""
    import functools
    import http.server
    import threading

    class Handler(http.server.SimpleHTTPRequestHandler):
        extensions_map = {
            **http.server.SimpleHTTPRequestHandler.extensions_map,
            ".mjs": "text/javascript",
            ".wasm": "application/wasm",
        }

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(folder))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", server


def test_demo_page_runs_the_model_in_a_browser(tmp_path):
    """resources/wasm-demo loads a compiled example in headless Chromium and prints its
    result (checked against NumPy here) and the time per call."""
    assert CHROMIUM, "no chromium on PATH: make test's set-up installs Debian's chromium"
    page = tmp_path / "demo"
    shutil.copytree(DEMO, page)
    compile_file(page, "mlp", "mlp", "wasm", (".wasm", ".mjs"))
    (page / "wasm").rename(page / "model")
    base, server = _serve(page)
    try:
        # Headless Chromium's virtual time runs on while the module compiles off the
        # main thread: on a loaded machine (the rest of the suite beside it) the budget
        # once ran out with the page still loading. A page that never finishes fails
        # all three tries.
        for _ in range(3):
            run = subprocess.run(
                [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
                 "--virtual-time-budget=60000", "--dump-dom", f"{base}/?model=mlp"],
                capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            if 'data-status="done"' in run.stdout:
                break
    finally:
        server.shutdown()
    assert 'data-status="done"' in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    text = run.stdout.split('<pre id="result">', 1)[1].split("</pre>", 1)[0]
    result = json.loads(text.replace("&quot;", '"'))
    assert result["function"] == "mlp" and result["msPerCall"] >= 0
    namespace = example("mlp")
    shapes = [x.shape for x in namespace["make_inputs"]()]
    inputs = [
        (np.sin(0.37 * np.arange(np.prod(s)) + k) * 0.5).astype(np.float32).reshape(s)
        for k, s in enumerate(shapes)
    ]
    expected = namespace["reference"](*inputs)
    (output,) = result["outputs"]
    assert output["shape"] == list(expected.shape)
    np.testing.assert_allclose(output["first"], expected.ravel()[:8], rtol=1e-4, atol=1e-5)
    assert abs(output["sum"] - float(expected.sum())) <= 1e-4 * float(np.abs(expected).sum())
