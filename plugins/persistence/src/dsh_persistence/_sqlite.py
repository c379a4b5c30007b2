"""The SQLite backend: one database file, one row per event, several processes at once.

WAL journal (readers never block the writer), ``BEGIN IMMEDIATE`` for every write (the
seq check and the insert are one step even across processes), ``synchronous=FULL`` for
durable appends and ``NORMAL`` otherwise. The schema: ``_sqlite_schema``. The connection
and the work run on it: ``_sqlite_store``. A database removed or replaced under an open
connection is opened anew: ``_sqlite_connection``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from typing import Any, Literal

from dsh.persistence import SessionHeader
from dsh.session import SessionEvent
from dsh_persistence._backend import LoadedSession, SessionInfo, StoredTail
from dsh_persistence._batch import batch_of, loaded_of, read_rows
from dsh_persistence._errors import (
    PersistenceError,
    SessionConflictError,
    SessionInUseError,
    leftover_events,
    unstored,
)
from dsh_persistence._row_values import count, header_of
from dsh_persistence._sqlite_connection import transaction
from dsh_persistence._sqlite_rows import event_lines, last_event_line
from dsh_persistence._sqlite_schema import SCHEMA_VERSION, WHERE
from dsh_persistence._sqlite_store import SqliteStore

__all__ = ["SCHEMA_VERSION", "SqliteBackend"]


class SqliteBackend(SqliteStore):
    """Sessions in the SQLite database ``path``; connects on first use. ``source`` names
    the setting the path comes from, for messages (``persistence.database``)."""

    # -- writing -------------------------------------------------------------------------

    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        if not events:
            return
        _, rows, turns, ran, meta = batch_of(info, events)
        failed = unstored(info.id, events)

        def work(db: sqlite3.Connection) -> None:
            sync = "FULL" if durable and self._fsync else "NORMAL"
            db.execute(f"PRAGMA synchronous={sync}")
            with transaction(db):
                row = db.execute(
                    f"SELECT next_seq, created, {WHERE} FROM sessions WHERE id=?", (info.id,)
                ).fetchone()
                expected = 0 if row is None else count(row[0], str(self.path), info.id)
                if row is not None and events[0].seq < expected:
                    self._read_log(db, info.id, expected)  # damage is said as such
                if row is None and events[0].seq:
                    raise SessionConflictError(
                        f"{self.path}: session {info.id!r} is not stored in this database, "
                        f"so its log must start at seq 0, not {events[0].seq} (was the "
                        "database removed or replaced, or the session deleted?); nothing "
                        "was written"
                    )
                if events[0].seq != expected:
                    raise SessionConflictError(
                        f"{self.path}: session {info.id!r}: cannot append seq "
                        f"{events[0].seq}, the next stored seq is {expected} (another writer, "
                        "or a stale session); nothing was written"
                    )
                if row is None:
                    self._refuse_leftovers(db, info.id)
                    db.execute(
                        "INSERT INTO sessions VALUES (?, ?, ?, 0, ?, ?, ?, 0)",
                        (info.id, info.created, info.created, info.title, info.cwd, meta),
                    )
                    db.execute("DELETE FROM workspaces WHERE session=?", (info.id,))
                elif ran and row[2] != info.cwd:  # a turn of a run in another workspace
                    db.execute(
                        "INSERT OR REPLACE INTO workspaces VALUES (?, ?, ?)",
                        (info.id, row[1], info.cwd),
                    )
                db.executemany("INSERT INTO events VALUES (?, ?, ?)", rows)
                self._loaded.pop(info.id, None)  # what ``load`` read is stored no longer
                db.execute(
                    "UPDATE sessions SET next_seq=?, updated=?, turns=max(turns, ?) WHERE id=?",
                    (events[-1].seq + 1, events[-1].time, turns, info.id),
                )

        with self._lock:  # another program's database is refused before a claim is made
            self._let_go_if_moved()
            self._connect(failed)
        if self._check_claim(info.id, "append to") == "held":  # ours: no one else writes it
            self._run(work, failed)
            return
        try:
            with self._claims.unclaimed_write(info.id) as free:
                if not free:
                    raise SessionInUseError(
                        f"{self.path}: cannot append to session {info.id!r}: another process "
                        "or harness is continuing it (it holds the session's claim); nothing "
                        "was written"
                    )
                self._run(work, failed)
        except OSError as exc:
            doing = f"lock session {info.id!r} in {self._claims.directory} to append to it"
            raise self._unusable(doing, exc.strerror or exc) from exc

    def sync(self, session_id: str) -> None:
        # Committed frames are in the WAL until a checkpoint (which syncs what it
        # copies), so fsyncing the WAL makes every earlier NORMAL commit durable.
        if not self._fsync:
            return
        wal = f"{self.path}-wal"
        with self._lock:
            if self._let_go_if_moved():
                raise PersistenceError(
                    f"{self.path}: cannot sync session {session_id!r}: the database was "
                    "removed or replaced since the session was written to it"
                )
            try:
                fd = os.open(wal, os.O_RDONLY)
            except FileNotFoundError:
                return
            except OSError as exc:
                raise PersistenceError(f"{wal}: cannot open it to sync: {exc.strerror}") from exc
            try:
                os.fsync(fd)
            except OSError as exc:
                raise PersistenceError(f"{wal}: cannot sync it: {exc.strerror}") from exc
            finally:
                os.close(fd)

    def claim(self, session_id: str) -> bool:
        """Hold a lock file of the session's in ``<database>-claims/`` until ``release``."""
        try:
            return self._claims.claim(session_id)
        except OSError as exc:
            doing = f"claim session {session_id!r} in {self._claims.directory}"
            raise self._unusable(doing, exc.strerror or exc) from exc

    def release(self, session_id: str) -> None:
        self._claims.release(session_id)

    def _check_claim(self, session_id: str, doing: str) -> Literal["held", "unclaimed"]:
        """Before a write: ``ClaimFiles.check``, a lost claim raised as an error."""
        try:
            claim = self._claims.check(session_id)
        except OSError as exc:
            where = f"session {session_id!r} in {self._claims.directory}"
            raise self._unusable(f"check the claim of {where}", exc.strerror or exc) from exc
        if claim == "lost":
            raise SessionInUseError(
                f"{self.path}: cannot {doing} session {session_id!r}: its claim's lock "
                f"file {self._claims.path(session_id)} was removed while this process held "
                "it, and another process or harness claimed the session since (it "
                "continues it now); nothing was changed"
            )
        return claim

    def delete(self, session_id: str) -> bool:
        return self.delete_counting(session_id)[0]

    def delete_counting(self, session_id: str) -> tuple[bool, int]:
        """``delete``, and how many events it deleted that no sessions row held (left
        over: the row removed by another program): ``(True, 0)`` for a stored session."""

        def work(db: sqlite3.Connection) -> tuple[bool, int]:
            self._loaded.pop(session_id, None)
            with transaction(db):
                events = db.execute("DELETE FROM events WHERE session=?", (session_id,))
                db.execute("DELETE FROM workspaces WHERE session=?", (session_id,))
                deleted = db.execute("DELETE FROM sessions WHERE id=?", (session_id,))
                return (True, 0) if deleted.rowcount > 0 else (False, events.rowcount)

        with self._lock:
            self._let_go_if_moved()
            if self._stores_nothing():  # not stored: nothing to create
                return False, 0
            self._connect()  # another program's database is refused before a claim
        # ours (a live session's delete is refused by the service), or claimed while it
        # is deleted: no one resumes it then
        ours = self._check_claim(session_id, "delete") == "held"
        if not ours and not self.claim(session_id):
            raise SessionInUseError(
                f"{self.path}: cannot delete session {session_id!r}: another process or "
                "harness is continuing it"
            )
        try:
            return self._run(work)
        finally:
            # the turn's lock file a kill left mid-append (the claim's is held: kept)
            self._claims.remove_leftovers(session_id, age=0)
            if not ours:
                self.release(session_id)

    # -- reading -------------------------------------------------------------------------

    def tail(self, session_id: str) -> StoredTail | None:
        """The end of the stored log, checked as ``load`` checks it (a damaged one is
        ``SessionCorruptError``)."""

        def work(db: sqlite3.Connection) -> StoredTail | None:
            with transaction(db, "BEGIN"):
                row = db.execute(
                    "SELECT next_seq FROM sessions WHERE id=?", (session_id,)
                ).fetchone()
                if row is None:
                    self._refuse_leftovers(db, session_id)  # a new session would clash
                    return None
                # Unchanged since ``load`` read all of it (a resume): kept for both the
                # claim's check and the first write's, each of which would read it all.
                stored = count(row[0], str(self.path), session_id)
                last = lambda: last_event_line(db, session_id)  # noqa: E731
                kept = self._loaded.reused(session_id, stored, last)
                if kept is not None:
                    return kept
                events = self._read_log(db, session_id, stored)
            return StoredTail(len(events), events[-1] if events else None)

        return self._read(work, None)

    def _refuse_leftovers(self, db: sqlite3.Connection, session_id: str) -> None:
        """``leftover_events`` when events of ``session_id``, not stored, are left."""
        left = db.execute("SELECT count(*) FROM events WHERE session=?", (session_id,))
        count = int(left.fetchone()[0])
        if count:
            raise leftover_events(session_id, count, self.location)

    def _read_log(
        self, db: sqlite3.Connection, session_id: str, next_seq: int
    ) -> list[SessionEvent]:
        """The stored log, checked (``read_rows``; raises like ``load``)."""
        return read_rows(event_lines(db, session_id), str(self.path), session_id, next_seq)[0]

    def load(self, session_id: str) -> LoadedSession | None:
        def work(db: sqlite3.Connection) -> tuple[Any, list[str]] | None:
            with transaction(db, "BEGIN"):
                row = db.execute(
                    "SELECT created, meta, next_seq FROM sessions WHERE id=?", (session_id,)
                ).fetchone()
                if row is None:
                    return None
                lines = event_lines(db, session_id)
            return row, lines

        found = self._read(work, None)
        if found is None:
            return None
        (created, meta, next_seq), records = found
        next_seq = count(next_seq, str(self.path), session_id)
        loaded, end = loaded_of(session_id, created, meta, records, str(self.path), next_seq)
        # A resume claims the session and writes next: the claim's ``tail`` and the
        # first write's can reuse this read while nothing has been stored since (reading
        # a long log again would double its cost). An append or delete drops it.
        with self._lock:
            self._loaded.keep(session_id, end)
        return loaded

    def headers(self) -> list[SessionHeader]:
        def work(db: sqlite3.Connection) -> list[SessionHeader]:
            rows = db.execute(f"SELECT id, created, updated, turns, title, {WHERE} FROM sessions")
            return [header_of(row, str(self.path)) for row in rows]

        return self._read(work, [])
