"""``cuvil cache``: where the disk cache of compiled code is, what it holds, and clearing it."""

from __future__ import annotations

import argparse
import os

from ._cache import disk_cache_dir, disk_cache_entries

HELP = """\
Print the disk cache's folder, its entries (compiled code, the text indexes
that find it without building MLIR, and the shape rules' answers that trace
without it) with their size, and its limit.
The folder is CUVIL_CACHE_DIR (default ~/.cache/cuvil); CUVIL_CACHE_MAX_MB
bounds it (default 2048, 0 for no limit): after a compilation adds entries,
the least recently used are removed. CUVIL_DISABLE_DISK_CACHE=1 turns it
off. With --clear, remove every entry (other files in the folder stay).
"""


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "cache",
        help="show or clear the disk cache of compiled code",
        usage="cuvil cache [--clear]",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--clear", action="store_true", help="remove every entry")


def _size(entry: os.DirEntry) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_size
    except OSError:  # removed meanwhile (another process trimming the cache)
        return 0


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def command(args: argparse.Namespace) -> int:
    from ._jit import _extension

    folder = disk_cache_dir()
    if not folder:
        print("cuvil cache: the disk cache is off (CUVIL_DISABLE_DISK_CACHE, or no usable folder)")
        return 0
    entries = disk_cache_entries(folder)
    if args.clear:
        removed, freed = 0, 0
        for entry in entries:
            size = _size(entry)
            try:
                os.remove(entry.path)
            except OSError:
                continue  # gone already, or not ours to remove
            removed, freed = removed + 1, freed + size
        print(f"cuvil cache: removed {removed} entries ({_mib(freed)}) from {folder}")
        return 0
    indexes = sum(e.name.endswith(".index") for e in entries)
    answers = sum(e.name.endswith(".answers") for e in entries)
    size = sum(_size(e) for e in entries)
    limit = _extension().disk_cache_limit_bytes()
    print(f"folder   {folder}")
    compiled = len(entries) - indexes - answers
    print(
        f"entries  {compiled} compiled, {indexes} text indexes, "
        f"{answers} shape answer files, {_mib(size)}"
    )
    print(f"limit    {_mib(limit) if limit else 'none'} (CUVIL_CACHE_MAX_MB)")
    return 0
