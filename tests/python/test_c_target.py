"""The c target: dependency-free C99 through EmitC, run in process and as files of its own."""

from __future__ import annotations

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

CC = shutil.which("cc")
CXX = shutil.which("c++")


@pytest.mark.parametrize("example_name, function", EXAMPLE_FUNCTIONS)
def test_examples_run_on_the_c_target(example_name, function):
    check_example_on("c", example_name, function)


@pytest.mark.parametrize("info, sample", test_ops.CASES)
def test_op_table_on_the_c_target(info, sample):
    """Every op of the op table, compiled to C and run, against NumPy."""
    check_op_on("c", info, sample)


def _compile_file(tmp_path, name: str, function: str):
    return compile_file(tmp_path, name, function, "c", (".c", ".h"))


HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include "{name}.h"

/* Reads each input from the file named on the command line, in order, then
   writes each output to the next file named. */
static void *read_file(const char *path, size_t bytes) {{
  void *data = malloc(bytes);
  FILE *f = fopen(path, "rb");
  if (!data || !f || fread(data, 1, bytes, f) != bytes) exit(2);
  fclose(f);
  return data;
}}

int main(int argc, char **argv) {{
  if (argc != {count} + 1) return 3;
{body}
  return 0;
}}
"""


def _harness(name: str, inputs, outputs) -> str:
    lines, arguments = [], []
    for i, x in enumerate(inputs):
        lines.append(f"  float *in{i} = read_file(argv[{i + 1}], {x.nbytes});")
        arguments.append(f"in{i}")
    for j, y in enumerate(outputs):
        lines.append(f"  float *out{j} = malloc({y.nbytes});")
        arguments.append(f"out{j}")
    lines.append(f"  if ({name}({', '.join(arguments)}) != 0) return 4;")
    for j, y in enumerate(outputs):
        index = len(inputs) + j + 1
        lines.append(f'  FILE *f{j} = fopen(argv[{index}], "wb");')
        lines.append(f"  fwrite(out{j}, 1, {y.nbytes}, f{j});")
        lines.append(f"  fclose(f{j});")
    body = "\n".join(lines)
    return HARNESS.format(name=name, count=len(inputs) + len(outputs), body=body)


@pytest.mark.parametrize("example_name, function", EXAMPLE_FUNCTIONS)
def test_emitted_c_compiles_cleanly_and_runs_in_a_program_of_its_own(
    tmp_path, example_name, function
):
    """The files alone, no Cuvil: warning-free C99 and C++, and a C program linking them
    computes what NumPy does."""
    folder = _compile_file(tmp_path, example_name, function)
    source = folder / f"{function}.c"
    strict = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c"]
    for compiler, flags in ((CC, strict), (CXX, ["-x", "c++", "-Wall", "-Wextra", "-Werror"])):
        if compiler is None:
            continue
        run = subprocess.run(
            [compiler, *flags, "-c", str(source), "-o", str(tmp_path / "x.o")],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0 and not run.stderr, run.stderr
    namespace = example(example_name)
    inputs = namespace["make_inputs"]()
    expected = namespace["reference"](*inputs)
    (tmp_path / "main.c").write_text(_harness(function, inputs, [expected]))
    program = tmp_path / "program"
    build = [CC, "-std=c99", "-O2", "-I", str(folder), str(tmp_path / "main.c"), str(source)]
    run = subprocess.run([*build, "-o", str(program), "-lm"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    paths = []
    for i, x in enumerate(inputs):
        paths.append(tmp_path / f"in{i}.bin")
        np.ascontiguousarray(x, dtype=np.float32).tofile(paths[-1])
    paths.append(tmp_path / "out0.bin")
    assert subprocess.run([str(program), *map(str, paths)], timeout=120).returncode == 0
    result = np.fromfile(paths[-1], dtype=np.float32).reshape(expected.shape)
    assert_close(result, expected)


def test_header_documents_the_abi(tmp_path):
    header = (_compile_file(tmp_path, "mlp", "mlp") / "mlp.h").read_text()
    assert "#define MLP_NUM_INPUTS 5" in header
    assert "/* in0: float32[64][256] */" in header and "#define MLP_IN0_SIZE 16384" in header
    assert "#define MLP_OUT0_SIZE 8192" in header
    assert (
        "int mlp(const float *in0, const float *in1, const float *in2, const float *in3, "
        "const float *in4, float *out0);" in header
    )
    assert "int mlp_packed(void *const *cuvil_inputs, void *const *cuvil_outputs);" in header
    assert 'extern "C"' in header and "Not reentrant" in header


def test_names_c_reserves_get_a_prefix():
    """A function called ``exp`` cannot define ``exp`` next to <math.h>'s: it is
    ``cuvil_exp``; one called ``index`` would be preempted by the C library's."""

    def exp(x):
        return np.exp(x) + 1.0

    compiled = cuvil.jit(exp, target="c")
    x = np.linspace(-2, 2, 12, dtype=np.float32)
    np.testing.assert_allclose(compiled(x), np.exp(x) + 1.0, rtol=1e-6)
    source = cuvil.inspect_ir(compiled, "c")
    assert "int cuvil_exp(const float *in0, float *out0)" in source


def test_export_writes_the_sources_into_a_folder(tmp_path):
    module = build_ir(lambda x: np.tanh(x) * 2.0, {"x": (3, 4)}, target="c")
    module.compile().export(tmp_path / "out")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len(names) == 2 and names[0].endswith(".c") and names[1].endswith(".h")


def test_dynamic_shapes_are_refused_naming_the_op_and_line():
    def model(x):
        return np.tanh(x) * 2.0

    module = to_ir_with_dynamic_shape(model, [cuvil.TensorSpec(("n", 4), "float32")], target="c")
    with pytest.raises(cuvil.CompileError) as raised:
        module.compile()
    message = str(raised.value)
    assert "the c target compiles static shapes only" in message
    assert "test_c_target.py:" in message and "memref<?x4xf32>" in message


def test_a_target_that_writes_no_sources_refuses_a_folder_export(tmp_path):
    module = build_ir(lambda x: x + 1.0, {"x": (2,)}, target="cpu")
    module.compile().export(tmp_path / "m.cuvil")  # a package, as before
    assert (tmp_path / "m.cuvil").is_file()
