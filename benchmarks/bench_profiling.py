"""Cost of kernel profiling: uninstrumented vs instrumented (profiling off) vs profiling on.

Usage: python benchmarks/bench_profiling.py [--runs N] [--warmup N] [--rounds N]

Each bundled example is compiled twice: with the default pipeline (every
kernel bracketed by null-guarded hook calls) and with
``cuvil-instrument-kernels`` disabled. Three variants are then timed in
interleaved rounds (so drift hits all of them alike): the uninstrumented
code, the instrumented code outside a profile (the hook table is null: one
compare per kernel), and the instrumented code inside ``cuvil.profile()``
(two clock reads and one recorded event per kernel, plus the call's Python
stack). The order of the variants rotates from round to round. Reported:
the median over rounds of each round's median, and the ratios to the
uninstrumented code.
"""

from __future__ import annotations

import argparse
import statistics
import sys

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from bench_examples import EXAMPLE_NAMES, load_example  # noqa: E402
from timing import interleaved_rounds, median_ms  # noqa: E402

import cuvil  # noqa: E402


def bench(name: str, runs: int, warmup: int, rounds: int) -> dict:
    module = load_example(name)
    inputs = module.make_inputs()
    fn = getattr(module, name).__wrapped__
    instrumented = cuvil.jit(fn)
    pipeline = cuvil.PipelineBuilder()
    pipeline.disable("cuvil-instrument-kernels")
    plain = cuvil.jit(fn, pipeline=pipeline)
    instrumented(*inputs)
    plain(*inputs)
    kernels = len(instrumented._last_compiled.compiled.kernels)
    assert not plain._last_compiled.compiled.instrumented

    def profiled_ms():
        with cuvil.profile() as prof:
            ms = median_ms(instrumented, inputs, runs, warmup)
        profiled_ms.events = prof.trace.event_count
        return ms

    variants = {
        "plain": lambda: median_ms(plain, inputs, runs, warmup),
        "off": lambda: median_ms(instrumented, inputs, runs, warmup),
        "on": profiled_ms,
    }
    times = interleaved_rounds(variants, rounds)
    events = profiled_ms.events
    row = {k: statistics.median(v) for k, v in times.items()}
    row.update(name=name, kernels=kernels, events=events)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"median over {args.rounds} rounds of the median of {args.runs} calls\n")
    header = (
        f"{'example':<20}{'kernels':>8}{'plain ms':>11}{'off ms':>10}{'on ms':>10}"
        f"{'off/plain':>11}{'on/plain':>10}"
    )
    print(header)
    print("-" * len(header))
    for name in EXAMPLE_NAMES:
        r = bench(name, args.runs, args.warmup, args.rounds)
        print(
            f"{r['name']:<20}{r['kernels']:>8}{r['plain']:>11.3f}{r['off']:>10.3f}{r['on']:>10.3f}"
            f"{r['off'] / r['plain']:>10.3f}x{r['on'] / r['plain']:>9.3f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
