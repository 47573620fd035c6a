"""The ``cuvil`` command line.

``cuvil compile FILE.py`` runs a script and shows what it compiled
(``cuvil compile MODEL.onnx`` imports and compiles an ONNX model);
``cuvil trace FILE`` summarizes a profile and converts it between formats;
``cuvil profile FILE.py`` records one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import sys
import tempfile
import traceback

from . import _cache_cli, _package_cli
from ._errors import CompileError
from ._jit import Compilation, compilations, set_snapshot_capture, snapshot_capture_enabled
from ._packages import PackageError, export_record, save_record_irpkg
from ._precision import PRECISIONS
from ._sources import export_sources, source_kinds
from ._targets import (
    artifact_kinds,
    binary_artifact_kinds,
    set_default_target,
    set_target_override,
)

#: --emit kinds that are packages (docs/irpkg.md), written by Python, not by a target.
PACKAGE_KINDS = ("cuvil", "irpkg")

_COMPILE_HELP = """\
Run FILE as __main__ with per-pass IR capture enabled, then report every
function it compiled through @cuvil.jit: a header (function, input signature,
compile time) followed by the input IR, the IR after each pass
(--print-ir-after-all) or an exported artifact (--emit).

A file that defines a model compiles it too: a function cuvil_model() returning
(model, example_inputs), or module-level variables `model` and `example_inputs`
(a torch.nn.Module and a tuple of example tensors, only their shapes and
dtypes matter). The model is imported for inference (model.eval()) and
compiled for those inputs, as cuvil.frontend.build_ir(model, example_inputs).

The script's own standard output is sent to standard error, so standard output
carries only what cuvil prints. With -o and several compilations, the Nth
artifact is written to OUT.N (N from 1). Arguments after "--" are passed to
FILE as sys.argv[1:].

FILE may also be an ONNX model (MODEL.onnx): it is imported with
cuvil.load_onnx and compiled for the target, and reported the same way (its
ops carry the ONNX node names as locations). Inputs with symbolic dims need
--input-shape NAME=D1,D2,... (repeatable).
"""


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cuvil",
        description="Cuvil, an MLIR-based compiler for NumPy inference code.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    compile_parser = commands.add_parser(
        "compile",
        help="run a Python file and print or export what it compiled",
        usage="cuvil compile FILE.py|MODEL.onnx [--target TARGET] [--print-ir-after-all] "
        "[--emit KIND] [-o OUT] [--input-shape NAME=DIMS] [--precision P] "
        "[--quantization int4] [--group-size N] [-- ARGS...]",
        description=_COMPILE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compile_parser.add_argument(
        "file", metavar="FILE.py|MODEL.onnx", help="the Python file to run or the ONNX model"
    )
    compile_parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        metavar="NAME=DIMS",
        help="an ONNX model input's shape, e.g. x=1,3,224,224 (for symbolic dims)",
    )
    compile_parser.add_argument(
        "--target",
        metavar="TARGET",
        help="target of the file's compilations, overriding the one its decorators name: a "
        "registered target, optionally with a device index (cpu, c, wasm, cuda:0); default: "
        "what the file names, else cpu. With -o OUT and no --emit, the c target writes "
        "OUT/<function>.c and .h, the wasm target OUT/<function>.wasm and .mjs",
    )
    compile_parser.add_argument(
        "--print-ir-after-all",
        action="store_true",
        help="print the IR after every pass, with its wall time and whether it changed the IR",
    )
    compile_parser.add_argument(
        "--emit",
        choices=artifact_kinds() + PACKAGE_KINDS,
        help="export the compiled module (binary kinds need -o; a target writes a subset); "
        "cuvil: an executable package for cuvil.runtime and the C runtime, irpkg: an IR package",
    )
    compile_parser.add_argument(
        "-o", "--output", metavar="OUT", help="write the artifact to OUT (default kind: mlir)"
    )
    compile_parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="fp32",
        help="a model's matmuls on bf16/fp16 operands with float32 accumulation; tf32: "
        "its float32 matmuls may read TF32 operands where a target has TF32 tensor cores "
        "(cuda)",
    )
    compile_parser.add_argument(
        "--quantization",
        choices=("int4",),
        help="int4: a model's constant matmul weights as group-wise 4-bit codes (int8 needs "
        "calibration samples: IRModule.optimize(quantization='int8', calibrate_dataset=...))",
    )
    compile_parser.add_argument(
        "--group-size", type=int, default=128, metavar="N", help="rows per int4 scale"
    )
    _add_trace_parser(commands)
    _add_profile_parser(commands)
    _package_cli.add_parser(commands)
    _cache_cli.add_parser(commands)
    return parser


_PROFILE_HELP = """\
Run FILE as __main__ N times (--runs) while recording every call of compiled
code and every kernel it runs (CPU time of each loop nest or fused region,
named after its IR ops, with the source line and the Python stack of the
call). Prints the per-op table; with -o also writes the trace (format from
--format, else from OUT's name: .json chrome, .folded, .speedscope.json).
"""


def _output_formats() -> tuple[str, ...]:
    from ._profiler import output_formats

    return output_formats()


def _add_profile_parser(commands) -> None:
    profile_parser = commands.add_parser(
        "profile",
        help="run a Python file and profile its compiled calls and kernels",
        usage="cuvil profile FILE.py [--runs N] [-o OUT] [--format FORMAT] [--top N] [-- ARGS...]",
        description=_PROFILE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    profile_parser.add_argument("file", metavar="FILE.py", help="the Python file to run")
    profile_parser.add_argument(
        "--runs", type=int, default=1, metavar="N", help="run the file N times (default 1)"
    )
    profile_parser.add_argument("-o", "--output", metavar="OUT", help="write the trace to OUT")
    profile_parser.add_argument("--format", choices=_output_formats(), help="format of OUT")
    profile_parser.add_argument(
        "--top", type=int, default=20, metavar="N", help="rows of the table (0: all)"
    )


_TRACE_HELP = """\
Read a trace -- Chrome trace JSON (Cuvil, PyTorch's profiler, ONNX Runtime),
folded stacks, speedscope JSON or an Nsight Systems SQLite export (nsys export
--type sqlite) -- and print a per-op / per-kernel table: count, total, self
time (total minus nested children), p50 and p99.

With -o OUT the trace is also converted and written to OUT (format from
--format, else from OUT's name: .json chrome, .folded, .speedscope.json). With
--format and no -o, the converted trace goes to standard output instead of the
table (e.g. folded stacks for flamegraph.pl).
"""


def _add_trace_parser(commands) -> None:
    from ._profiler import EVENT_KINDS, input_formats, output_formats

    trace_parser = commands.add_parser(
        "trace",
        help="summarize a profile and convert it between trace formats",
        usage="cuvil trace FILE [--format FORMAT] [-o OUT] [--top N] [--kind KIND] "
        "[--tree] [--diff BASELINE]",
        description=_TRACE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    trace_parser.add_argument("file", metavar="FILE", help="the trace to read")
    trace_parser.add_argument(
        "--format", choices=output_formats(), help="output format for -o or standard output"
    )
    trace_parser.add_argument("-o", "--output", metavar="OUT", help="write the converted trace")
    trace_parser.add_argument(
        "--input-format", choices=input_formats(), default="auto", help="FILE's format (auto)"
    )
    trace_parser.add_argument(
        "--top", type=int, default=20, metavar="N", help="rows to print (0: all; default 20)"
    )
    trace_parser.add_argument(
        "--kind",
        action="append",
        choices=EVENT_KINDS,
        help="only these event kinds (repeatable), e.g. --kind gpu_kernel",
    )
    trace_parser.add_argument(
        "--group-by", choices=("name", "op"), default="name", help="rows per name or per IR op id"
    )
    trace_parser.add_argument(
        "--tree", action="store_true", help="also print the flame graph's call tree"
    )
    trace_parser.add_argument(
        "--depth", type=int, default=0, metavar="D", help="call tree depth (0: all)"
    )
    trace_parser.add_argument(
        "--diff",
        metavar="BASELINE",
        help="print the per-frame difference from BASELINE to FILE (+ slower, - faster)",
    )


def _trace_command(args: argparse.Namespace) -> int:
    from . import _profiler

    def fail(message: str, code: int) -> int:
        print(f"cuvil trace: error: {message}", file=sys.stderr)
        return code

    for path in (args.file, args.diff):
        # Any readable file, a pipe included (`... | cuvil trace /dev/stdin`); not a folder.
        if path and (not os.path.exists(path) or os.path.isdir(path)):
            return fail(f"no such file: {path}", 2)
    if args.top < 0:
        return fail("--top takes a count of rows, 0 for all", 2)
    if args.output and (why := _unwritable(args.output)):
        return fail(why, 2)
    trace_error = _profiler.trace_error_type()
    try:
        trace = _profiler.read_trace(args.file, args.input_format)
        baseline = _profiler.read_trace(args.diff) if args.diff else None
        if args.output:
            fmt = _profiler.output_format(args.output, args.format)
            trace.write(args.output, fmt)
            print(f"cuvil trace: wrote {fmt} to {args.output}", file=sys.stderr)
        elif args.format:
            sys.stdout.write(_profiler.render(trace, args.format))
            return 0
    except trace_error as error:
        return fail(str(error), 1)
    print(_profiler.summary(trace, args.top, args.kind, args.group_by, title=args.file), end="")
    if args.tree:
        depth = args.depth if args.depth > 0 else 2**32 - 1
        print()
        print(trace.call_tree(kinds=args.kind, max_depth=depth), end="")
    if baseline is not None:
        print()
        print(f"difference {args.diff} -> {args.file} (ns):")
        print(_profiler._ext().diff_call_trees(baseline, trace), end="")
    return 0


def _error(message: str, code: int) -> int:
    print(f"cuvil compile: error: {message}", file=sys.stderr)
    return code


def _unwritable(path: str, folder_ok: bool = False) -> str | None:
    """Why ``path`` cannot be written, or None; checked before a script runs, so
    that a bad -o fails at once instead of after the whole run. ``folder_ok``: a folder
    may be the output (of a target that writes source files, the c target)."""
    if folder_ok and os.path.isdir(path):
        if os.access(path, os.W_OK | os.X_OK):
            return None
        return f"cannot write into the folder {path}; choose another -o path"
    existed = os.path.lexists(path)
    try:
        with open(path, "ab"):
            pass
    except OSError as error:
        return f"cannot write {path}: {error.strerror or error}; choose another -o path"
    if not existed:
        os.remove(path)
    return None


def _exit_status(code: object) -> int:
    """The status for a script's ``sys.exit(code)``: a process can only exit
    with 0-255, so other integers (256 would wrap to 0, "success") become 1."""
    if code is None or code == 0:
        return 0
    return code if isinstance(code, int) and 0 < code < 256 else 1


def _print_user_traceback(error: BaseException, path: str) -> None:
    """Print a traceback starting at the first frame in the user's file."""
    tb = error.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != path:
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb or error.__traceback__, file=sys.stderr)


def _run_script(
    path: str,
    script_args: list[str],
    capture: bool = True,
    command: str = "compile",
    namespace: dict | None = None,
) -> int:
    """Run ``path`` as ``__main__``; 0 on success, else the exit status to report.

    ``namespace``, if given, receives the script's globals.
    """
    saved_argv, saved_path = sys.argv, list(sys.path)
    saved_capture = snapshot_capture_enabled()
    sys.argv = [path, *script_args]
    sys.path.insert(0, os.path.dirname(path))
    set_snapshot_capture(capture)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            result = runpy.run_path(path, run_name="__main__")
            if namespace is not None:
                namespace.update(result)
    except SystemExit as exit_request:
        code = exit_request.code
        status = _exit_status(code)
        if status:
            print(f"cuvil {command}: {path} exited with status {code}", file=sys.stderr)
        return status
    except Exception as error:  # the user's program failed: report it like Python would
        _print_user_traceback(error, path)
        return 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
        set_snapshot_capture(saved_capture)
    return 0


def _header(record: Compilation) -> str:
    origin = "from the disk cache" if record.from_cache else "compiled"
    return (
        f"// cuvil: {record.signature}\n"
        f"//   defined at {record.source}, target {record.target}, "
        f"{origin} in {record.compile_ms:.2f} ms"
    )


def _print_snapshots(record: Compilation) -> None:
    snapshots = list(record.compiled.snapshots)
    if not snapshots:
        print("// (no pass snapshots were recorded for this compilation)")
    for snapshot in snapshots:
        state = "changed" if snapshot["changed"] else "unchanged"
        print(
            f"// -----// IR Dump After {snapshot['name']} "
            f"({snapshot['wall_ms']:.2f} ms, {state}) //----- //"
        )
        print(snapshot["ir"].rstrip("\n"))


def _emit_to_stdout(record: Compilation, kind: str) -> None:
    with tempfile.TemporaryDirectory(prefix="cuvil-emit-") as folder:
        path = os.path.join(folder, f"module.{kind}")
        record.compiled.emit(kind, path)
        with open(path, encoding="utf-8", errors="replace") as artifact:
            sys.stdout.write(artifact.read().rstrip("\n") + "\n")


def _optimize_options(args: argparse.Namespace) -> dict | None:
    """IRModule.optimize's options from --precision/--quantization, or None for float32."""
    if args.precision == "fp32" and args.quantization is None:
        return None
    options = {"precision": args.precision, "quantization": args.quantization}
    if args.quantization:
        options["group_size"] = args.group_size
    return options


def _compile_declared_model(namespace: dict, path: str, args: argparse.Namespace) -> int:
    """Compile the model a file declares (``cuvil_model()`` or ``model``/``example_inputs``)."""
    from ._declared import DeclarationError, compile_declared

    options = _optimize_options(args)
    try:
        declared = compile_declared(namespace, path, options)
        if options and declared is None:
            return _error(
                "--precision/--quantization apply to a model: an ONNX file, or a PyTorch, "
                "JAX or TensorFlow model the file declares (cuvil_model(), or model and "
                "example_inputs); for @cuvil.jit functions build the IR and call "
                "IRModule.optimize(precision=..., quantization=...)",
                2,
            )
    except DeclarationError as error:
        return _error(str(error), 1)
    except Exception as error:  # the model cannot be imported: report it like Python would
        _print_user_traceback(error, path)
        return 1
    return 0


def _input_shapes(items: list[str]) -> dict[str, tuple[int, ...]]:
    shapes = {}
    for item in items:
        name, _, dims = item.partition("=")
        try:
            shapes[name] = tuple(int(d) for d in dims.replace("x", ",").split(",") if d)
        except ValueError:
            raise ValueError(f"--input-shape {item!r}: give NAME=D1,D2,... with int dims") from None
        if not name or not shapes[name]:
            raise ValueError(f"--input-shape {item!r}: give NAME=D1,D2,... with int dims")
    return shapes


def _compile_onnx(path: str, args: argparse.Namespace) -> int:
    """Import and compile an ONNX model with pass snapshots; 0, or 1/2 after an error."""
    from ._errors import TraceError, UnsupportedConstructError
    from .frontends.onnx import load_onnx

    saved_capture = snapshot_capture_enabled()
    set_snapshot_capture(True)
    try:
        shapes = _input_shapes(args.input_shape)
        module = load_onnx(path, input_spec=shapes or None)
        options = _optimize_options(args)
        (module.optimize(**options) if options else module).compile()
    except ValueError as error:  # unreadable model, bad input spec, training-only nodes
        return _error(str(error), 2 if "--input-shape" in str(error) else 1)
    except (UnsupportedConstructError, TraceError, CompileError) as error:
        return _error(str(error), 1)
    finally:
        set_snapshot_capture(saved_capture)
    return 0


def _compile_command(args: argparse.Namespace) -> int:
    path = os.path.abspath(args.file)
    if not os.path.isfile(path):
        return _error(f"no such file: {args.file}", 2)
    emit = args.emit or ("mlir" if args.output else None)
    if emit in binary_artifact_kinds() + PACKAGE_KINDS and not args.output:
        return _error(f"--emit {emit} produces a binary file; give its path with -o OUT", 2)
    # A folder for the source files of a target named on the command line (--target c).
    folder_ok = args.target is not None and args.emit is None
    if args.output and (why := _unwritable(args.output, folder_ok)):
        return _error(why, 2)
    previous_target = previous_override = None
    if args.target is not None:
        try:
            previous_target = set_default_target(args.target)
            previous_override = set_target_override(args.target)
        except ValueError as error:
            return _error(f"--target: {error}", 2)
    already = len(compilations())
    namespace: dict = {}
    try:
        if path.lower().endswith(".onnx"):
            status = _compile_onnx(path, args)
        else:
            status = _run_script(path, args.script_args, namespace=namespace)
            if status == 0:
                status = _compile_declared_model(namespace, path, args)
    finally:
        if previous_target is not None:
            set_default_target(previous_target)
            set_target_override(previous_override)
    if status != 0:
        return status
    records = compilations()[already:]
    if not records:
        return _error(
            f"{args.file} ran but compiled nothing: no @cuvil.jit function was called with "
            "NumPy arrays, or every call fell back to plain Python (see the warnings above), "
            "and it defines no model (cuvil_model(), or model and example_inputs)",
            1,
        )
    for index, record in enumerate(records, start=1):
        if index > 1:
            print()
        print(_header(record))
        if args.print_ir_after_all:
            _print_snapshots(record)
        if emit in PACKAGE_KINDS:
            out = args.output if len(records) == 1 else f"{args.output}.{index}"
            try:
                (export_record if emit == "cuvil" else save_record_irpkg)(record, out)
            except PackageError as error:
                return _error(str(error), 1)
            print(f"// wrote {emit} to {out}")
            continue
        if args.emit is None and args.output and source_kinds(record):
            out = args.output if len(records) == 1 else f"{args.output}.{index}"
            for path in export_sources(record, out):
                print(f"// wrote {path}")
            continue
        if emit and emit not in record.compiled.artifacts:
            return _error(
                f"--emit {emit}: the {record.target} target cannot write it; it writes "
                f"{', '.join(record.compiled.artifacts)}",
                2,
            )
        if emit and args.output:
            out = args.output if len(records) == 1 else f"{args.output}.{index}"
            try:
                record.compiled.emit(emit, out)
            except CompileError as error:
                return _error(str(error), 1)
            print(f"// wrote {emit} to {out}")
        elif emit:
            _emit_to_stdout(record, emit)
        elif not args.print_ir_after_all:
            print(record.compiled.ir("input").rstrip("\n"))
    return 0


def _profile_command(args: argparse.Namespace) -> int:
    from ._profile import profile

    def fail(message: str, code: int) -> int:
        print(f"cuvil profile: error: {message}", file=sys.stderr)
        return code

    path = os.path.abspath(args.file)
    if not os.path.isfile(path):
        return fail(f"no such file: {args.file}", 2)
    if args.runs < 1:
        return fail(f"--runs must be at least 1, not {args.runs}", 2)
    fmt = args.format
    if args.output and fmt is None:
        from ._profiler import output_format

        fmt = output_format(args.output, None)
    if fmt is not None and not args.output:
        return fail("--format needs -o OUT", 2)
    if args.top < 0:
        return fail(f"--top takes a count of rows (0 for all), not {args.top}", 2)
    if args.output and (why := _unwritable(args.output)):
        return fail(why, 2)
    with profile() as prof:
        for _ in range(args.runs):
            status = _run_script(path, args.script_args, capture=False, command="profile")
            if status != 0:
                break
    if status != 0:
        return status
    if prof.trace.event_count == 0:
        return fail(
            f"{args.file} ran but no compiled code ran: no @cuvil.jit function was called "
            "with NumPy arrays, or every call fell back to plain Python",
            1,
        )
    print(f"cuvil profile: {args.file}, {args.runs} run(s), {prof.trace.event_count} events")
    print(prof.table(top=args.top), end="")
    if args.output:
        prof.export(args.output, fmt)
        print(f"cuvil profile: wrote {fmt} trace to {args.output}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cuvil`` console script and ``python -m cuvil``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    script_args: list[str] = []
    if "--" in argv:
        split = argv.index("--")
        argv, script_args = argv[:split], argv[split + 1 :]
    args = _build_parser().parse_args(argv)
    args.script_args = script_args
    if args.command == "compile":
        return _compile_command(args)
    if args.command == "trace":
        return _trace_command(args)
    if args.command == "profile":
        return _profile_command(args)
    if args.command == "package":
        return _package_cli.command(args)
    if args.command == "cache":
        return _cache_cli.command(args)
    return _error(f"unknown command {args.command}", 2)
