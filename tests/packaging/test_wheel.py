"""The Python wheel (pyproject.toml, scikit-build-core): `pip install .` in a fresh virtual
environment of the system's Python 3.11 builds the _cuvil extension with the project's CMake
(in build-wheel/, its objects shared with the main build through ccache) and installs the
package, its metadata and the `cuvil` command. The examples then run from that environment,
outside the source tree, and the model examples import with the frameworks beside it.
pip fetches scikit-build-core and NumPy from PyPI (or its cache)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import sys

import pytest
from packaging_support import run

ROOT = pathlib.Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"
VERSION = re.search(r'set\(CUVIL_VERSION "([^"]+)"\)', (ROOT / "CMakeLists.txt").read_text())[1]
EXAMPLES = ROOT / "resources/examples"


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> pathlib.Path:
    """A fresh venv with `pip install .` run in the checkout."""
    home = tmp_path_factory.mktemp("wheel")
    made = run(SYSTEM_PYTHON, "-m", "venv", home / "venv")
    assert made.returncode == 0, made.stderr
    pip = home / "venv/bin/pip"
    done = run(pip, "install", "--disable-pip-version-check", ".", cwd=ROOT, timeout=3000)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return home / "venv"


def _env(venv: pathlib.Path, home: pathlib.Path, **extra) -> dict[str, str]:
    """No PYTHONPATH, the venv first on PATH, caches in the test's folder."""
    return {
        "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
        "HOME": str(home),
        "CUVIL_CACHE_DIR": str(home / "cache"),
        **extra,
    }


def _python(venv, home, code: str, **extra):
    return run(venv / "bin/python", "-c", code, env=_env(venv, home, **extra), cwd=home)


def test_metadata_and_files_come_from_the_project(venv, tmp_path):
    done = _python(venv, tmp_path, (
        "import importlib.metadata as m, json\n"
        "d = m.distribution('cuvil')\n"
        "print(json.dumps({'version': d.version, 'requires': d.requires,\n"
        "  'license': d.metadata['License-Expression'],\n"
        "  'scripts': [e.value for e in d.entry_points if e.group == 'console_scripts'],\n"
        "  'files': [str(f) for f in d.files]}))\n"
    ))  # fmt: skip
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["version"] == VERSION
    assert any(r.startswith("numpy") for r in info["requires"]), info["requires"]
    assert info["license"] == "LicenseRef-cuvil-unreleased"
    assert info["scripts"] == ["cuvil.cli:main"]
    files = set(info["files"])
    for path in ("cuvil/__init__.py", "cuvil/cli.py", "cuvil/frontends/__init__.py",
                 "cuvil/_cuvil.cpython-311-x86_64-linux-gnu.so"):  # fmt: skip
        assert path in files, path
    # One extension: the one built for the wheel, not a copy of the source tree's.
    assert sum(f.startswith("cuvil/_cuvil") for f in files) == 1


def test_installed_extension_is_the_wheels_own_and_finds_llvm(venv, tmp_path):
    done = _python(venv, tmp_path, (
        "import sys, cuvil, cuvil._cuvil as ext\n"
        "print(cuvil.__file__); print(ext.__file__); print(sys.prefix)\n"
    ))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    package, extension, prefix = done.stdout.split()
    assert package.startswith(prefix) and extension.startswith(prefix), done.stdout
    assert not package.startswith(str(ROOT)), "imported the source tree, not the wheel"
    dynamic = run("readelf", "-d", extension).stdout
    assert "RUNPATH" in dynamic and "/usr/lib/llvm-19/lib" in dynamic, dynamic


@pytest.mark.parametrize("example", ["mlp", "matmul_inference", "transformer_block"])
def test_examples_run_from_the_installed_package(venv, tmp_path, example):
    done = run(venv / "bin/python", EXAMPLES / f"{example}.py",
                env=_env(venv, tmp_path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    line = done.stdout.splitlines()[0]
    assert line.startswith(f"{example}: output"), done.stdout
    assert float(line.rsplit(" ", 1)[1]) < 1e-3, line
    assert "ran as plain NumPy" not in done.stdout


def test_cuvil_command_compiles_the_example(venv, tmp_path):
    done = run(venv / "bin/cuvil", "compile", EXAMPLES / "mlp.py",
                env=_env(venv, tmp_path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "// cuvil: mlp(tensor<64x256xf32>" in done.stdout
    assert "mlp: output (64, 128) float32, max abs error" in done.stderr


def _frameworks() -> str:
    """The frameworks folder make test's set-up installed (.venv's cuvil-frameworks.pth)."""
    pth = list((ROOT / ".venv/lib").glob("python3*/site-packages/cuvil-frameworks.pth"))
    assert pth, "no .venv/lib/python3*/site-packages/cuvil-frameworks.pth: run make test"
    return pth[0].read_text().strip()


@pytest.mark.parametrize(
    ("model", "ops"),
    [("torch_cnn", ("cuvil.conv2d", "cuvil.batch_norm", "cuvil.max_pool2d")),
     ("jax_mlp", ("cuvil.matmul", "cuvil.tanh", "cuvil.reduce_max"))],
)  # fmt: skip
def test_model_examples_import_with_the_frameworks_beside_the_wheel(venv, tmp_path, model, ops):
    done = run(venv / "bin/cuvil", "compile", EXAMPLES / "models" / f"{model}.py",
                env=_env(venv, tmp_path, PYTHONPATH=_frameworks()), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    for op in ops:
        assert op in done.stdout, (op, done.stdout[-2000:])


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
