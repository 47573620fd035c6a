"""The Workbench worker: runs a model file, reports its compilations and answers requests.

``cuvil-worker`` (an embedded CPython) calls :func:`serve`. Requests arrive as
JSON lines on stdin and replies leave as JSON lines on the file descriptor
given to :func:`serve`; the user's prints and tracebacks stay on stdout and
stderr, which the Workbench shows in its console.

The first reply is ``ready``; its ``protocol`` field is :data:`PROTOCOL_VERSION`,
which the Workbench compares with its own before sending anything else.

Requests (``cmd``): ``run`` (``file``: a Python model file, or an ``.onnx``
model, which is imported and compiled; a Python file that declares a model as
``cuvil compile`` understands it, ``cuvil_model()`` or ``model`` and
``example_inputs``, has that model compiled after it ran), ``execute`` (``index``; the reply
also names a Chrome trace of profiled runs, ``trace``, and what the result was
compared with, ``reference``: "the Python function", "ONNX Runtime",
"PyTorch", "JAX", "TensorFlow"), ``export``
(``index``, ``kind`` in mlir/llvm/asm/obj/so, ``path``), ``ir`` (``index``,
``stage``), ``quit``. ``execute``, ``export`` and ``ir`` may carry the
compilation record's ``target`` unchanged; a request whose target is not the
one the compilation was made for is refused. Every compilation is reported as
it happens with its per-pass snapshots and its ``target``.
"""

from __future__ import annotations

import faulthandler
import functools
import json
import os
import runpy
import shutil
import sys
import tempfile
import time
import traceback

import numpy as np

from . import _jit
from ._declared import compile_declared, onnx_runtime_call
from ._packages import export_record, package_kinds, save_record_irpkg

#: The version of the protocol this module speaks, sent in ``ready``. Bump it with
#: every change a client must know about, together with kWorkerProtocolVersion in
#: app/models/WorkerProtocol.h (the Workbench refuses a worker of another version).
#: 1: unversioned; 2: ``protocol`` in ``ready``, ``target`` in requests.
PROTOCOL_VERSION = 2

#: Profile traces of a worker live in ``<tmp>/cuvil-worker-traces-<pid>-<random>``,
#: removed when it ends; a worker killed with SIGKILL cannot, so each worker removes
#: the folders of workers that are no longer running when it starts.
_TRACE_DIR_PREFIX = "cuvil-worker-traces-"

_MAX_TIMED_RUNS = 200
_PROFILED_RUNS = 20
_TIMING_BUDGET_S = 0.5


class _Recorded:
    """A compilation with what is needed to run it again: its program, inputs and reference.

    ``reference(inputs)`` computes the same outputs without Cuvil: the Python
    function of a ``@cuvil.jit`` call, ONNX Runtime for an ``.onnx`` model, the
    framework (PyTorch, JAX, TensorFlow) for a model a file declares.
    """

    def __init__(
        self, record, program=None, inputs=None, reference=None, compared_with="the Python function"
    ):
        self.record = record
        self.program = program
        self.inputs = inputs
        self.reference = reference
        self.compared_with = compared_with  # what ``reference`` is, for the Workbench


def _copies_per_call(counters: dict) -> str:
    """What a call of GPU code copied, for the Workbench: "" for code that copies
    nothing (the CPU's)."""
    calls = counters.get("calls", 0)
    if not calls:
        return ""

    def size(n: float) -> str:
        return f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} KB"

    to_gpu = counters["host_to_device"] / calls
    back = counters["device_to_host"] / calls
    return (
        f"{to_gpu:.3g} copies to the GPU ({size(counters['host_to_device_bytes'] / calls)}) "
        f"and {back:.3g} back ({size(counters['device_to_host_bytes'] / calls)}) per call, "
        "constants included"
    )


class Worker:
    """Protocol state: the compilations reported so far and the reply channel."""

    def __init__(self, out):
        self.out = out
        self.recorded: list[_Recorded] = []
        self.reported = 0
        self.current_file = None
        self.trace_dir: str | None = None

    # ----- replies --------------------------------------------------------
    def send(self, message: dict) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        self.out.write(json.dumps(message) + "\n")
        self.out.flush()

    def _report_new(self) -> None:
        """Report compilations made since the last report (any front end)."""
        records = _jit.compilations()
        known = {id(r.record) for r in self.recorded}
        for record in records:
            if id(record) not in known:
                self.recorded.append(_Recorded(record))
        while self.reported < len(self.recorded):
            self.send(self._describe(self.reported, self.recorded[self.reported].record))
            self.reported += 1

    @staticmethod
    def _describe(index: int, record) -> dict:
        compiled = record.compiled
        snapshots = [
            {
                "name": s["name"],
                "stage": s["stage"],
                "ms": s["wall_ms"],
                "changed": bool(s["changed"]),
                "ir": s["ir"],
            }
            for s in compiled.snapshots
        ]
        return {
            "type": "compilation",
            "index": index,
            "function": record.function,
            "source": record.source,
            "inputs": [{"dtype": d, "shape": list(s)} for d, s in record.input_types],
            "outputs": [{"dtype": d, "shape": list(s)} for d, s in record.output_types],
            "target": record.target,
            # What this target's compiled code can be exported as: its artifacts, an
            # executable package where it writes loadable code, an IR package always.
            "artifacts": list(compiled.artifacts) + package_kinds(compiled.artifacts),
            "fusion": record.enable_fusion,
            "compile_ms": record.compile_ms,
            "fingerprint": compiled.fingerprint,
            "input_ir": record.mlir,
            "snapshots": snapshots,
        }

    # ----- hooks ----------------------------------------------------------
    def install_hooks(self) -> None:
        """Record each jit compilation's program and arguments, and report it at once."""
        worker = self
        original = _jit.JitFunction._build

        def _build(jit_function, arguments, key):
            before = len(_jit.compilations())
            entry = original(jit_function, arguments, key)
            for record in _jit.compilations()[before:]:
                inputs = [np.array(v, copy=True) for v in arguments.values]
                program = entry if isinstance(entry, _jit.CompiledProgram) else None
                reference = functools.partial(arguments.call, jit_function.__cuvil_function__)
                worker.recorded.append(_Recorded(record, program, inputs, reference))
            worker._report_new()
            return entry

        _jit.JitFunction._build = _build
        _jit.set_snapshot_capture(True)

    # ----- requests -------------------------------------------------------
    def run(self, path: str, target: str | None = None) -> None:
        """Runs the file, compiling every function for ``target`` when given (as
        ``cuvil compile --target`` does: code that cannot run here runs as Python)."""
        from ._targets import set_target_override

        previous = set_target_override(target) if target else None
        try:
            self._run(path)
        finally:
            if target:
                set_target_override(previous)

    def _run(self, path: str) -> None:
        self.current_file = os.path.abspath(path)
        self.send({"type": "started", "file": self.current_file})
        started = time.perf_counter()
        directory = os.path.dirname(self.current_file)
        if directory not in sys.path:
            sys.path.insert(0, directory)
        saved_argv = sys.argv
        sys.argv = [self.current_file]
        ok = True
        try:
            if self.current_file.lower().endswith(".onnx"):
                self._run_onnx()
            else:
                namespace = runpy.run_path(self.current_file, run_name="__main__")
                self._compile_declared(namespace)
        except SystemExit as exit_request:
            code = exit_request.code
            if code not in (None, 0):
                ok = False
                self.send(
                    {
                        "type": "exception",
                        "exc_type": "SystemExit",
                        "message": f"the script called sys.exit({code!r})",
                        "traceback": "",
                        "file": self.current_file,
                        "line": 0,
                    }
                )
        except KeyboardInterrupt:
            ok = False
            self.send({"type": "interrupted", "file": self.current_file})
        except BaseException as error:  # the user's error, reported not raised
            ok = False
            traceback.print_exc()
            self.send(self._exception(error))
        finally:
            sys.argv = saved_argv
        self._report_new()
        seconds = time.perf_counter() - started
        self.send({"type": "finished", "file": self.current_file, "ok": ok, "seconds": seconds})

    def _run_onnx(self) -> None:
        """Import and compile an ONNX model, as `cuvil compile MODEL.onnx` does.

        Its example inputs are seeded random floats and zero integers (valid
        indices); ONNX Runtime, when installed, is the reference of ``execute``.
        """
        from .frontends.onnx import load_onnx

        compiled = load_onnx(self.current_file).compile()
        rng = np.random.default_rng(0)
        inputs = [
            rng.standard_normal(spec.shape).astype(spec.dtype)
            if np.dtype(spec.dtype).kind == "f"
            else np.zeros(spec.shape, spec.dtype)
            for spec in compiled.input_spec.values()
        ]
        try:
            reference = onnx_runtime_call(self.current_file, list(compiled.input_spec))
        except ImportError:
            reference = None
        self.recorded.append(
            _Recorded(compiled.compilation, compiled._entry, inputs, reference, "ONNX Runtime")
        )

    def _compile_declared(self, namespace: dict) -> None:
        """Compile the model the file declares, as `cuvil compile FILE.py` does.

        Its inputs are the file's example inputs and its reference the
        framework's own model, so ``execute`` compares Cuvil with it.
        """
        self._report_new()  # the script's own compilations come first
        declared = compile_declared(namespace, self.current_file)
        if declared is None:
            return
        compiled = declared.compiled
        self.recorded.append(
            _Recorded(
                compiled.compilation,
                compiled._entry,
                declared.inputs(),
                declared.reference,
                declared.framework,
            )
        )

    def _exception(self, error: BaseException) -> dict:
        """The exception at the user's line it names (a model's unsupported node), else at
        the innermost frame in the user's file (else the innermost frame)."""
        frames = traceback.extract_tb(error.__traceback__)
        user = [f for f in frames if os.path.abspath(f.filename) == self.current_file]
        frame = (user or frames or [None])[-1]
        file, line = (frame.filename, frame.lineno) if frame else (self.current_file, 0)
        where = getattr(error, "location", None)
        if getattr(where, "file", None) and getattr(where, "line", 0) > 0:
            file, line = where.file, where.line
        message = str(error)
        limit = os.environ.get("CUVIL_WORKER_MEMORY_LIMIT_MB")
        if isinstance(error, MemoryError) and limit:
            message = (
                f"out of memory: {message or 'an allocation failed'} (the worker may use "
                f"{limit} MiB; CUVIL_WORKER_MEMORY_MB changes it, 0 removes the limit)"
            )
        return {
            "type": "exception",
            "exc_type": type(error).__name__,
            "message": message,
            "traceback": "".join(traceback.format_exception(error)),
            "file": file,
            "line": line,
        }

    def _recorded(self, request) -> _Recorded:
        index = int(request.get("index", -1))
        if not 0 <= index < len(self.recorded):
            raise ValueError(
                f"no compilation #{index}; this worker has {len(self.recorded)} "
                "(run the model file first)"
            )
        rec = self.recorded[index]
        target = request.get("target")
        if target is not None and target != rec.record.target:
            raise ValueError(
                f"compilation #{index} ({rec.record.function}) was compiled for target "
                f"{rec.record.target!r}, not {target!r}; send the target of its "
                "compilation record unchanged"
            )
        return rec

    def execute(self, request) -> None:
        """Time the compiled code on the recorded inputs and compare with its reference."""
        rec = self._recorded(request)
        if rec.program is None or rec.inputs is None:
            raise ValueError(
                f"compilation #{request['index']} ({rec.record.function}) was not made by a "
                "@cuvil.jit call or a model file in this run, so there are no example inputs "
                "to run it on"
            )
        if rec.reference is None:
            raise ValueError(
                f"compilation #{request['index']} ({rec.record.function}) has nothing to "
                "compare with: install onnxruntime to run ONNX models in the Workbench"
            )
        inputs = rec.inputs
        result = rec.program.run(inputs)  # warm-up, and the result to check
        timings = []
        budget_end = time.perf_counter() + _TIMING_BUDGET_S
        while len(timings) < _MAX_TIMED_RUNS and (
            len(timings) < 3 or time.perf_counter() < budget_end
        ):
            t0 = time.perf_counter()
            rec.program.run(inputs)
            timings.append((time.perf_counter() - t0) * 1000.0)
        t0 = time.perf_counter()
        reference = rec.reference([np.array(v, copy=True) for v in inputs])
        reference_ms = (time.perf_counter() - t0) * 1000.0
        got, want = _flatten(result), _flatten(reference)
        if len(got) != len(want):
            raise ValueError(
                f"{rec.record.function}: compiled code returned {len(got)} arrays, "
                f"its reference (the Python function, ONNX Runtime or the model's "
                f"framework) {len(want)}"
            )
        max_error = 0.0
        for g, w in zip(got, want):
            diff = np.abs(np.asarray(g, dtype=np.float64) - np.asarray(w, dtype=np.float64))
            if diff.size:
                max_error = max(max_error, float(np.nanmax(diff)))
        timings.sort()
        copies = _copies_per_call(dict(rec.record.compiled.counters))
        trace_path = self._profile(rec, inputs, len(timings))
        self.send(
            {
                "type": "executed",
                "trace": trace_path,
                "index": int(request["index"]),
                "latency_ms": timings[len(timings) // 2],
                "min_ms": timings[0],
                "runs": len(timings),
                "reference_ms": reference_ms,
                "reference": rec.compared_with,
                "max_error": max_error,
                "outputs": [list(np.shape(g)) for g in got],
                "copies": copies,
            }
        )

    def _profile(self, rec, inputs, runs: int) -> str:
        """Run again under cuvil.profile(); the Chrome trace's path ("" if nothing ran).

        Timed separately from the latency above, so the hooks' cost is not in it.
        """
        from ._profile import profile

        with profile() as prof:
            for _ in range(max(1, min(runs, _PROFILED_RUNS))):
                rec.program.run(inputs)
        if prof.trace.event_count == 0:
            return ""
        # One folder per worker, removed when it ends (see serve).
        if self.trace_dir is None:
            self.trace_dir = tempfile.mkdtemp(prefix=f"{_TRACE_DIR_PREFIX}{os.getpid()}-")
        fd, path = tempfile.mkstemp(prefix="profile-", suffix=".json", dir=self.trace_dir)
        os.close(fd)
        prof.export_chrome_trace(path)
        return path

    def export(self, request) -> None:
        rec = self._recorded(request)
        kind, path = request["kind"], request["path"]
        if kind == "cuvil":
            export_record(rec.record, path)
        elif kind == "irpkg":
            save_record_irpkg(rec.record, path)
        else:
            rec.record.compiled.emit(kind, path)
        self.send(
            {
                "type": "exported",
                "index": int(request["index"]),
                "kind": kind,
                "path": path,
                "bytes": os.path.getsize(path),
            }
        )

    def ir(self, request) -> None:
        rec = self._recorded(request)
        stage = request["stage"]
        text = rec.record.compiled.ir(stage)
        self.send({"type": "ir", "index": int(request["index"]), "stage": stage, "text": text})

    def handle(self, request: dict) -> bool:
        """Answer one request; False when the Workbench asked the worker to quit."""
        command = request.get("cmd")
        handlers = {
            "run": lambda: self.run(request["file"], request.get("target")),
            "execute": lambda: self.execute(request),
            "export": lambda: self.export(request),
            "ir": lambda: self.ir(request),
        }
        if command == "quit":
            return False
        handler = handlers.get(command)
        try:
            if handler is None:
                raise ValueError(f"unknown request {command!r}")
            handler()
        except KeyboardInterrupt:
            self.send({"type": "interrupted", "file": self.current_file})
        except Exception as error:  # a failed request, not a failed worker
            self.send({"type": "error", "request": command, "message": str(error)})
        return True


def _flatten(value) -> list:
    if isinstance(value, (tuple, list)):
        return [item for element in value for item in _flatten(element)]
    if isinstance(value, dict):
        return [item for key in sorted(value) for item in _flatten(value[key])]
    return [np.asarray(value)]


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


def remove_stale_trace_dirs(folder: str | None = None) -> list[str]:
    """Remove the trace folders of workers that are gone; returns the removed paths.

    A folder whose pid names a running process (perhaps a reused pid) is kept.
    """
    folder = folder or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        pid_text = name[len(_TRACE_DIR_PREFIX) :].split("-", 1)[0]
        if not name.startswith(_TRACE_DIR_PREFIX) or not pid_text.isdigit():
            continue
        path = os.path.join(folder, name)
        if int(pid_text) != os.getpid() and not _process_exists(int(pid_text)):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


def serve(fd: int) -> int:
    """Serve requests until stdin closes or ``quit``; returns the process exit code."""
    out = os.fdopen(fd, "w", buffering=1, encoding="utf-8")
    # Requests keep the real stdin; the user's code reads an empty one.
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    faulthandler.enable(file=sys.stderr, all_threads=False)
    remove_stale_trace_dirs()
    worker = Worker(out)
    worker.install_hooks()
    import cuvil  # the version and the extension load up front

    worker.send(
        {
            "type": "ready",
            "protocol": PROTOCOL_VERSION,
            "package": os.path.dirname(os.path.abspath(cuvil.__file__)),
            "pid": os.getpid(),
            "python": sys.version.split()[0],
            "prefix": sys.prefix,
            "numpy": np.__version__,
            # What a run may compile for (the Workbench's target choice).
            "targets": cuvil.available_targets(),
        }
    )
    try:
        for line in requests:
            line = line.strip()
            if not line:
                continue
            try:
                request = json.loads(line)
            except json.JSONDecodeError as error:
                worker.send({"type": "error", "request": None, "message": f"bad request: {error}"})
                continue
            if not worker.handle(request):
                break
    finally:
        if worker.trace_dir is not None:
            shutil.rmtree(worker.trace_dir, ignore_errors=True)
    return 0
