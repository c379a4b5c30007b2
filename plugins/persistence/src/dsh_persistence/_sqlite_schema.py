"""The schema of the SQLite backend's database (its version is ``PRAGMA user_version``).

``sessions.cwd`` is where a session was started; ``workspaces`` holds where it last ran
when that is elsewhere (a row for the session's ``created``: one an older version left
behind for a deleted session of the same id does not count). Readers that do not know
the table ignore it, so it came without a new schema version.
"""

from __future__ import annotations

__all__ = ["SCHEMA", "SCHEMA_VERSION", "WHERE", "WORKSPACES"]

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
