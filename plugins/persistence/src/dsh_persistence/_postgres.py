"""The PostgreSQL backend: one database, one row per event, many workers on many machines.

Every append is one transaction that locks the session's row (``SELECT ... FOR UPDATE``),
checks the seq and inserts, so two writers of one session cannot both succeed. Durable
appends commit with ``synchronous_commit=on``, others with ``off`` (``sync`` then makes
them durable). Claims are session-level advisory locks held on a second connection
kept for them: a worker that dies lets go of its claims with its connection. psycopg 3
is imported only when this backend is created. Tables: ``_postgres_schema``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from dsh.persistence import SessionHeader
from dsh.session import SessionEvent
from dsh_persistence._backend import (
    LoadedSession,
    SessionBackend,
    SessionInfo,
    StoredTail,
    _shown,
)
from dsh_persistence._batch import batch_of, loaded_of
from dsh_persistence._errors import (
    PersistenceError,
    SessionConflictError,
    SessionFormatError,
    SessionInUseError,
)
from dsh_persistence._postgres_claims import AdvisoryClaims
from dsh_persistence._postgres_schema import (
    CLAIM_KEY,
    SCHEMA,
    SCHEMA_LOCK,
    SCHEMA_VERSION,
    WHERE,
)
from dsh_persistence._postgres_url import hide_password, scrub
from dsh_persistence._records import read_log

if TYPE_CHECKING:
    import psycopg

__all__ = ["MISSING_DRIVER", "PostgresBackend", "driver"]

T = TypeVar("T")

MISSING_DRIVER = (
    "persistence.backend is postgresql, which needs psycopg 3: install the extra "
    "with `pip install 'dsh-persistence[postgres]'` ({reason})"
)
_LOADS_KEPT = 64  # tails remembered from loads, for a resume's claim and first write


def driver() -> ModuleType:
    """psycopg, imported now; a ``PersistenceError`` naming the extra when it is missing."""
    try:
        import psycopg
    except ImportError as exc:
        raise PersistenceError(MISSING_DRIVER.format(reason=exc)) from None
    return psycopg


def _text(value: str) -> str:
    """A title or directory as PostgreSQL text can hold it: a NUL character or a lone
    surrogate is shown as U+FFFD (``SessionInfo.of`` replaces surrogates already)."""
    return _shown(value).replace("\x00", "\ufffd")


class PostgresBackend(SessionBackend):
    """Sessions in the PostgreSQL database that ``url`` (a libpq URL or key/value
    string; "" for libpq's defaults: ``PGHOST``, ``PGDATABASE``...) names; connects on
    first use. ``source`` names the setting the URL comes from, for messages. The
    password is never shown: ``location`` and every message give the URL without it.
    ``timeout``: the longest a statement waits for a lock another worker holds (a
    session's row), as the SQLite backend's; then the call fails (``PersistenceError``)
    instead of holding up every other call of the process, which share one connection."""

    def __init__(
        self, url: str = "", *, fsync: bool = True, source: str = "", timeout: float = 30.0
    ) -> None:
        self._pg = driver()
        self._timeout = timeout
        self._url = url
        self.location = hide_password(url) if url else "postgresql (libpq's defaults)"
        self.stored_in = None  # not files on this machine
        self._source = source
        self._fsync = fsync
        self._lock = threading.Lock()  # one connection, used by one thread at a time
        self._db: psycopg.Connection[Any] | None = None
        self._sync_commit: bool | None = None  # the data connection's synchronous_commit
        self._unsynced: set[str] = set()  # sessions with commits not yet flushed
        #: session id -> (stored next_seq, readable tail) as the last ``load`` found them
        self._loaded: dict[str, tuple[int, StoredTail]] = {}
        self._claims = AdvisoryClaims(self._open, self._pg.Error)

    def __repr__(self) -> str:
        return f"PostgresBackend({self.location!r})"

    # -- connections ---------------------------------------------------------------------

    def _unusable(self, doing: str, reason: object) -> PersistenceError:
        source = f" ({self._source})" if self._source else ""
        shown = scrub(str(reason).strip(), self._url)
        return PersistenceError(f"{self.location}{source}: cannot {doing}: {shown}")

    def _open(self) -> psycopg.Connection[Any]:
        try:
            return self._pg.connect(self._url, autocommit=True)  # type: ignore[no-any-return]
        except self._pg.Error as exc:
            reason = str(exc)
        # raised here, out of the except block, so that it carries no cause and no
        # context: libpq may quote the connection string, password included
        raise self._unusable("connect to the session database", reason)

    def prepare(self) -> None:
        """Connect, and create the tables if they are missing."""
        with self._lock:
            self._connect()

    def _connect(self) -> psycopg.Connection[Any]:
        if self._db is not None and not self._db.closed:
            return self._db
        self._db, self._sync_commit = None, None
        db = self._open()
        try:
            db.execute(f"SET lock_timeout = {max(1, round(self._timeout * 1000))}")
            self._check_schema(db)
        except self._pg.Error as exc:
            db.close()
            raise self._unusable("create the session tables", exc) from exc
        except BaseException:
            db.close()
            raise
        self._db = db
        return db

    def _check_schema(self, db: psycopg.Connection[Any]) -> None:
        def version() -> int | None:
            if db.execute("SELECT to_regclass('dsh_version')").fetchone() == (None,):
                return None
            row = db.execute("SELECT max(version) FROM dsh_version").fetchone()
            return None if row is None or row[0] is None else int(row[0])

        found = version()
        if found is None:
            with db.transaction():
                db.execute(SCHEMA_LOCK)
                for statement in SCHEMA:
                    db.execute(statement)
                found = version()
                if found is None:
                    db.execute("INSERT INTO dsh_version VALUES (%s)", (SCHEMA_VERSION,))
                    found = SCHEMA_VERSION
        if found > SCHEMA_VERSION:
            raise SessionFormatError(
                f"{self.location}: session tables schema version {found} is newer than "
                f"this dsh-persistence reads (up to {SCHEMA_VERSION}); upgrade "
                "dsh-persistence to open it. The database was not changed."
            )

    def _run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        with self._lock:
            db = self._connect()
            try:
                return work(db)
            except self._pg.Error as exc:
                if db.closed or db.broken:  # reconnected at the next call
                    self._db = None
                reason = scrub(str(exc).strip(), self._url)
                raise PersistenceError(f"{self.location}: {reason}") from exc

    def _commit_sync(self, db: psycopg.Connection[Any], on: bool) -> None:
        if self._sync_commit is not on:
            db.execute(f"SET synchronous_commit = {'on' if on else 'off'}")
            self._sync_commit = on

    # -- writing -------------------------------------------------------------------------

    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        if not events:
            return
        first, rows, turns, ran, meta = batch_of(info, events)
        title, cwd = _text(info.title), _text(info.cwd)
        sync = durable and self._fsync

        def conflict(expected: object) -> SessionConflictError:
            return SessionConflictError(
                f"{self.location}: session {info.id!r}: cannot append seq {first}, the "
                f"next stored seq is {expected} (another writer, or a stale session); "
                "nothing was written"
            )

        def work(db: psycopg.Connection[Any]) -> None:
            self._commit_sync(db, sync)
            with db.transaction():
                if not self._claims.holds(info.id):
                    self._lock_unclaimed(db, info.id, "append to")
                row = db.execute(
                    f"SELECT s.next_seq, s.created, {WHERE} FROM dsh_sessions s "
                    "WHERE s.id=%s FOR UPDATE",
                    (info.id,),
                ).fetchone()
                expected = 0 if row is None else int(row[0])
                if row is not None and first < expected:
                    # The stored log may end earlier: rows of a crashed turn that loading
                    # ignores. Then the append continues the readable log and removes them.
                    readable = len(self._read_log(db, info.id))
                    if first == readable:
                        db.execute(
                            "DELETE FROM dsh_events WHERE session=%s AND seq>=%s",
                            (info.id, readable),
                        )
                        expected = readable
                if first != expected:
                    raise conflict(expected)
                if row is None:
                    created = db.execute(
                        "INSERT INTO dsh_sessions VALUES (%s, %s, %s, 0, %s, %s, %s, 0) "
                        "ON CONFLICT (id) DO NOTHING",
                        (info.id, info.created, info.created, title, cwd, meta),
                    )
                    if created.rowcount != 1:  # another writer stored it meanwhile
                        raise conflict("no longer 0")
                    db.execute("DELETE FROM dsh_workspaces WHERE session=%s", (info.id,))
                elif ran and row[2] != cwd:  # a turn of a run in another workspace
                    db.execute(
                        "INSERT INTO dsh_workspaces VALUES (%s, %s, %s) ON CONFLICT (session) "
                        "DO UPDATE SET created=EXCLUDED.created, workspace=EXCLUDED.workspace",
                        (info.id, row[1], cwd),
                    )
                with db.cursor() as cursor:
                    cursor.executemany("INSERT INTO dsh_events VALUES (%s, %s, %s)", rows)
                self._loaded.pop(info.id, None)  # what ``load`` read is stored no longer
                db.execute(
                    "UPDATE dsh_sessions SET next_seq=%s, updated=%s, "
                    "turns=GREATEST(turns, %s) WHERE id=%s",
                    (events[-1].seq + 1, events[-1].time, turns, info.id),
                )
            if sync:  # a flushed commit flushes every earlier one with it
                self._unsynced.clear()
            elif self._fsync:
                self._unsynced.add(info.id)

        self._run(work)

    def _lock_unclaimed(self, db: psycopg.Connection[Any], session_id: str, doing: str) -> None:
        """For a write by a writer that holds no claim of ``session_id``: share the
        claim's lock for the transaction (as other such writers may: the session's row
        lock orders them), which keeps a claim out meanwhile; ``SessionInUseError`` when
        another worker holds the claim."""
        row = db.execute(f"SELECT pg_try_advisory_xact_lock_shared({CLAIM_KEY})", (session_id,))
        if row.fetchone() != (True,):
            raise SessionInUseError(
                f"{self.location}: cannot {doing} session {session_id!r}: another worker is "
                "continuing it (it holds the session's claim); nothing was written"
            )

    def sync(self, session_id: str) -> None:
        """A commit with ``synchronous_commit=on`` waits until the WAL is flushed up to
        it, and so past every earlier commit: one that writes (a no-op update) is made."""
        if session_id not in self._unsynced:
            return

        def work(db: psycopg.Connection[Any]) -> None:
            self._commit_sync(db, True)
            with db.transaction():
                db.execute("UPDATE dsh_sessions SET updated=updated WHERE id=%s", (session_id,))
            self._unsynced.clear()

        self._run(work)

    # -- claims --------------------------------------------------------------------------

    def claim(self, session_id: str) -> bool:
        """Hold the session's advisory lock on the claims connection until ``release``."""
        try:
            return self._claims.claim(session_id)
        except self._pg.Error as exc:
            raise self._unusable(f"claim session {session_id!r}", exc) from exc

    def release(self, session_id: str) -> None:
        self._claims.release(session_id)

    def delete(self, session_id: str) -> bool:
        def work(db: psycopg.Connection[Any]) -> bool:
            self._loaded.pop(session_id, None)
            with db.transaction():
                if not self._claims.holds(session_id):  # held while it is deleted
                    self._lock_unclaimed(db, session_id, "delete")
                # the session's row first: it waits for an append holding the row (a
                # writer without a claim), and the statements after it then see that
                # append's events (each statement takes a new snapshot): none is left
                deleted = db.execute("DELETE FROM dsh_sessions WHERE id=%s", (session_id,))
                db.execute("DELETE FROM dsh_events WHERE session=%s", (session_id,))
                db.execute("DELETE FROM dsh_workspaces WHERE session=%s", (session_id,))
                return deleted.rowcount > 0

        return self._run(work)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._loaded.pop(session_id, None)

    # -- reading -------------------------------------------------------------------------

    def tail(self, session_id: str) -> StoredTail | None:
        """The end of the readable log (as ``load`` reads it), not ``next_seq``: rows of
        a crashed turn that loading ignores are not part of it."""

        def work(db: psycopg.Connection[Any]) -> StoredTail | None:
            with db.transaction():
                row = db.execute(
                    "SELECT next_seq FROM dsh_sessions WHERE id=%s", (session_id,)
                ).fetchone()
                if row is None:
                    return None
                loaded = self._loaded.get(session_id)  # unchanged since a ``load``
                if loaded is not None and loaded[0] == int(row[0]):
                    return loaded[1]
                self._loaded.pop(session_id, None)
                events = self._read_log(db, session_id)
            return StoredTail(len(events), events[-1] if events else None)

        return self._run(work)

    def _lines(self, db: psycopg.Connection[Any], session_id: str) -> list[str]:
        rows = db.execute(
            "SELECT line FROM dsh_events WHERE session=%s ORDER BY seq", (session_id,)
        ).fetchall()
        return [row[0] for row in rows]

    def _read_log(self, db: psycopg.Connection[Any], session_id: str) -> list[SessionEvent]:
        """The readable prefix of the stored log (``read_log``; raises like ``load``)."""
        return read_log(self._lines(db, session_id), self._where(session_id))[0]

    def _where(self, session_id: str) -> Callable[[int], str]:
        def where(index: int) -> str:
            return f"{self.location}: session {session_id!r}, event #{index}"

        return where

    def load(self, session_id: str) -> LoadedSession | None:
        def work(db: psycopg.Connection[Any]) -> tuple[Any, list[str]] | None:
            with db.transaction():  # the row first: the events are as new or newer
                row = db.execute(
                    "SELECT created, meta, next_seq FROM dsh_sessions WHERE id=%s",
                    (session_id,),
                ).fetchone()
                if row is None:
                    return None
                return row, self._lines(db, session_id)

        found = self._run(work)
        if found is None:
            return None
        (created, meta, next_seq), records = found
        loaded, tail = loaded_of(session_id, created, meta, records, self._where(session_id))
        with self._lock:
            if len(self._loaded) >= _LOADS_KEPT:
                self._loaded.clear()
            self._loaded[session_id] = (int(next_seq), tail)
        return loaded

    def headers(self) -> list[SessionHeader]:
        def work(db: psycopg.Connection[Any]) -> list[SessionHeader]:
            rows = db.execute(
                f"SELECT s.id, s.created, s.updated, s.turns, s.title, {WHERE} FROM dsh_sessions s"
            ).fetchall()
            return [SessionHeader(*row) for row in rows]

        return self._run(work)

    def close(self) -> None:
        self._claims.close()
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
