"""Compilation caches: per-signature in memory, and the on-disk cache directory setting."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Hashable

from ._logging import logger

__all__ = ["disk_cache_dir", "disk_cache_entries", "SignatureCache"]

#: Cache entries are named by a 64-hex-digit key and an extension (compiled
#: code: ".so", ".wasm"; text indexes: ".index"; ".tmp" while being written).
_ENTRY = re.compile(r"[0-9a-f]{64}\..+")


def disk_cache_dir() -> str:
    """Directory for the compiler's persistent cache, or ``""`` when disabled.

    ``CUVIL_DISABLE_DISK_CACHE=1`` disables it; ``CUVIL_CACHE_DIR`` overrides the
    default ``~/.cache/cuvil``. An unusable directory disables it too.
    """
    if os.environ.get("CUVIL_DISABLE_DISK_CACHE", "").strip() not in ("", "0"):
        return ""
    path = os.environ.get("CUVIL_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "cuvil"
    )
    path = os.path.abspath(os.path.expanduser(path))
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as error:
        logger.debug("disk cache disabled: cannot create %s (%s)", path, error)
        return ""
    return path


def disk_cache_entries(path: str) -> list[os.DirEntry]:
    """The cache entries in ``path`` (regular files named as the compiler names them);
    nothing else there (other files, the frameworks' folders) is an entry."""
    try:
        with os.scandir(path) as listing:
            return [
                e for e in listing if _ENTRY.fullmatch(e.name) and e.is_file(follow_symlinks=False)
            ]
    except OSError:
        return []


class SignatureCache:
    """Thread-safe map from an argument signature to a compiled (or fallback) entry."""

    def __init__(self):
        self._entries: dict[Hashable, object] = {}
        self._lock = threading.Lock()
        # Held while tracing/compiling so concurrent first calls compile once.
        self.build_lock = threading.RLock()

    def get(self, key: Hashable):
        """The entry for ``key`` or ``None``."""
        return self._entries.get(key)

    def put(self, key: Hashable, entry) -> None:
        """Store ``entry`` for ``key``."""
        with self._lock:
            self._entries[key] = entry

    def pop(self, key: Hashable) -> None:
        """Forget the entry for ``key``, if any."""
        with self._lock:
            self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every entry (the next call per signature traces again)."""
        with self._lock:
            self._entries.clear()
