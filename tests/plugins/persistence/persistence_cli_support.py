"""Stored sessions and a ``dsh`` runner shared by the ``dsh sessions`` command tests
(test_persistence_cli_*.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh.cli import main
from dsh_persistence import PersistenceSettings, SessionInfo, open_backend
from dsh_persistence.testing import LogBuilder


def store(
    settings: PersistenceSettings,
    session_id: str,
    log: LogBuilder,
    meta: dict[str, Any] | None = None,
) -> None:
    backend = open_backend(settings)
    try:
        info = SessionInfo(session_id, log.events[0].time, meta=meta or {}, title="x")
        backend.append(info, log.events, durable=True)
    finally:
        backend.close()


def two_sessions(settings: PersistenceSettings) -> LogBuilder:
    old = LogBuilder(start=1_600_000_000.0)
    old.turn("an old question", calls=())
    store(settings, "old-session", old)
    new = LogBuilder(start=1_700_000_000.0)
    new.turn("what is 1+2?")
    new.turn("thanks", calls=())
    store(settings, "new-session", new)
    return new


def run(config: Path, *args: str, model: str | None = None) -> int:
    chosen = ["-m", model] if model else []
    return main(["-c", str(config), *chosen, "sessions", *args])
