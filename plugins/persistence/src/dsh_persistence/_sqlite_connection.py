"""The SQLite backend's connection: opening it (creating the database and its schema),
its transactions, and whether it still writes the database file at its path.

An open connection keeps reading and writing a database file that was removed (its
inode lives on while it is open) or replaced (another file moved over it), and every
write "succeeds" into a file no one will read again. The backend records the file's
identity when it connects (``file_id``) and compares it, one ``stat``, before each
use: a database no longer there is let go of (``let_go_of_moved``) and the path opened
anew.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from dsh_persistence._errors import PersistenceError
from dsh_persistence._opening import set_up
from dsh_persistence._sqlite_schema import APPLICATION_ID, SCHEMA, SCHEMA_VERSION, WORKSPACES

__all__ = ["FileId", "file_id", "let_go_of_moved", "mark", "open_database", "transaction"]

#: (st_dev, st_ino): which file a path leads to
FileId = tuple[int, int]


def open_database(
    path: Path,
    timeout: float,
    unusable: Callable[[str, object], PersistenceError],
    check_version: Callable[[sqlite3.Connection], int],
) -> tuple[sqlite3.Connection, FileId | None]:
    """A connection to the database ``path`` (created, with its schema, if missing; in
    WAL mode), and the file it opened: taken before connecting, so that a file
    replaced meanwhile is taken for moved (and opened again), never the other way.
    ``check_version`` (which raises for another program's database, or a newer one)
    reads it before anything is changed, and again in the transaction that creates
    the schema (and marks the new database with ``APPLICATION_ID``). A database
    created before the mark is not marked here, as reads open it too: ``mark``."""
    try:
        with suppress(FileExistsError):  # created private: sessions hold prompts and files
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        file = file_id(path)
        db = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise unusable("open the session database", reason) from exc
    with set_up(db, sqlite3.Error, unusable, "open the session database"):
        new = check_version(db) == 0
    # a new database opened: what fails now is writing it (its tables, on a full disk)
    doing = "create the session database's tables" if new else "open the session database"
    with set_up(db, sqlite3.Error, unusable, doing):
        enable_wal(db, timeout)
        with transaction(db):
            if check_version(db) == 0:
                for statement in SCHEMA:  # not executescript: it commits first
                    db.execute(statement)
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            else:  # written by a version before the workspaces table, perhaps
                db.execute(WORKSPACES)
    return db, file


def mark(db: sqlite3.Connection, check_version: Callable[[sqlite3.Connection], int]) -> None:
    """Mark ``db``, created before ``APPLICATION_ID``, with it (checked again in the
    transaction that does): when it is first written, never by a read (``dsh sessions
    list`` and ``show`` change nothing; the file may be another user's, read-only)."""
    if int(db.execute("PRAGMA application_id").fetchone()[0]) == APPLICATION_ID:
        return
    with transaction(db):
        check_version(db)
        db.execute(f"PRAGMA application_id={APPLICATION_ID}")


def enable_wal(db: sqlite3.Connection, timeout: float) -> None:
    """Switch the database to WAL. The switch needs the database to itself and SQLite
    does not wait for that (no busy handler), so when several processes open a new
    database at once it is retried for up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


@contextmanager
def transaction(db: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE") -> Iterator[None]:
    db.execute(begin)
    try:
        yield
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def file_id(path: Path) -> FileId | None:
    """The identity of the file at ``path``; None when there is none."""
    try:
        found = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return found.st_dev, found.st_ino


def let_go_of_moved(db: sqlite3.Connection) -> None:
    """Close ``db``, whose database file was removed or replaced. Its write-ahead log
    is emptied first (best effort: another process may be reading it): left with its
    frames at ``<path>-wal``, it would be replayed into whatever database is created
    or found at the path next, the pages of one database written over another's.
    SQLite itself neither checkpoints nor removes the log of a moved database when it
    closes it."""
    with suppress(sqlite3.Error):
        db.execute("PRAGMA busy_timeout=1000")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
