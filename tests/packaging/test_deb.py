"""The Debian package (`make package`): what it holds and declares, installed into a
throwaway root (dpkg -x): its programs start, its Python package imports and compiles with
the system's Python and NumPy, and its desktop files and the package pass the validators.
The tools it runs (python3-numpy, desktop-file-utils, appstream, lintian) are installed by
make test's set-up, so none of these tests skips."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest
from packaging_support import run

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("CUVIL_BUILD_DIR", ROOT / "build"))
VERSION = "0.1.0"
APP_ID = "io.github.cuvil.Workbench"
SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.fixture(scope="module")
def deb() -> pathlib.Path:
    """Builds the package with CPack (cmake --build BUILD --target package)."""
    done = run("cmake", "--build", BUILD, "--target", "package", "--", "-j2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    path = BUILD / f"cuvil_{VERSION}_amd64.deb"
    assert path.is_file(), done.stdout[-2000:]
    return path


@pytest.fixture(scope="module")
def installed(deb, tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("root")
    done = run("dpkg-deb", "-x", deb, root)
    assert done.returncode == 0, done.stderr
    return root


def test_package_declares_what_it_needs(deb):
    info = run("dpkg-deb", "--field", deb, "Package", "Version", "Depends", "Recommends")
    assert info.returncode == 0, info.stderr
    fields = info.stdout
    assert "Package: cuvil" in fields and f"Version: {VERSION}" in fields
    depends = fields.split("Depends:", 1)[1].split("\n", 1)[0]
    # What dpkg-shlibdeps cannot find, by hand; what it finds (Qt), from the programs.
    # lld-19: a process's links after its first run ld.lld-19 (Linker.cpp).
    for package in ("libllvm19", "libmlir-19", "qt6-qpa-plugins",
                    "python3-numpy", "libqt6widgets6", "lld-19"):  # fmt: skip
        assert package in depends, depends
    assert "nodejs" in fields.split("Recommends:", 1)[1]


def test_package_holds_the_programs_python_package_and_desktop_files(deb):
    listing = run("dpkg-deb", "--contents", deb).stdout
    for path in (
        "./usr/bin/cuvil-workbench",
        "./usr/bin/cuvil-worker",
        "./usr/bin/cuvil-opt",
        "./usr/bin/cuvil-graph",
        "./usr/bin/cuvil-profile-viewer",
        "./usr/bin/cuvil",
        "./usr/lib/python3/dist-packages/cuvil/__init__.py",
        "./usr/lib/python3/dist-packages/cuvil/_cuvil.cpython-311-x86_64-linux-gnu.so",
        "./usr/share/cuvil/resources/examples/mlp.py",
        "./usr/share/cuvil/resources/lessons/04-fusion/lesson.json",
        "./usr/share/cuvil/resources/interview/questions.json",
        f"./usr/share/applications/{APP_ID}.desktop",
        f"./usr/share/icons/hicolor/scalable/apps/{APP_ID}.svg",
        f"./usr/share/metainfo/{APP_ID}.metainfo.xml",
        "./usr/share/mime/packages/cuvil.xml",
        "./usr/share/doc/cuvil/copyright",
        "./usr/share/doc/cuvil/changelog.gz",
        "./usr/share/lintian/overrides/cuvil",
    ):
        assert path in listing, path
    assert "__pycache__" not in listing


def test_installed_programs_start_and_find_llvm(installed):
    for program in ("cuvil-workbench", "cuvil-opt", "cuvil-worker", "cuvil-profile-viewer"):
        dynamic = run("readelf", "-d", installed / "usr/bin" / program).stdout
        assert "RUNPATH" in dynamic and "/usr/lib/llvm-19/lib" in dynamic, program
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    version = run(installed / "usr/bin/cuvil-workbench", "--version", env=env)
    assert version.returncode == 0, version.stderr
    assert VERSION in version.stdout
    help_text = run(installed / "usr/bin/cuvil-opt", "--help")
    assert "cuvil-cpu-pipeline" in help_text.stdout


def test_installed_python_package_compiles_with_the_system_python(installed, tmp_path):
    site = installed / "usr/lib/python3/dist-packages"
    script = (
        "import numpy as np, cuvil\n"
        f"assert cuvil.__file__.startswith({str(site)!r}), cuvil.__file__\n"
        "f = cuvil.jit(lambda x, w: np.tanh(x @ w) + 1.0)\n"
        "x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)\n"
        "assert np.allclose(f(x, x), np.tanh(x @ x) + 1.0, atol=1e-5)\n"
        "assert cuvil.last_fallback_reason(f) is None\n"
        "print('ok', np.__version__)\n"
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(site),
           "CUVIL_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
    done = run(SYSTEM_PYTHON, "-c", script, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok")
    # The `cuvil` command of the package, on the bundled example.
    command = run(SYSTEM_PYTHON, installed / "usr/bin/cuvil", "compile",
                   installed / "usr/share/cuvil/resources/examples/mlp.py",
                   env=env, cwd=tmp_path)  # fmt: skip
    assert command.returncode == 0, command.stderr[-3000:]
    assert "// cuvil: mlp(tensor<64x256xf32>" in command.stdout
    assert "mlp: output (64, 128) float32, max abs error" in command.stderr


def test_installed_workbench_runs_a_model_with_its_worker(installed, tmp_path):
    """Offscreen, the installed Workbench runs the installed example in the installed
    worker (the system's Python with the installed package, no source tree, no venv),
    then runs and profiles its compiled function, and quits."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "XDG_RUNTIME_DIR": str(tmp_path),
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(installed / "usr/lib/python3/dist-packages"),
        "CUVIL_SOURCE_DIR": str(tmp_path / "no-source-tree"),
        "CUVIL_VENV": str(tmp_path / "no-venv"),
        "CUVIL_CACHE_DIR": str(tmp_path / "cache"),
    }
    example = installed / "usr/share/cuvil/resources/examples/mlp.py"
    done = run(installed / "usr/bin/cuvil-workbench", "--quit-when-done", "--run-compiled",
                example, env=env, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "compiled mlp(float32[64, 256]" in done.stdout and "for cpu" in done.stdout


def test_desktop_entry_and_metainfo_validate(installed):
    entry = installed / f"usr/share/applications/{APP_ID}.desktop"
    done = run("desktop-file-validate", entry)
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr
    meta = installed / f"usr/share/metainfo/{APP_ID}.metainfo.xml"
    done = run("appstreamcli", "validate", "--no-net", "--explain", meta)
    assert done.returncode == 0, done.stdout + done.stderr


def test_lintian_finds_no_errors(deb):
    done = run("lintian", "--no-tag-display-limit", deb)
    errors = [line for line in done.stdout.splitlines() if line.startswith("E:")]
    assert not errors, "\n".join(errors)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
