"""Targets end to end: the registry, device strings, `target` in every API, a plugin target."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO_ROOT

import cuvil

BUILD_DIR = pathlib.Path(os.environ.get("CUVIL_BUILD_DIR", REPO_ROOT / "build"))
NULL_TARGET = BUILD_DIR / "lib" / "CuvilNullTarget.so"


def add(a, b):
    return a + b


def test_available_targets_come_from_the_registry():
    from cuvil import _cuvil

    names = cuvil.available_targets()
    assert "cpu" in names
    assert names == sorted(names)
    assert names == [row[0] for row in _cuvil.available_targets()]


def test_device_strings_parse_into_target_and_index():
    assert cuvil.parse_device("cpu") == ("cpu", 0)
    assert cuvil.parse_device("cpu:0") == ("cpu", 0)
    with pytest.raises(ValueError, match="target 'cpu' has no device 1"):
        cuvil.parse_device("cpu:1")
    with pytest.raises(ValueError, match="bad device 'cpu:'"):
        cuvil.parse_device("cpu:")
    with pytest.raises(ValueError, match="unknown target 'rocm'.*registered targets: .*cpu"):
        cuvil.parse_device("rocm:0")
    # A target with no device in this process still parses: it compiles here.
    assert cuvil.parse_device("cuda:0") == ("cuda", 0)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: cuvil.jit(add, target=t),
        lambda t: cuvil.jit(target=t)(add),
        lambda t: cuvil.frontend.build_ir(add, {"a": (2,), "b": (2,)}, target=t),
        lambda t: cuvil.PipelineBuilder(target=t),
    ],
    ids=["jit", "jit-decorator", "build_ir", "PipelineBuilder"],
)
def test_an_unknown_target_lists_the_registered_ones(call):
    with pytest.raises(ValueError) as error:
        call("nonexistent")
    message = str(error.value)
    assert "unknown target 'nonexistent'" in message
    for name in cuvil.available_targets():
        assert name in message


def test_target_is_recorded_in_compilations(rng):
    f = cuvil.jit(add, target="cpu:0")
    a = rng.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(f(a, a), a + a)
    record = cuvil.compilations()[-1]
    assert (record.target, record.device) == ("cpu", 0)
    assert record.compiled.target == "cpu"
    assert record.compiled.stages == ["input", "optimized", "llvm-dialect", "llvm", "asm"]
    assert record.compiled.artifacts == ["mlir", "llvm", "asm", "obj", "so"]


def test_name_tables_come_from_the_compiler():
    assert cuvil.phases() == ["cuvil", "linalg", "fusion", "schedule", "bufferize", "llvm"]
    assert cuvil.IR_STAGES == (
        "input",
        "optimized",
        "llvm-dialect",
        "llvm",
        "asm",
        "c",
        "wat",
        "ptx",
    )
    stages = {p.stage for p in cuvil.PipelineBuilder().passes}
    assert stages == set(cuvil.phases())


def test_the_default_target_is_settable_and_checked():
    assert cuvil.default_target() == "cpu"
    with pytest.raises(ValueError, match="unknown target 'gpu'"):
        cuvil.set_default_target("gpu")
    previous = cuvil.set_default_target("cpu:0")
    try:
        assert cuvil.jit(add).target == "cpu"
    finally:
        cuvil.set_default_target(previous)


def test_cli_compile_takes_a_target(tmp_path):
    cli = [str(REPO_ROOT / ".venv" / "bin" / "cuvil"), "compile"]
    example = str(REPO_ROOT / "resources" / "examples" / "matmul_inference.py")
    done = subprocess.run(cli + [example, "--target", "cpu"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "target cpu" in done.stdout
    bad = subprocess.run(cli + [example, "--target", "tpu"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "--target: unknown target 'tpu'; registered targets: c, cpu, cuda or wasm" in bad.stderr
    # The command line beats the target the file's decorator names (cpu).
    override = subprocess.run(cli + [example, "--target", "c"], capture_output=True, text=True)
    assert override.returncode == 0, override.stderr
    assert "target c," in override.stdout


_PLUGIN_SCRIPT = """
import sys, numpy as np, cuvil
assert "null" not in cuvil.available_targets()
print(cuvil.load_target_plugin(sys.argv[1]))
f = cuvil.jit(lambda a, b: a * b + 1.0, target="null")
a = np.full(5, 3.0, np.float32)
print(f(a, a).tolist())
r = cuvil.compilations()[-1]
print(r.target, r.compiled.stages, r.compiled.artifacts)
print([s.stage for s in cuvil.PipelineBuilder(target="null").passes][-1])
print(cuvil.frontend.build_ir(lambda x: x * 2.0, {"x": (2,)}, target="null").compile()(
    np.ones(2, np.float32)).tolist())
"""


def test_a_plugin_target_goes_through_the_python_api(tmp_path):
    # A fresh process: the plugin's target must not leak into other tests.
    assert NULL_TARGET.exists(), f"build the test plugin first: {NULL_TARGET}"
    env = dict(os.environ, CUVIL_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-c", _PLUGIN_SCRIPT, str(NULL_TARGET)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "['c', 'cpu', 'cuda', 'null', 'null-broken', 'wasm']"
    assert lines[1] == "[0.0, 0.0, 0.0, 0.0, 0.0]"  # the null target writes zeros
    assert lines[2] == "null ['input', 'optimized', 'llvm-dialect'] ['mlir']"
    assert lines[3] == "bufferize"
    assert lines[4] == "[0.0, 0.0]"


def test_loading_a_bad_target_plugin_names_the_file(tmp_path):
    with pytest.raises(ValueError, match="cannot load target plugin .*missing.so"):
        cuvil.load_target_plugin(str(tmp_path / "missing.so"))
    example = BUILD_DIR / "lib" / "CuvilExamplePlugin.so"  # a pass plugin, not a target one
    with pytest.raises(ValueError, match="does not export cuvilRegisterTargetPlugin"):
        cuvil.load_target_plugin(str(example))


def _readelf(library: pathlib.Path, table: str) -> str:
    """``readelf -W`` with ``table`` (``--dyn-syms``, ``-s``, ``-d``) on ``library``."""
    return subprocess.run(
        ["readelf", "-W", table, str(library)], check=True, capture_output=True, text=True
    ).stdout


def _symbols(library: pathlib.Path, table: str) -> list[list[str]]:
    """``readelf``'s rows of ``library``'s dynamic (``--dyn-syms``) or full (``-s``) symbols."""
    text = _readelf(library, table)
    return [line.split() for line in text.splitlines() if re.match(r"\s*\d+:", line)]


def test_cpu_code_emitted_in_two_parts_exports_only_its_entry_points(tmp_path):
    """A module of more than a few hundred instructions has its machine code emitted
    on two threads, its functions cut between two objects linked into one library
    (SplitCodegen.cpp): the results are unchanged, the symbols one part takes from
    the other (named ``cuvil.local.N`` where they had no name) stay inside the
    library, and only the entry points, runtime slots and hooks are exported."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((64, 256)).astype(np.float32)
    w1 = rng.standard_normal((256, 512)).astype(np.float32) / 16
    b1 = rng.standard_normal(512).astype(np.float32)
    w2 = rng.standard_normal((512, 128)).astype(np.float32) / 16

    def layers(x, w1, b1, w2):
        return np.tanh(np.maximum(x @ w1 + b1, 0) @ w2)

    f = cuvil.jit(layers, constants=("w1", "b1", "w2"))
    expected = np.tanh(np.maximum(x @ w1 + b1, 0) @ w2)
    np.testing.assert_allclose(f(x, w1, b1, w2), expected, rtol=1e-4, atol=1e-4)
    library = tmp_path / "layers.so"
    cuvil.compilations()[-1].compiled.emit("so", str(library))

    everything = _symbols(library, "-s")
    assert any(row[-1].startswith("cuvil.local.") for row in everything), everything
    exported = {row[-1].split("@")[0] for row in _symbols(library, "--dyn-syms") if row[6] != "UND"}
    assert exported, "no symbols exported"
    # The linker's end-of-data markers, which MLIR's runtime library it links
    # against exports too, are not the library's own.
    exported -= {"__bss_start", "_edata", "_end"}
    for name in exported:
        assert name.startswith(("cuvil_", "_mlir_")) and "omp_par" not in name, exported
        assert "local" not in name and "constant" not in name, exported


def _needed(library: pathlib.Path) -> list[str]:
    """The shared libraries ``library`` names (its ``NEEDED`` entries)."""
    text = _readelf(library, "-d")
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", text)


def _powers(x, y):
    return np.power(np.fmod(x, y), y) @ x


def test_cpu_libraries_name_only_the_runtime_files_their_code_calls(tmp_path):
    """Each compiled function is linked into a library (Linker.cpp): a library
    whose code calls libm (powf, fmodf) names libm and the C library by their
    runtime files, one whose code calls neither names neither, and both load and
    compute the right values."""
    rng = np.random.default_rng(5)
    x = rng.random((96, 96), dtype=np.float32) + 0.5
    y = rng.random((96, 96), dtype=np.float32) + 0.5
    powers = cuvil.jit(_powers)
    np.testing.assert_allclose(powers(x, y), _powers(x, y), rtol=1e-4)
    with_libm = tmp_path / "powers.so"
    cuvil.compilations()[-1].compiled.emit("so", str(with_libm))
    assert _needed(with_libm) == ["libm.so.6", "libc.so.6"]

    small = cuvil.jit(add)
    a = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(small(a, a), a + a)
    without = tmp_path / "add.so"
    cuvil.compilations()[-1].compiled.emit("so", str(without))
    assert "libm.so.6" not in _needed(without)


_LINK_SCRIPT = """
import numpy as np, sys, cuvil
sys.path.insert(0, sys.argv[1])
from test_targets import _powers
rng = np.random.default_rng(5)
x = rng.random((96, 96), dtype=np.float32) + 0.5
y = rng.random((96, 96), dtype=np.float32) + 0.5
np.save(sys.argv[2], cuvil.jit(_powers)(x, y))
"""


def test_the_linkers_program_links_the_same_code(tmp_path):
    """A process's first link runs LLD inside it; CUVIL_LINKER=external runs the
    linker's program instead (ld.lld-19 on PATH: what every later link of a process
    runs). A ld.lld-19 on PATH that notes each run shows which one linked; the
    results are the same, bit for bit."""
    tools = tmp_path / "bin"
    tools.mkdir()
    runs = tmp_path / "runs"
    linker = tools / "ld.lld-19"
    linker.write_text(f'#!/bin/sh\necho "$@" >> {runs}\nexec /usr/lib/llvm-19/bin/ld.lld "$@"\n')
    linker.chmod(0o755)
    results = {}
    for mode in ("in-process", "external"):
        env = dict(os.environ, CUVIL_DISABLE_DISK_CACHE="1", PATH=f"{tools}:{os.environ['PATH']}")
        env.pop("CUVIL_LINKER", None)
        if mode == "external":
            env["CUVIL_LINKER"] = "external"
        out = tmp_path / f"{mode}.npy"
        done = subprocess.run(
            [sys.executable, "-c", _LINK_SCRIPT, str(pathlib.Path(__file__).parent), str(out)],
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        results[mode] = np.load(out)
        if mode == "in-process":
            assert not runs.exists(), runs.read_text()
    assert "-shared" in runs.read_text()
    np.testing.assert_array_equal(results["external"], results["in-process"])
