"""The schema of the SQLite backend's database (its version is ``PRAGMA user_version``),
whether a file holds it (``missing``, ``no_schema``) and whether a database is dsh's at
all (``not_dsh``), each read without changing it.

A database dsh creates is marked ``PRAGMA application_id`` = ``APPLICATION_ID``; one
created before that mark (``application_id`` 0) is known by its tables: another
program's own first migration sets ``user_version`` 1 too, and its ``sessions`` and
``events`` are not dsh's to read, stamp or delete from.

``sessions.cwd`` is where a session was started; ``workspaces`` holds where it last ran
when that is elsewhere (a row for the session's ``created``: one an older version left
behind for a deleted session of the same id does not count). Readers that do not know
the table ignore it, so it came without a new schema version.

Each look reads the database in one snapshot (``_one_snapshot``): read statement by
statement, a look taken while another process created the schema saw ``user_version``
0 from before its commit and the tables from after it, another program's database.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from dsh_persistence._errors import SessionCorruptError, SessionFormatError

__all__ = [
    "APPLICATION_ID",
    "SCHEMA",
    "SCHEMA_VERSION",
    "WHERE",
    "WORKSPACES",
    "checked_version",
    "missing",
    "no_schema",
    "not_dsh",
]

#: The newest schema this code reads and the one it creates.
SCHEMA_VERSION = 1
#: ``PRAGMA application_id`` of a dsh session database: "dshs" in ASCII.
APPLICATION_ID = 0x64736873
#: The columns of each of dsh's tables: a table of that name without them is not dsh's.
COLUMNS = {
    "sessions": {"id", "created", "updated", "turns", "title", "cwd", "meta", "next_seq"},
    "events": {"session", "seq", "line"},
    "workspaces": {"session", "created", "workspace"},
}
#: The tables every dsh database of ``user_version`` 1 or later has (``workspaces``
#: came later, without a new version).
_REQUIRED = ("sessions", "events")
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
    """``path`` is an empty SQLite database (or an empty file): ``user_version`` 0 and
    not another program's by ``not_dsh``, looked at read-only,
    so changing nothing. One that cannot be read so (not a database, locked), or that
    ``not_dsh`` refuses, is left for opening it to report (or wait for)."""
    try:
        uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
        with closing(sqlite3.connect(uri, uri=True)) as db, _one_snapshot(db):
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            return version == 0 and not_dsh(db) is None
    except (OSError, ValueError, sqlite3.Error):
        return False


def checked_version(db: sqlite3.Connection, where: str) -> int:
    """The schema version of ``db`` (``where``: its path and setting, for messages),
    which is dsh's (``not_dsh``) and not newer, read only: else a
    ``SessionFormatError``, before anything is changed; a ``SessionCorruptError`` for
    one marked as dsh's that lacks its tables."""
    with _one_snapshot(db):
        return _checked_version(db, where)


def _checked_version(db: sqlite3.Connection, where: str) -> int:
    reason = not_dsh(db)
    if reason is not None:
        raise SessionFormatError(
            f"{where}: not a dsh session database ({reason}); it was not changed"
        )
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise SessionFormatError(
            f"{where}: session database schema version {version} is newer than "
            f"this dsh-persistence reads (up to {SCHEMA_VERSION}); upgrade "
            "dsh-persistence to open it. The database was not changed."
        )
    absent = _absent(db) if version > 0 else []
    if absent:  # marked as dsh's (else ``not_dsh`` refused it)
        raise SessionCorruptError(
            f"{where}: the session database is damaged: user_version {version}, but no "
            f"table {', '.join(absent)}; it was not changed"
        )
    lacking = _lacking(db)
    if lacking is not None:  # marked as dsh's: changed by hand or another program
        raise SessionCorruptError(
            f"{where}: the session database is damaged: {lacking}; it was not changed"
        )
    return version


def not_dsh(db: sqlite3.Connection) -> str | None:
    """Why the database ``db`` is not a dsh session database (None when it may be one:
    dsh's mark, or no mark and nothing that contradicts it), read without changing it:
    another program's ``application_id``; a table of dsh's name without dsh's columns;
    a ``user_version`` of 1 or more without dsh's mark nor its tables; ``user_version``
    0 and anything in it (a Django ``db.sqlite3``, a view named ``sessions``): dsh
    creates its schema only in an empty database. (Its callers read it in one snapshot.)"""
    application = int(db.execute("PRAGMA application_id").fetchone()[0])
    if application == APPLICATION_ID:
        return None
    if application != 0:
        return f"its application_id is {application:#010x}, not dsh's {APPLICATION_ID:#010x}"
    lacking = _lacking(db)
    if lacking is not None:
        return lacking.replace(" has no column", " is another program's: no column", 1)
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version == 0:  # dsh creates its schema only in an empty database
        names = [row[0] for row in db.execute("SELECT name FROM sqlite_master LIMIT 4")]
        if names:
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            return f"user_version 0, and it holds another program's tables: {shown}"
        return None
    absent = _absent(db)
    if absent:
        return f"user_version {version}, but no table {', '.join(absent)}"
    return None


def _lacking(db: sqlite3.Connection) -> str | None:
    """Which of dsh's tables in ``db`` lacks which of dsh's columns, said (None: none)."""
    for table, columns in COLUMNS.items():
        found = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if found and not columns <= found:
            return f"its table {table!r} has no column {', '.join(sorted(columns - found))}"
    return None


def _absent(db: sqlite3.Connection) -> list[str]:
    """Which of the tables every dsh database of ``user_version`` 1 or later has are not
    in ``db``."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return [table for table in _REQUIRED if table not in tables]


@contextmanager
def _one_snapshot(db: sqlite3.Connection) -> Iterator[None]:
    """The reads of ``db`` inside see one state of the database: a read transaction
    unless ``db`` is in one already."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN")
    try:
        yield
    finally:
        db.rollback()  # nothing was written; a no-op if the transaction ended
