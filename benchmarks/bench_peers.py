"""Times Cuvil against NumPy, PyTorch, torch.compile, ONNX Runtime, JAX and IREE.

Usage: python benchmarks/bench_peers.py [--threads N] [--rounds N] [--only W,...]
       [--peers P,...] [--markdown] [--json OUT] [--no-first-call]

Every peer runs in this one process, pinned to ``--threads`` (CPU affinity,
OpenMP, OpenBLAS, PyTorch, ONNX Runtime and IREE thread settings). Each
round times every peer once (the median of a batch of calls sized to about
``--batch-s`` seconds), the order rotating from round to round; reported are
the median over rounds and the min–max of the round medians, GFLOP/s where
the workload's FLOP count is defined, and the largest absolute difference
from a float64 reference. First-call times (compile included) are measured
in fresh subprocesses: "cold" with an empty compilation cache, "cached"
with the cache the cold run left. Peers missing here are reported as
"not installed". ``make bench-peers`` runs it with IREE on the path
(benchmarks/setup_peers.sh).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
PEER_NAMES = ("cuvil", "numpy", "torch", "torch.compile", "onnxruntime", "jax", "iree")


def pin_threads(threads: int) -> None:
    """Limit this process (and the libraries it will load) to ``threads`` CPUs."""
    cpus = sorted(os.sched_getaffinity(0))[:threads]
    os.sched_setaffinity(0, cpus)
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(threads)


def _prepared(context, peer: str):
    """(callable, None) or (None, reason the peer cannot run the workload)."""
    from peers_engines import PEERS, Unavailable, import_peer, needs_onnx

    try:
        import_peer(peer)  # before exporting: a missing peer costs no export
        if needs_onnx(peer, context.spec):
            context.onnx_path()
        return PEERS[peer][0](context), None
    except ImportError as error:
        return None, f"not installed ({error.name or error})"
    except Unavailable as error:
        return None, str(error)
    except Exception as error:  # a peer's compiler rejecting a workload must not end the run
        lines = str(error).strip().splitlines() or [""]
        # Compilers print a log; its first "error:" line says what went wrong.
        message = next((line for line in lines if "error:" in line), lines[-1]).strip()
        return None, f"failed: {type(error).__name__}: {message[:200]}"


def _max_error(result, reference) -> float:
    import numpy as np

    return float(np.max(np.abs(np.asarray(result, dtype=np.float64) - reference)))


def first_call_ms(workload: str, peer: str, threads: int, cache: str, workdir: str) -> dict:
    """The time to prepare ``peer`` and make its first call, in this (fresh) process."""
    from peers_engines import Context, import_peer, needs_onnx
    from peers_workloads import BY_NAME

    spec = BY_NAME[workload].build()
    context = Context(workload, spec, threads, pathlib.Path(cache), pathlib.Path(workdir))
    try:
        import_peer(peer, spec)
        if needs_onnx(peer, spec):
            context.onnx_path()  # exporting is the model's preparation, not the peer's compile
    except ImportError as error:
        return {"error": f"not installed ({error.name or error})"}
    # The float64 reference was just computed with NumPy: OpenBLAS's workers spin for
    # about 125 ms after it, holding a core the peer's first call would use.
    time.sleep(0.2)
    start = time.perf_counter()
    fn, reason = _prepared(context, peer)
    if fn is None:
        return {"error": reason}
    fn()
    return {"ms": (time.perf_counter() - start) * 1e3}


def _subprocess_first_call(workload, peer, threads, cache, workdir) -> dict:
    env = dict(os.environ)
    # Persistent caches of the peers that have one, under the given folder.
    env["CUVIL_CACHE_DIR"] = os.path.join(cache, "cuvil")
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "inductor")
    env["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    command = [sys.executable, __file__, "--threads", str(threads), "--first-call"]
    command += [workload, peer, cache, workdir]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, json.JSONDecodeError, IndexError) as error:
        return {"error": f"first-call run failed: {type(error).__name__}"}


def _time_peers(callables: dict, rounds: int, batch_s: float) -> dict:
    from timing import interleaved_rounds, median_ms

    variants = {}
    for peer, fn in callables.items():
        start = time.perf_counter()
        fn()
        once = time.perf_counter() - start
        runs = max(1, min(200, int(batch_s / max(once, 1e-6))))
        variants[peer] = lambda fn=fn, runs=runs: median_ms(fn, (), runs, min(runs, 3))
    # Each peer starts on idle cores: another engine's spinning workers are not
    # part of its time (see interleaved_rounds).
    return interleaved_rounds(variants, rounds, settle_s=0.2)


def bench_workload(workload, peers, args, workdir: pathlib.Path) -> dict:
    from peers_engines import Context

    row = {"name": workload.name, "title": workload.title, "flops": workload.flops, "peers": {}}
    spec = workload.build()
    context = Context(workload.name, spec, args.threads, workdir / "cache", workdir)
    callables = {}
    for peer in peers:
        fn, reason = _prepared(context, peer)
        if fn is not None:
            try:
                row["peers"][peer] = {"max_error": _max_error(fn(), spec.reference)}
                callables[peer] = fn
                continue
            except Exception as error:
                reason = f"failed: {type(error).__name__}: {str(error)[:160]}"
        row["peers"][peer] = {"error": reason}
    for peer, times in _time_peers(callables, args.rounds, args.batch_s).items():
        result = row["peers"][peer]
        result.update(ms=statistics.median(times), min_ms=min(times), max_ms=max(times))
        if workload.flops:
            result["gflops"] = workload.flops / result["ms"] / 1e6
    if args.first_call_times:
        for peer in callables:
            with tempfile.TemporaryDirectory(prefix="cuvil-bench-cache-") as cache:
                for kind in ("cold", "cached"):
                    outcome = _subprocess_first_call(
                        workload.name, peer, args.threads, cache, str(workdir)
                    )
                    row["peers"][peer][f"{kind}_ms"] = outcome.get("ms")
    return row


def _print_row(row: dict) -> None:
    print(f"\n{row['name']}: {row['title']}")
    for peer, r in row["peers"].items():
        if "ms" not in r:
            print(f"  {peer:<14} {r.get('error', 'no result')}")
            continue
        gflops = f"{r['gflops']:7.1f} GFLOP/s" if "gflops" in r else " " * 15
        first = ""
        if r.get("cold_ms") is not None:
            first = f"  first call cold {r['cold_ms']:9.1f} ms"
            first += f", cached {r['cached_ms']:9.1f} ms" if r.get("cached_ms") else ""
        print(
            f"  {peer:<14}{r['ms']:10.3f} ms [{r['min_ms']:.3f}–{r['max_ms']:.3f}] "
            f"{gflops}  err {r['max_error']:.1e}{first}",
            flush=True,
        )


def _cell(result: dict, what: str) -> str:
    if "ms" not in result:
        return "not installed" if result.get("error", "").startswith("not installed") else "–"
    if what == "time":
        text = f"{result['ms']:.3f} ({result['min_ms']:.3f}–{result['max_ms']:.3f})"
        if "gflops" not in result:
            return text
        gflops = result["gflops"]
        return text + (f" {gflops:.0f} GF/s" if gflops >= 10 else f" {gflops:.1f} GF/s")
    if what == "error":
        return f"{result['max_error']:.1e}"
    cold, cached = result.get("cold_ms"), result.get("cached_ms")
    if cold is None:
        return "–"
    return f"{cold / 1e3:.2f} / {cached / 1e3:.2f}" if cached else f"{cold / 1e3:.2f} / –"


def markdown(rows: list[dict], peers: list[str]) -> str:
    """The README's tables: ms median (min–max) and GFLOP/s; first call s; max error."""
    out = []
    captions = {
        "time": "Median ms (min–max over rounds), GFLOP/s where defined:",
        "first": "First call in a fresh process, compile included, seconds (cold / cached):",
        "error": "Largest absolute difference from float64:",
    }
    if not any("cold_ms" in r for row in rows for r in row["peers"].values()):
        del captions["first"]  # --no-first-call
    for what, caption in captions.items():
        out += [caption, "", "| workload | " + " | ".join(peers) + " |"]
        out.append("|---" * (len(peers) + 1) + "|")
        for row in rows:
            cells = [_cell(row["peers"].get(p, {}), what) for p in peers]
            out.append(f"| {row['title']} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def environment(args) -> dict:
    import numpy as np

    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()} {os.cpu_count()} CPUs",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "threads": args.threads,
        "rounds": args.rounds,
        "load_average": os.getloadavg(),
    }


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--batch-s", type=float, default=0.1, help="seconds per timed batch")
    parser.add_argument("--only", help="comma-separated workloads (default: all but matmul_small)")
    parser.add_argument("--peers", default=",".join(PEER_NAMES), help="comma-separated peers")
    parser.add_argument("--markdown", action="store_true", help="also print the README tables")
    parser.add_argument("--json", type=pathlib.Path, help="write the results to this file")
    parser.add_argument(
        "--no-first-call", dest="first_call_times", action="store_false", help="skip compile times"
    )
    parser.add_argument("--first-call", nargs=4, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_arguments(argv)
    pin_threads(args.threads)
    sys.path.insert(0, str(HERE))
    if args.first_call:
        print(
            json.dumps(
                first_call_ms(
                    args.first_call[0], args.first_call[1], args.threads, *args.first_call[2:]
                )
            )
        )
        return 0
    from peers_workloads import BY_NAME, DEFAULT_WORKLOADS
    from threadpoolctl import threadpool_limits

    names = args.only.split(",") if args.only else DEFAULT_WORKLOADS
    peers = args.peers.split(",")
    unknown = [n for n in names if n not in BY_NAME] + [p for p in peers if p not in PEER_NAMES]
    if unknown:
        choices = ", ".join(list(BY_NAME) + list(PEER_NAMES))
        sys.exit(
            f"bench_peers: unknown workload or peer {', '.join(unknown)}; choose from {choices}"
        )
    limits = threadpool_limits(args.threads)  # noqa: F841 (kept for the whole run)
    info = environment(args)
    print(", ".join(f"{k} {v}" for k, v in info.items()), flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="cuvil-bench-peers-") as folder:
        for name in names:
            rows.append(bench_workload(BY_NAME[name], peers, args, pathlib.Path(folder)))
            _print_row(rows[-1])
    if args.markdown:
        print("\n" + markdown(rows, peers))
    if args.json:
        args.json.write_text(json.dumps({"environment": info, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
