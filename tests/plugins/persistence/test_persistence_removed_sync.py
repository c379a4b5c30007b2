"""A store removed after a non-durable write (a checkpoint), then a durable flush that
holds no new events: it only syncs.

SQLite's ``sync`` refuses a database removed since the session was written to it; the
writer used to keep believing the events stored, so that flush raised once and every
later one "succeeded" while the new database held nothing of the session (lost when the
process ended with no new event). Now the failed sync makes the next flush ask the
backend where the log ends and store it whole, as after a failed append
(docs/persistence.md: "the first flush after the removal fails ... and the next one
writes the session's whole log").
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dsh.session import Session
from dsh_persistence import PersistenceError, PersistenceSettings, open_backend
from dsh_persistence._writer import SessionWriter
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def test_a_failed_sync_after_the_database_was_removed_stores_the_log_again(
    tmp_path: Path,
) -> None:
    settings = PersistenceSettings(backend="sqlite", directory=tmp_path / "sessions")
    log = LogBuilder()
    log.turn("one")
    backend = open_backend(settings)
    try:
        writer = SessionWriter(backend, Session("s", list(log.events)), settings)
        writer.write(False)  # a checkpoint: not synced yet
        shutil.rmtree(tmp_path / "sessions")
        with pytest.raises(PersistenceError, match="removed or replaced"):
            writer.write(True)  # the flush: nothing new, only the sync
        writer.write(True)
    finally:
        backend.close()

    reader = open_backend(settings)
    try:
        loaded = reader.load("s")
    finally:
        reader.close()
    assert loaded is not None
    assert loaded.kept == len(log.events)
