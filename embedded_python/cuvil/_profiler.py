"""Python side of the profiler: reading, converting and summarizing trace files.

The work happens in the compiled extension (``cuvil._cuvil.profiler``); this
module gives it a small Python surface used by ``cuvil trace`` and by
``cuvil.profile()``.
"""

from __future__ import annotations

import os

EVENT_KINDS = ("python", "nvtx", "cpu_kernel", "gpu_kernel", "memcpy", "runtime_api", "other")


def _ext():
    from ._jit import _extension

    return _extension().profiler


def output_formats() -> tuple[str, ...]:
    """Trace formats Cuvil writes, from the profiler's format table."""
    return tuple(row[0] for row in _ext().trace_formats() if row[4])


def input_formats() -> tuple[str, ...]:
    """Trace formats Cuvil reads ("auto" detects the format from the content)."""
    return ("auto",) + tuple(row[0] for row in _ext().trace_formats() if row[3])


def trace_error_type() -> type:
    """The exception raised for unreadable traces (a ValueError subclass)."""
    return _ext().TraceError


def read_trace(path: str, format: str = "auto"):
    """Reads a trace file: Chrome JSON (Cuvil, PyTorch, ONNX Runtime), folded
    stacks, speedscope or an Nsight Systems SQLite export."""
    return _ext().read_trace(os.fspath(path), format)


def output_format(path: str | None, requested: str | None) -> str:
    """The format to write: ``requested``, else what the file name suggests,
    else Chrome trace JSON."""
    if requested:
        return requested
    if path:
        guessed = _ext().format_for_path(os.fspath(path))
        if guessed in output_formats():
            return guessed
    return "chrome"


def render(trace, format: str) -> str:
    """The trace as text in one of :func:`output_formats`."""
    if format == "chrome":
        return trace.to_chrome()
    if format == "folded":
        return trace.to_folded()
    if format == "speedscope":
        return trace.to_speedscope()
    raise ValueError(f"cannot write {format!r}; use one of {', '.join(output_formats())}")


def convert(source: str, target: str, format: str | None = None, input_format: str = "auto"):
    """Reads ``source`` and writes it to ``target``; returns the trace."""
    trace = read_trace(source, input_format)
    trace.write(os.fspath(target), output_format(target, format))
    return trace


def _span(trace) -> str:
    if trace.event_count == 0:
        return "0 ms"
    begin, end = trace.time_bounds
    return f"{(end - begin) / 1e6:.3f} ms"


def summary(trace, top: int = 20, kinds=None, group_by: str = "name", title: str = "") -> str:
    """A header line (events, threads, span) and the per-op table."""
    header = (
        f"{title + ': ' if title else ''}{trace.event_count} events on "
        f"{trace.thread_count} threads/streams over {_span(trace)}, "
        f"{trace.flow_count} flows"
    )
    return header + "\n" + trace.summary(top, kinds, group_by)
