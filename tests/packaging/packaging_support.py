"""What the package and wheel tests share."""

from __future__ import annotations

import subprocess


def run(*command, timeout: float = 900, **kwargs) -> subprocess.CompletedProcess:
    """``command`` (paths allowed), its output captured as text."""
    return subprocess.run(
        [str(c) for c in command],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        **kwargs,
    )
