"""The ``cuvil compile`` command line, run as ``python -m cuvil`` in a subprocess."""

from __future__ import annotations

import textwrap

from conftest import EXAMPLES_DIR, run_python

MATMUL = str(EXAMPLES_DIR / "matmul_inference.py")


def cuvil_cli(*args, cwd=None):
    return run_python(["-m", "cuvil", *args], cwd=cwd)


def test_compile_prints_header_and_input_ir():
    result = cuvil_cli("compile", MATMUL)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "// cuvil: matmul_inference(tensor<1024x512xf32>, tensor<512x256xf32>)" in out
    assert "-> (tensor<1024x256xf32>)" in out and " ms" in out
    assert "cuvil.matmul" in out and "func.func @matmul_inference" in out
    # The script's own prints go to stderr, keeping stdout for cuvil's output.
    assert "max abs error" in result.stderr and "max abs error" not in out


def test_print_ir_after_all_dumps_every_pass():
    result = cuvil_cli("compile", MATMUL, "--print-ir-after-all")
    assert result.returncode == 0, result.stderr
    dumps = [
        line for line in result.stdout.splitlines() if line.startswith("// -----// IR Dump After ")
    ]
    assert dumps, result.stdout
    for line in dumps:
        assert line.endswith("//----- //")
        assert " ms, changed)" in line or " ms, unchanged)" in line


def test_emit_text_artifacts_to_stdout():
    for kind, marker in (("mlir", "module"), ("llvm", "define"), ("asm", "matmul_inference")):
        result = cuvil_cli("compile", MATMUL, "--emit", kind)
        assert result.returncode == 0, result.stderr
        body = result.stdout.split("\n", 2)[2]
        assert marker in body, (kind, result.stdout[:2000])


def test_emit_to_files(tmp_path):
    for kind in ("mlir", "obj", "so"):
        out = tmp_path / f"matmul.{kind}"
        result = cuvil_cli("compile", MATMUL, "--emit", kind, "-o", str(out))
        assert result.returncode == 0, result.stderr
        assert out.stat().st_size > 0
        assert f"wrote {kind} to {out}" in result.stdout


def test_several_compilations_get_numbered_outputs(tmp_path):
    script = tmp_path / "two.py"
    script.write_text(
        textwrap.dedent("""
            import numpy as np, cuvil

            @cuvil.jit
            def double(x):
                return x * 2.0

            x = np.ones((2, 3), np.float32)
            double(x)
            double(np.ones(5, np.float32))
            """)
    )
    out = tmp_path / "module.mlir"
    result = cuvil_cli("compile", str(script), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "module.mlir.1").stat().st_size > 0
    assert (tmp_path / "module.mlir.2").stat().st_size > 0
    assert result.stdout.count("// cuvil: double(") == 2


def test_script_arguments_after_double_dash(tmp_path):
    script = tmp_path / "args.py"
    script.write_text(
        textwrap.dedent("""
            import sys, numpy as np, cuvil
            n = int(sys.argv[1])

            @cuvil.jit
            def affine(x):
                return x * 2.0 + 1.0

            affine(np.ones(n, np.float32))
            """)
    )
    result = cuvil_cli("compile", str(script), "--", "7")
    assert result.returncode == 0, result.stderr
    assert "tensor<7xf32>" in result.stdout


def test_binary_emit_without_output_is_an_error():
    result = cuvil_cli("compile", MATMUL, "--emit", "obj")
    assert result.returncode == 2
    assert "-o" in result.stderr


def test_missing_file_exits_2():
    result = cuvil_cli("compile", "does_not_exist.py")
    assert result.returncode == 2
    assert "no such file: does_not_exist.py" in result.stderr


def test_exception_in_user_file_prints_traceback_and_exits_1(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import numpy as np\n\nraise RuntimeError('model file is broken')\n")
    result = cuvil_cli("compile", str(script))
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "model file is broken" in result.stderr
    assert f'File "{script}", line 3' in result.stderr


def test_script_that_compiles_nothing_is_reported(tmp_path):
    script = tmp_path / "nothing.py"
    script.write_text("print('hello')\n")
    result = cuvil_cli("compile", str(script))
    assert result.returncode == 1
    assert "compiled nothing" in result.stderr


def test_help_lists_compile():
    result = cuvil_cli("--help")
    assert result.returncode == 0 and "compile" in result.stdout
