"""The SQLite backend's reads of one session's event rows: all its lines, in order, or
only the last (by the primary key's index)."""

from __future__ import annotations

import sqlite3

__all__ = ["event_lines", "last_event_line"]


def event_lines(db: sqlite3.Connection, session_id: str) -> list[str]:
    """The stored lines of ``session_id``'s events, in order."""
    rows = db.execute("SELECT line FROM events WHERE session=? ORDER BY seq", (session_id,))
    return [row[0] for row in rows]


def last_event_line(db: sqlite3.Connection, session_id: str) -> object:
    """The last of ``event_lines`` (None: none), read by the primary key's index."""
    sql = "SELECT line FROM events WHERE session=? ORDER BY seq DESC LIMIT 1"
    row = db.execute(sql, (session_id,)).fetchone()
    return None if row is None else row[0]
