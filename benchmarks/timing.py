"""Timing helpers the benchmarks share: medians of timed calls and interleaved rounds."""

from __future__ import annotations

import statistics
import time


def median_ms(fn, args=(), runs: int = 100, warmup: int = 10) -> float:
    """Median wall time of ``fn(*args)`` in milliseconds over ``runs`` calls after ``warmup``."""
    for _ in range(warmup):
        fn(*args)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(*args)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def interleaved_rounds(
    variants: dict, rounds: int, pause_s: float = 0.2, settle_s: float = 0.0
) -> dict[str, list[float]]:
    """Call each of ``variants`` (name -> () -> ms) once per round; the times per name.

    The order rotates from round to round so that no variant always runs
    first after the pause, and drift on a shared machine hits all alike.
    ``settle_s`` is a pause before each variant: thread pools that spin after
    their last task (ONNX Runtime's for ~50 ms, OpenBLAS's for ~125 ms) would
    otherwise hold a core while the next variant runs.
    """
    names = list(variants)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(rounds):
        shift = round_index % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            time.sleep(settle_s)
            times[name].append(variants[name]())
        time.sleep(pause_s)
    return times
