"""Resident memory of one process compiling many distinct small functions.

    .venv/bin/python benchmarks/memory_compilations.py [--count 5000]

Each function is new (its own constant), so every one is traced, compiled,
loaded and called once; the compiled-code cache is a fresh temporary folder.
Prints the RSS before, every 500 functions, and after, and the growth per
function: `docs/reliability.md` records the figures.
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time

import numpy as np


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def make(i: int):
    import cuvil

    scale = np.float32(1.0 + i / 1000)

    @cuvil.jit
    def fn(x, w):
        return np.tanh(x * scale + w)

    return fn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--report-every", type=int, default=500)
    args = parser.parse_args()
    os.environ["CUVIL_CACHE_DIR"] = tempfile.mkdtemp(prefix="cuvil-memory-")
    import cuvil

    x = np.ones((4, 8), np.float32)
    w = np.ones((4, 8), np.float32)
    make(-1)(x, w)  # imports, first compilation
    gc.collect()
    before, started = rss_mib(), time.perf_counter()
    print(f"functions,rss_mib,seconds  (history bound {len(cuvil.compilations())} kept so far)")
    print(f"0,{before:.1f},0.0")
    for i in range(1, args.count + 1):
        make(i)(x, w)
        if i % args.report_every == 0 or i == args.count:
            gc.collect()
            print(f"{i},{rss_mib():.1f},{time.perf_counter() - started:.1f}", flush=True)
    after = rss_mib()
    growth = (after - before) * 1024 / args.count
    print(f"growth: {after - before:.1f} MiB over {args.count} functions ({growth:.1f} KiB each)")
    print(f"cuvil.compilations() holds {len(cuvil.compilations())}")


if __name__ == "__main__":
    main()
