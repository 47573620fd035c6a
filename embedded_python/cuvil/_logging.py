"""The ``cuvil`` logger, :class:`LogLevel` and :func:`set_log_level`."""

from __future__ import annotations

import enum
import logging
import os

__all__ = ["LogLevel", "set_log_level", "logger"]

logger = logging.getLogger("cuvil")


class LogLevel(enum.IntEnum):
    """Verbosity of the ``cuvil`` logger; values are the standard ``logging`` levels.

    DEBUG adds compile times, cache hits and IR fingerprints; WARNING (the
    default) reports fallbacks to plain Python.
    """

    DEBUG = logging.DEBUG
    INFO = logging.INFO
    WARNING = logging.WARNING
    ERROR = logging.ERROR


def set_log_level(level) -> None:
    """Set the ``cuvil`` logger's level (a :class:`LogLevel`, a ``logging`` int or a name).

    If the application has not configured logging, a stderr handler is added so
    the messages are visible.
    """
    if isinstance(level, str):
        try:
            level = LogLevel[level.upper()]
        except KeyError:
            names = ", ".join(m.name for m in LogLevel)
            raise ValueError(f"unknown log level {level!r}; use one of {names}") from None
    logger.setLevel(int(level))
    if not logger.hasHandlers():
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("cuvil %(levelname)s: %(message)s"))
        logger.addHandler(handler)


def _configure_from_environment() -> None:
    level = os.environ.get("CUVIL_LOG_LEVEL")
    if level:
        set_log_level(level)


_configure_from_environment()
