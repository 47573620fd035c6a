"""``with cuvil.profile() as prof:`` — time compiled calls and every kernel they run.

While a profile is recorded, each call of compiled code records a Python event
(named after the function, with the caller's Python stack) and one event per
kernel (loop nest or fused region) named after the IR ops it runs, with their
source location: the chain *Python line → IR op → kernel*. Outside a profile
compiled code gets a null hook table, one compare per kernel.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["profile", "Profile", "OpStats"]


@dataclass(frozen=True)
class OpStats:
    """One row of :meth:`Profile.key_averages`; times in milliseconds."""

    name: str
    kind: str  # "python" (a compiled call) or "cpu_kernel"
    location: str  # the user's file:line:col of the IR op, "" for calls
    count: int
    total_ms: float
    self_ms: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    node: str = ""  # the model node the op came from (ONNX/FX node name), "" if none


def _profiler():
    from ._jit import _extension

    return _extension().profiler


class Profile:
    """A recorded profile; also the context manager that records it."""

    def __init__(self):
        self._trace = None
        self.gpu_note = None
        self._recording = False

    def __enter__(self) -> Profile:
        prof = _profiler()
        if prof.recording():
            raise RuntimeError(
                "cuvil.profile: a profile is already being recorded in this process; "
                "profiles do not nest (end the outer `with cuvil.profile()` first)"
            )
        prof.clear_recording()
        prof.set_recording(True)
        self._recording = True
        return self

    def __exit__(self, *exc_info) -> None:
        prof = _profiler()
        prof.set_recording(False)
        self._recording = False
        self._trace = prof.take_trace("cuvil")
        #: Why the GPU lanes are missing although GPU code ran (no libcupti, no GPU
        #: driver), else ``None``; GPU kernels then appear by their launches only.
        self.gpu_note = prof.gpu_lanes_problem() or None

    @property
    def trace(self):
        """The recorded ``cuvil._cuvil.profiler.Trace`` (events, flows, call tree)."""
        if self._trace is None:
            raise RuntimeError(
                "cuvil.profile: nothing recorded yet; use it as `with cuvil.profile() as prof:`"
                " and read the results after the block"
            )
        return self._trace

    def key_averages(self, kind: str | None = None) -> list[OpStats]:
        """Per IR op (and per compiled call): count, total, self, p50, p99; slowest first."""
        kinds = None if kind is None else [kind]
        rows = self.trace.op_table(kinds=kinds, group_by="op")
        ms = 1e-6
        return [
            OpStats(
                name=r["name"],
                kind=r["kind"],
                location=r["loc"],
                count=int(r["count"]),
                total_ms=r["total_ns"] * ms,
                self_ms=r["self_ns"] * ms,
                p50_ms=r["p50_ns"] * ms,
                p99_ms=r["p99_ns"] * ms,
                max_ms=r["max_ns"] * ms,
                node=r["node"],
            )
            for r in rows
        ]

    def table(self, top: int = 20) -> str:
        """The per-op table as text (``top`` rows, 0 for all)."""
        return self.trace.summary(top=top)

    def export_chrome_trace(self, path: str) -> None:
        """Chrome trace-event JSON (opens in Perfetto and chrome://tracing)."""
        self.export(path, "chrome")

    def export_stacks(self, path: str) -> None:
        """Folded stacks (``frame;frame;kernel nanoseconds`` per line) for flame graph tools."""
        self.export(path, "folded")

    def export_speedscope(self, path: str) -> None:
        self.export(path, "speedscope")

    def export(self, path: str, format: str = "chrome") -> None:
        from ._profiler import output_formats

        if format not in output_formats():
            raise ValueError(
                f"cuvil.profile: unknown format {format!r}; choose one of "
                f"{', '.join(output_formats())}"
            )
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise FileNotFoundError(
                f"cuvil.profile: cannot write {path}: directory {directory} does not exist"
            )
        self.trace.write(path, format)

    def __repr__(self) -> str:
        if self._trace is None:
            return "<cuvil.Profile (recording)>" if self._recording else "<cuvil.Profile (empty)>"
        return f"<cuvil.Profile {self._trace.event_count} events>"


def profile() -> Profile:
    """Record compiled calls and their kernels: ``with cuvil.profile() as prof: f(x)``."""
    return Profile()
