"""The SQLite backend's hold on its database: the one connection (opened on first use,
let go of when the file at the path was removed or replaced), work run on it under a
lock, the checks made before a harness starts, and the errors saying why the database
cannot be used. The sessions themselves: ``_sqlite``."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from dsh_persistence._backend import SessionBackend
from dsh_persistence._batch import LoadedTails
from dsh_persistence._claims import ClaimFiles
from dsh_persistence._errors import PersistenceError
from dsh_persistence._opening import unusable_error
from dsh_persistence._sqlite_check import check_claims, check_database, check_directory
from dsh_persistence._sqlite_connection import (
    FileId,
    file_id,
    let_go_of_moved,
    mark,
    open_database,
)
from dsh_persistence._sqlite_schema import checked_version, missing, no_schema
from dsh_persistence._sqlite_words import error_words

__all__ = ["SqliteStore"]

T = TypeVar("T")


class SqliteStore(SessionBackend):
    """The connection to the SQLite database ``path`` that ``SqliteBackend`` stores in."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fsync: bool = True,
        timeout: float = 30.0,
        source: str = "",
    ) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        self.stored_in = os.path.abspath(self.path)
        self._source = source
        self._fsync = fsync
        self._timeout = timeout
        self._lock = threading.Lock()  # one connection, used by one thread at a time
        self._db: sqlite3.Connection | None = None
        self._file: FileId | None = None  # the database file ``_db`` has open
        self._marked = False  # ``_db`` is marked as dsh's (``mark``), known to be
        #: session id -> where the last ``load`` found its stored log ending
        self._loaded = LoadedTails()
        #: The sessions this process continues: a locked file each, beside the database.
        self._claims = ClaimFiles(self.path.with_name(self.path.name + "-claims"))

    def _run(self, work: Callable[[sqlite3.Connection], T], unstored: str = "") -> T:
        """``work`` on the connection, a write; ``unstored``: what its failure leaves
        unstored, said after why."""
        with self._lock:
            self._let_go_if_moved()
            return self._work(work, write=True, unstored=unstored)

    def _work(
        self, work: Callable[[sqlite3.Connection], T], *, write: bool = False, unstored: str = ""
    ) -> T:
        db = self._connect(unstored)
        try:
            if write and not self._marked:  # a database created before the mark
                mark(db, self._check_version)
                self._marked = True
            return work(db)
        except sqlite3.Error as exc:
            reason = error_words(exc, self.path)
            if unstored:  # a full disk, say: the transaction is rolled back
                said = f"cannot write to the session database: {reason}; {unstored}"
                raise PersistenceError(f"{self.path}: {said}") from exc
            raise PersistenceError(f"{self.path}: {reason}") from exc

    def _read(self, work: Callable[[sqlite3.Connection], T], nothing: T) -> T:
        """``_run`` for a read: a database that is not there, or holds no session,
        holds ``nothing``, and is not created nor changed to say so (``dsh sessions
        list`` before any session was saved, or pointed at another program's database)."""
        with self._lock:
            self._let_go_if_moved()
            return nothing if self._stores_nothing() else self._work(work)

    def _let_go_if_moved(self) -> bool:
        """(Holding ``_lock``.) Close the connection if its database file is no longer
        the one at ``path`` (removed, or replaced): the next use opens the path anew.
        Whether it was closed."""
        try:
            if self._db is None or file_id(self.path) == self._file:
                return False
        except OSError as exc:
            raise self._unusable("look at the session database", exc.strerror or exc) from exc
        db, self._db = self._db, None
        self._loaded.clear()
        let_go_of_moved(db)
        return True

    def _stores_nothing(self) -> bool:
        """Not connected yet, and no session schema at ``path``: no file, or a SQLite
        database without it (another program's, an empty file)."""
        return self._db is None and (missing(self.path) or no_schema(self.path))

    def _unusable(self, doing: str, reason: object) -> PersistenceError:
        """The database cannot be opened or created: say which, where, and from what setting."""
        return unusable_error(self.path, self._source, doing, self._said(reason))

    def _said(self, reason: object) -> object:
        """``reason`` in words that say where and why, if it is a SQLite error."""
        return error_words(reason, self.path) if isinstance(reason, sqlite3.Error) else reason

    def prepare(self) -> None:
        """Check, changing nothing, that sessions can be saved in the database
        (``_sqlite_check``): a file that is not a SQLite database, one of a newer schema,
        one this process may not write, or a directory where the database (or what the
        first save makes beside it) cannot be created is refused now, when a harness
        starts, before a prompt is answered that could not be saved. Only a missing
        directory is created (as the JSONL backend creates its own): the first save
        creates the database, its tables and its WAL. A file is made and removed where
        claims go (``check_claims``): the OS's access check lets root write ``/proc``."""
        with self._lock:
            self._make_directory()
            check_directory(self.path, self._unusable)
            if not missing(self.path):
                check_database(self.path, self._timeout, self._unusable, self._check_version)
            check_claims(self._claims.directory, self._unusable)
        self._claims.remove_leftovers()  # of claims and turns a kill ended

    def _make_directory(self) -> None:
        """Create the database's directory and check that the database can be there."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            reason = exc.strerror or exc
            if isinstance(exc, FileExistsError):
                reason = "it exists and is not a directory"
            raise self._unusable(f"create the directory {self.path.parent}", reason) from exc
        if os.path.isdir(self.path):  # never raises
            raise self._unusable("use it as the session database", "it is a directory")

    def _connect(self, unstored: str = "") -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        self._make_directory()
        unusable = self._unusable
        if unstored:  # creating the database (its tables) failed: what was not stored
            unusable = lambda doing, reason: self._unusable(  # noqa: E731
                doing, f"{self._said(reason)}; {unstored}"
            )
        db, file = open_database(self.path, self._timeout, unusable, self._check_version)
        self._db, self._file, self._marked = db, file, False
        return db

    def _check_version(self, db: sqlite3.Connection) -> int:
        setting = f" ({self._source})" if self._source else ""
        return checked_version(db, f"{self.path}{setting}")

    def close(self) -> None:
        self._claims.close()
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
