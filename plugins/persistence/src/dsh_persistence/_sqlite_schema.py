"""The schema of the SQLite backend's database (its version is ``PRAGMA user_version``),
and whether a file holds it (``missing``, ``no_schema``: read without changing it).

``sessions.cwd`` is where a session was started; ``workspaces`` holds where it last ran
when that is elsewhere (a row for the session's ``created``: one an older version left
behind for a deleted session of the same id does not count). Readers that do not know
the table ignore it, so it came without a new schema version.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

__all__ = ["SCHEMA", "SCHEMA_VERSION", "WHERE", "WORKSPACES", "missing", "no_schema"]

#: The newest schema this code reads and the one it creates.
SCHEMA_VERSION = 1
#: Added to schema 1 when a database is opened (older ones do not have it).
WORKSPACES = """
CREATE TABLE IF NOT EXISTS workspaces (
    session TEXT PRIMARY KEY,
    created REAL NOT NULL,
    workspace TEXT NOT NULL
) WITHOUT ROWID"""
#: Where each stored session last ran: the workspace its last turn was written from.
WHERE = (
    "COALESCE((SELECT workspace FROM workspaces WHERE session=sessions.id AND "
    "created=sessions.created), cwd)"
)
SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    turns INTEGER NOT NULL,
    title TEXT NOT NULL,
    cwd TEXT NOT NULL,
    meta TEXT NOT NULL,
    next_seq INTEGER NOT NULL
) WITHOUT ROWID""",
    """
CREATE TABLE IF NOT EXISTS events (
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    line TEXT NOT NULL,
    PRIMARY KEY (session, seq)
) WITHOUT ROWID""",
    WORKSPACES,
)


def missing(path: Path) -> bool:
    """Nothing is at ``path`` (a path that cannot be looked at is left for opening it
    to report, naming the setting)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def no_schema(path: Path) -> bool:
    """``path`` is a SQLite database (or an empty file) without the sessions' schema
    (``user_version`` 0), looked at read-only, so changing nothing. One that cannot be
    read so (not a database, locked) is left for opening it to report or wait for."""
    try:
        uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
        with closing(sqlite3.connect(uri, uri=True)) as db:
            return int(db.execute("PRAGMA user_version").fetchone()[0]) == 0
    except (OSError, ValueError, sqlite3.Error):
        return False
