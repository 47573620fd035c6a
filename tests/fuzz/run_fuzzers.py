"""Seeds and runs the libFuzzer targets of tests/fuzz (`make fuzz`, CTest label `fuzz`).

Seeds come from the test fixtures each run (nothing is copied by hand): Chrome traces from
tests/profiler/fixtures and tests/app/profiler/fixtures, speedscope and folded stacks written from
them by the profiler's writers (cuvil-fuzz-make-seeds) plus the folded goldens, an Nsight Systems
SQLite export in the schema the reader takes, each line of tests/app/fixtures/*.jsonl, and each
`// -----` split of tests/lit/**/*.mlir. Every target also replays tests/fuzz/regressions/<target>.
The growing corpus lives in BUILD/fuzz-corpus/<target>, findings in BUILD/fuzz-crashes/<target>.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "tests" / "fuzz"
CHROME_FIXTURES = sorted(
    [*(ROOT / "tests/profiler/fixtures").glob("*.json")]
    + [*(ROOT / "tests/app/profiler/fixtures").glob("*.json")]
)


def copy_all(files, out: Path) -> None:
    for f in files:
        shutil.copy(f, out / f.name)


def write_nsys_seed(path: Path) -> None:
    """An export in the shape `nsys export --type sqlite` writes, the tables the reader reads."""
    tid, pid = (4242 << 24) | 4243, 4242 << 24
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO StringIds VALUES (1,'cudaLaunchKernel_v7000'),(2,'void gemm<float>(float*)'),"
        "(3,'gemm'),(4,'cudaMemcpyAsync_v3020'),(5,'cuvil'),(6,'forward'),(7,'main thread');"
        "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
        " rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
        " endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,"
        " int64Value INTEGER, doubleValue REAL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,"
        " nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
        " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,"
        " shortName INTEGER NOT NULL, gridX INTEGER, blockX INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
        " correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,"
        " copyKind INTEGER NOT NULL);"
        "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);"
    )
    db.executemany(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, int64Value)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (50, None, 75, "cuvil", tid, 1, None),
            (100, 1000, 59, "forward", tid, 0, 99),
            (200, 600, 59, "cuvil.matmul", tid, 1, 12),
        ],
    )
    db.execute(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (300, 350, 1, ?, 77, 1, 0, NULL)", (tid,)
    )
    db.execute(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (400, 550, 0, 1, 7, 77, ?, 2, 3, 4, 128)",
        (pid,),
    )
    db.execute(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (820, 880, 0, 1, 7, 78, ?, 4096, 2)", (pid,)
    )
    db.execute("INSERT INTO ThreadNames VALUES (7, 0, ?)", (tid,))
    db.commit()
    db.close()


def chrome_seeds(build: Path, out: Path) -> None:
    copy_all(CHROME_FIXTURES, out)


def written_seeds(build: Path, out: Path) -> None:
    """speedscope or folded stacks (by out's name) written from the Chrome fixtures."""
    tmp = out.parent / (out.name + ".all")
    for kind in ("speedscope", "folded-stacks"):
        (tmp / kind).mkdir(parents=True, exist_ok=True)
    subprocess.run([build / "tests/fuzz/cuvil-fuzz-make-seeds", tmp, *CHROME_FIXTURES], check=True)
    copy_all((tmp / out.name).iterdir(), out)
    shutil.rmtree(tmp)
    if out.name == "folded-stacks":
        copy_all((ROOT / "tests/profiler/golden").glob("*.*folded"), out)


def nsys_seeds(build: Path, out: Path) -> None:
    write_nsys_seed(out / "nsys-export.sqlite")


def worker_seeds(build: Path, out: Path) -> None:
    for jsonl in (ROOT / "tests/app/fixtures").glob("*.jsonl"):
        for i, line in enumerate(jsonl.read_bytes().splitlines()):
            (out / f"{jsonl.stem}-{i}.json").write_bytes(line)


def dialect_seeds(build: Path, out: Path) -> None:
    for mlir in sorted((ROOT / "tests/lit").rglob("*.mlir")):
        name = str(mlir.relative_to(ROOT / "tests/lit")).replace("/", "-")
        for i, part in enumerate(re.split(r"^// -----\s*$", mlir.read_text(), flags=re.M)):
            (out / f"{name}-{i}.mlir").write_text(part)


def package_seeds(build: Path, out: Path) -> None:
    """IR and executable packages written by the package writer itself."""
    subprocess.run([build / "tests/fuzz/cuvil-fuzz-make-package-seeds", out], check=True)


SEEDS = {
    "chrome-trace": chrome_seeds,
    "speedscope": written_seeds,
    "folded-stacks": written_seeds,
    "nsys-sqlite": nsys_seeds,
    "worker-protocol": worker_seeds,
    "cuvil-dialect": dialect_seeds,
    "package": package_seeds,
}


def run_target(build: Path, target: str, seconds: int, smoke: bool, extra: list[str]) -> int:
    """Rewrites the target's seeds, then fuzzes for `seconds`; libFuzzer's exit status.

    A smoke run starts from the seeds and regressions alone (an empty corpus each time), so
    its duration does not grow with the corpus of earlier long runs.
    """
    seeds = build / "fuzz-seeds" / target
    shutil.rmtree(seeds, ignore_errors=True)
    seeds.mkdir(parents=True)
    SEEDS[target](build, seeds)
    corpus = build / ("fuzz-smoke-corpus" if smoke else "fuzz-corpus") / target
    if smoke:
        shutil.rmtree(corpus, ignore_errors=True)
    crashes = build / "fuzz-crashes" / target
    regressions = HERE / "regressions" / target
    for d in (corpus, crashes):
        d.mkdir(parents=True, exist_ok=True)
    dirs = [corpus, seeds] + ([regressions] if regressions.is_dir() else [])
    cmd = [
        str(build / "tests/fuzz" / f"fuzz-{target}"),
        f"-max_total_time={seconds}",
        f"-artifact_prefix={crashes}/",
        "-print_final_stats=1",
        "-timeout=25",
        "-rss_limit_mb=2048",
        *extra,
        *map(str, dirs),
    ]
    print("run:", " ".join(cmd), flush=True)
    return subprocess.run(cmd).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build-fuzz")
    parser.add_argument(
        "--seconds",
        type=int,
        default=int(os.environ.get("FUZZ_SECONDS", "100")),
        help="per target (default $FUZZ_SECONDS or 100: 10 minutes for the six)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="CTest's run: $FUZZ_SMOKE_SECONDS (default 5) per target from the seeds alone",
    )
    parser.add_argument("targets", nargs="*", help=f"default: all of {', '.join(SEEDS)}")
    args, extra = parser.parse_known_args()
    unknown = [t for t in args.targets if t not in SEEDS]
    if unknown:
        parser.error(f"no fuzz target {', '.join(unknown)}; the targets are {', '.join(SEEDS)}")
    build = args.build.resolve()
    targets = args.targets or list(SEEDS)
    seconds = int(os.environ.get("FUZZ_SMOKE_SECONDS", "5")) if args.smoke else args.seconds
    failed = [t for t in targets if run_target(build, t, seconds, args.smoke, extra) != 0]
    if failed:
        print(
            f"fuzz: {', '.join(failed)} found a crash; the input is in "
            f"{build}/fuzz-crashes/<target>/ (see tests/fuzz/README.md)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
