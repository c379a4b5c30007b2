"""The PostgreSQL backend: one database, one row per event, many workers on many machines.

Every append is one transaction that locks the session's row (``SELECT ... FOR UPDATE``),
checks the seq and inserts, so two writers of one session cannot both succeed. Durable
appends commit with ``synchronous_commit=on``, others with ``off`` (``sync`` then makes
them durable). Claims are session-level advisory locks held on a second connection
kept for them: a worker that dies lets go of its claims with its connection. psycopg 3
is imported only when this backend is created. Tables: ``_postgres_schema``; the data
connection, replaced when it breaks: ``_postgres_connection``; claims, taken again when
their connection ended: ``_postgres_claims``; how a write meets them:
``_postgres_write_claims``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from types import ModuleType
from typing import TYPE_CHECKING, Any

from dsh import get_logger
from dsh.persistence import SessionHeader
from dsh.session import SessionEvent
from dsh_persistence._backend import (
    LoadedSession,
    SessionBackend,
    SessionInfo,
    StoredTail,
    _shown,
)
from dsh_persistence._batch import LoadedTails, batch_of, loaded_of, read_rows
from dsh_persistence._errors import (
    PersistenceError,
    SessionConflictError,
    leftover_events,
    unstored,
)
from dsh_persistence._postgres_claims import AdvisoryClaims
from dsh_persistence._postgres_connection import DataConnection
from dsh_persistence._postgres_schema import WHERE
from dsh_persistence._postgres_url import check_url, hide_password
from dsh_persistence._postgres_write_claims import check_claim, confirm_claim

if TYPE_CHECKING:
    import psycopg

__all__ = ["MISSING_DRIVER", "PostgresBackend", "driver"]

log = get_logger("dsh.persistence")
MISSING_DRIVER = (
    "persistence.backend is postgresql, which needs psycopg 3: install the extra "
    "with `pip install 'dsh-persistence[postgres]'` ({reason})"
)


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
        check_url(url, source)
        self._pg = driver()
        self.location = hide_password(url) if url else "postgresql (libpq's defaults)"
        self.stored_in = None  # not files on this machine
        self._fsync = fsync
        self._conn = DataConnection(
            self._pg, url, location=self.location, source=source, timeout=timeout
        )
        #: sessions with commits not yet flushed -> (the data connection's generation
        #: then, the next seq stored then)
        self._unsynced: dict[str, tuple[int, int]] = {}
        #: session id -> where the last ``load`` found its stored log ending
        self._loaded = LoadedTails()
        self._claims = AdvisoryClaims(self._conn.open, self._pg.Error)

    def __repr__(self) -> str:
        return f"PostgresBackend({self.location!r})"

    # -- connections: _postgres_connection -----------------------------------------------

    def prepare(self) -> None:
        """Connect, and create the tables if they are missing (a read does not: see
        ``_postgres_connection``)."""
        self._conn.prepare()

    def _schema(self) -> str:
        """The schema of the tables (connecting first when not connected yet, and creating
        them when missing: a claim or a write is to follow). Tables a read found without
        their version row keep their schema: the next write adds the row (``run``)."""
        return self._conn.schema or self._conn.prepare()

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
            self._conn.commit_sync(db, sync)
            with self._conn.transaction(db):
                claimed = self._check_claim(db, info.id, "append to")
                row = db.execute(
                    f"SELECT s.next_seq, s.created, {WHERE} FROM dsh_sessions s "
                    "WHERE s.id=%s FOR UPDATE",
                    (info.id,),
                ).fetchone()
                if claimed:
                    self._confirm_claim(db, info.id, "append to")
                expected = 0 if row is None else int(row[0])
                if row is not None and first < expected:
                    self._read_log(db, info.id, expected)  # damage is said as such
                if first != expected:
                    raise conflict(expected)
                if row is None:
                    self._refuse_leftovers(db, info.id)
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
            self._committed(info.id, events[-1].seq + 1, flushed=sync)

        self._conn.run(work, unstored=partial(unstored, info.id, events))

    def _committed(self, session_id: str, next_seq: int, *, flushed: bool) -> None:
        """Note a commit that left ``session_id`` at ``next_seq``: ``flushed`` (made
        with ``synchronous_commit=on``, having written) it flushed every earlier commit
        of this connection with it; else it is to be flushed by ``sync``. Commits of an
        earlier connection may have been lost with it (a server that crashed): only
        ``sync`` can tell."""
        generation = self._conn.generation
        if flushed:
            for key, (made_on, _) in list(self._unsynced.items()):
                if made_on == generation:
                    del self._unsynced[key]
        if flushed or not self._fsync:
            self._unsynced.pop(session_id, None)
        else:
            self._unsynced[session_id] = (generation, next_seq)

    def _check_claim(self, db: psycopg.Connection[Any], session_id: str, doing: str) -> bool:
        """Before a write: ``_postgres_write_claims.check_claim``."""
        return check_claim(self._claims, db, self._schema(), self.location, session_id, doing)

    def _confirm_claim(self, db: psycopg.Connection[Any], session_id: str, doing: str) -> None:
        """In a write's transaction: ``_postgres_write_claims.confirm_claim``."""
        confirm_claim(self._claims, db, self.location, session_id, doing)

    def sync(self, session_id: str) -> None:
        """A commit with ``synchronous_commit=on`` that writes waits until the WAL is
        flushed up to it, and so past every earlier commit: a no-op update of the
        session's row is made. No row, or one that ends before what this worker stored
        (another worker deleted the session, or a server that crashed lost the commits
        not flushed yet), writes nothing and flushes nothing: ``PersistenceError``."""
        unsynced = self._unsynced.get(session_id)
        if unsynced is None:
            return
        stored_seq = unsynced[1]

        def work(db: psycopg.Connection[Any]) -> int | None:
            self._conn.commit_sync(db, True)
            with self._conn.transaction(db):
                row = db.execute(
                    "UPDATE dsh_sessions SET updated=updated WHERE id=%s RETURNING next_seq",
                    (session_id,),
                ).fetchone()
            return None if row is None else int(row[0])

        found = self._conn.run(work)
        if found is None or found < stored_seq:
            stored = "is not stored any more" if found is None else f"ends at seq {found}"
            raise PersistenceError(
                f"{self.location}: cannot sync session {session_id!r}: it {stored}, where "
                f"this worker stored up to seq {stored_seq - 1} (another worker deleted "
                "it, or the server lost commits not yet flushed when it restarted); what "
                "was written since its last flush is not durable"
            )
        self._committed(session_id, found, flushed=True)

    # -- claims --------------------------------------------------------------------------

    def claim(self, session_id: str) -> bool:
        """Hold the session's advisory lock on the claims connection until ``release``."""
        try:
            held = self._claims.claim(self._schema(), session_id)
        except self._pg.Error as exc:
            raise self._conn.unusable(f"claim session {session_id!r}", exc) from exc
        if held:
            try:  # a write of the former holder's under way: it goes first (_confirm_claim)
                self._conn.read(lambda db: self._wait_for_writes(db, session_id), None)
            except BaseException:
                self.release(session_id)
                raise
        return held

    def _wait_for_writes(self, db: psycopg.Connection[Any], session_id: str) -> None:
        """Wait until no write holds the session's row: what is read after the claim
        then holds every write of a former holder (whose claim ended) that got in."""
        try:
            db.execute("SELECT 1 FROM dsh_sessions WHERE id=%s FOR KEY SHARE", (session_id,))
        except self._pg.errors.LockNotAvailable as exc:
            raise PersistenceError(
                f"{self.location}: cannot claim session {session_id!r}: a write of it "
                "(by a worker whose claim ended, or one holding no claim) still held the "
                "session after the lock timeout; the claim was not taken: try again"
            ) from exc

    def release(self, session_id: str) -> None:
        if self._conn.schema is not None:  # else nothing was claimed
            problem = self._claims.release(self._conn.schema, session_id)
            if problem is not None:
                log.warning("%s: %s", self.location, problem)

    def delete(self, session_id: str) -> bool:
        return self.delete_counting(session_id)[0]

    def delete_counting(self, session_id: str) -> tuple[bool, int]:
        """``delete``, and how many events it deleted that no sessions row held (left
        over: the row removed by another program): ``(True, 0)`` for a stored session."""

        def work(db: psycopg.Connection[Any]) -> tuple[bool, int]:
            self._loaded.pop(session_id, None)
            with self._conn.transaction(db):
                claimed = self._check_claim(db, session_id, "delete")  # held meanwhile
                # the session's row first: it waits for an append holding the row (a
                # writer without a claim), and the statements after it then see that
                # append's events (each statement takes a new snapshot): none is left
                deleted = db.execute("DELETE FROM dsh_sessions WHERE id=%s", (session_id,))
                if claimed:
                    self._confirm_claim(db, session_id, "delete")
                events = db.execute("DELETE FROM dsh_events WHERE session=%s", (session_id,))
                db.execute("DELETE FROM dsh_workspaces WHERE session=%s", (session_id,))
                return (True, 0) if deleted.rowcount > 0 else (False, events.rowcount)

        return self._conn.read(work, (False, 0), safe=False)  # no tables: nothing to delete

    def forget(self, session_id: str) -> None:
        with self._conn.lock:
            self._loaded.pop(session_id, None)

    # -- reading -------------------------------------------------------------------------

    def tail(self, session_id: str) -> StoredTail | None:
        """The end of the stored log, checked as ``load`` checks it (a damaged one is
        ``SessionCorruptError``)."""

        def work(db: psycopg.Connection[Any]) -> StoredTail | None:
            with db.transaction():
                _one_snapshot(db)
                row = db.execute(
                    "SELECT next_seq FROM dsh_sessions WHERE id=%s", (session_id,)
                ).fetchone()
                if row is None:
                    self._refuse_leftovers(db, session_id)  # a new session would clash
                    return None
                kept = self._loaded.reused(
                    session_id, int(row[0]), lambda: self._last(db, session_id)
                )
                if kept is not None:  # unchanged since a ``load``
                    return kept
                events = self._read_log(db, session_id, int(row[0]))
            return StoredTail(len(events), events[-1] if events else None)

        return self._conn.read(work, None)

    def _refuse_leftovers(self, db: psycopg.Connection[Any], session_id: str) -> None:
        """``leftover_events`` when events of ``session_id``, not stored, are left."""
        left = db.execute("SELECT count(*) FROM dsh_events WHERE session=%s", (session_id,))
        count = int(left.fetchone()[0])  # type: ignore[index]
        if count:
            raise leftover_events(session_id, count, self.location)

    def _lines(self, db: psycopg.Connection[Any], session_id: str) -> list[str]:
        rows = db.execute(
            "SELECT line FROM dsh_events WHERE session=%s ORDER BY seq", (session_id,)
        ).fetchall()
        return [row[0] for row in rows]

    def _last(self, db: psycopg.Connection[Any], session_id: str) -> object:
        """The last of ``_lines`` (None: none), read by the primary key's index."""
        sql = "SELECT line FROM dsh_events WHERE session=%s ORDER BY seq DESC LIMIT 1"
        row = db.execute(sql, (session_id,)).fetchone()
        return None if row is None else row[0]

    def _read_log(
        self, db: psycopg.Connection[Any], session_id: str, next_seq: int
    ) -> list[SessionEvent]:
        """The stored log, checked (``read_rows``; raises like ``load``)."""
        return read_rows(self._lines(db, session_id), self.location, session_id, next_seq)[0]

    def load(self, session_id: str) -> LoadedSession | None:
        def work(db: psycopg.Connection[Any]) -> tuple[Any, list[str]] | None:
            with db.transaction():
                _one_snapshot(db)
                row = db.execute(
                    "SELECT created, meta, next_seq FROM dsh_sessions WHERE id=%s",
                    (session_id,),
                ).fetchone()
                if row is None:
                    return None
                return row, self._lines(db, session_id)

        found = self._conn.read(work, None)
        if found is None:
            return None
        (created, meta, next_seq), records = found
        loaded, end = loaded_of(session_id, created, meta, records, self.location, int(next_seq))
        with self._conn.lock:
            self._loaded.keep(session_id, end)
        return loaded

    def headers(self) -> list[SessionHeader]:
        def work(db: psycopg.Connection[Any]) -> list[SessionHeader]:
            rows = db.execute(
                f"SELECT s.id, s.created, s.updated, s.turns, s.title, {WHERE} FROM dsh_sessions s"
            ).fetchall()
            return [SessionHeader(*row) for row in rows]

        return self._conn.read(work, [])

    def close(self) -> None:
        self._claims.close()
        self._conn.close()


def _one_snapshot(db: psycopg.Connection[Any]) -> None:
    """Make the transaction just begun read one snapshot: its rows of ``dsh_events`` are
    then the ones its ``dsh_sessions`` row counts (under the default isolation each
    statement takes a new one, and a commit between them would read as damage)."""
    db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
