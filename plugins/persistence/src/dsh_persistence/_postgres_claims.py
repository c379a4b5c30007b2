"""The claims of the PostgreSQL backend: session-level advisory locks, held on a
connection of their own that is kept open for them.

A worker that dies, or whose connection breaks, lets go of its claims with the
connection: the server ends the locks of a session that ends. ``CLAIM_KEY`` makes the
lock's key from the schema of the tables and the session id.

A claims connection that ended (a server restart, a failover, a terminated backend)
took its locks with it; the worker may not notice until it next writes. So ``check``,
before each write of a claimed session, asks the connection whether it is still there;
when it is not, the claim is taken again on a new one (another worker may have written
meanwhile: the write's seq check finds that), or, when another worker holds it now, it
is lost: ``check`` says so and the claim is forgotten.

Each claims connection also holds, exclusively, a lock of its own (``ALIVE_KEY``: a
random pair of 32-bit keys, a key space apart from the claims' 64-bit keys): a write,
once it holds the session's row, tries to share it on the data connection
(``CLAIMS_ALIVE``), which fails exactly while the claims connection that took the
claim lives. Its session-level locks last as long as it does (``release`` and ``close``
drop the claim from ``_held`` as they unlock), so a live connection still holds the
claim. That needs no server process id (a pooler such as PgBouncer shows its own) and
no look at the server's whole lock table (``pg_locks``).

Since the claims share their connection, ``release`` closes it only when it ended
already: an unlock that failed on a live one (a cancelled statement, a permission) keeps
it, with the other claims; the lock it may still hold is let go at the next ``claim`` or
``release`` (``_stray``). ``release`` returns what to warn of: that failure, or the
other claims that ended with a connection found ended.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Literal

from dsh_persistence._postgres_schema import ALIVE_KEY, CLAIM_KEY

if TYPE_CHECKING:
    import psycopg

__all__ = ["AdvisoryClaims"]


def _dead(db: psycopg.Connection[Any]) -> bool:
    """Whether psycopg found the connection closed or broken (by a failed call)."""
    return db.closed or db.broken


class AdvisoryClaims:
    """``claim`` / ``release`` as ``SessionBackend`` has them (``schema``: that of the
    tables). ``connect`` opens a new connection (autocommit); ``error`` is psycopg's
    base error class."""

    def __init__(
        self, connect: Callable[[], psycopg.Connection[Any]], error: type[Exception]
    ) -> None:
        self._connect = connect
        self._error = error
        self._lock = threading.Lock()
        self._db: psycopg.Connection[Any] | None = None
        self._generation = 0  # counts the claims connections made
        #: session id -> the generation of the connection that took its lock
        self._held: dict[str, int] = {}
        #: the ``ALIVE_KEY`` the claims connection holds (None: no connection)
        self._key: tuple[int, int] | None = None
        #: (schema, session id) of the released claims whose unlock failed on the
        #: claims connection, which may hold their locks still
        self._stray: list[tuple[str, str]] = []

    def _connection(self) -> psycopg.Connection[Any]:
        if self._db is not None and not _dead(self._db):
            return self._db
        if self._db is not None:
            self._db.close()
        self._db = self._key = None
        self._stray.clear()  # their locks went with the connection
        db = self._connect()
        try:
            key = self._take_alive_key(db)
        except BaseException:
            db.close()
            raise
        self._db, self._key = db, key
        self._generation += 1
        return db

    def _take_alive_key(self, db: psycopg.Connection[Any]) -> tuple[int, int]:
        """Hold a new ``ALIVE_KEY`` on the new claims connection ``db`` (random: one
        that another connection holds already is tried again with another)."""
        while True:
            key = (secrets.randbits(32) - 2**31, secrets.randbits(32) - 2**31)
            row = db.execute(f"SELECT pg_try_advisory_lock({ALIVE_KEY})", key).fetchone()
            if row == (True,):
                return key

    def _try_lock(self, schema: str, session_id: str) -> bool:
        """``pg_try_advisory_lock`` on the claims connection; on a new one when that
        turns out to have died (it held no lock then: trying again takes none twice)."""
        for attempt in (1, 2):
            db = self._connection()
            try:
                failed = self._let_go_strays(db)
                if failed is not None and (schema, session_id) in self._stray:
                    raise failed[1]  # it may hold the lock still: not taken twice
                row = db.execute(f"SELECT pg_try_advisory_lock({CLAIM_KEY})", (schema, session_id))
                return row.fetchone() == (True,)
            except self._error:
                if attempt == 2 or not _dead(db):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _alive(self) -> bool:
        """Whether the claims connection still answers (a round trip)."""
        db = self._db
        if db is None or _dead(db):
            return False
        try:
            db.execute("SELECT 1")
        except self._error:
            if not _dead(db):
                raise
            return False
        return True

    def claim(self, schema: str, session_id: str) -> bool:
        """Hold the session's advisory lock; False when another worker (or another
        agent of this one) holds it. psycopg's errors are the caller's to report."""
        with self._lock:
            if session_id in self._held:
                return False
            held = self._try_lock(schema, session_id)
            if held:
                self._held[session_id] = self._generation
            return held

    def check(self, schema: str, session_id: str) -> Literal["held", "unclaimed", "lost"]:
        """Whether this backend holds the claim of ``session_id`` now: "unclaimed"
        when it did not claim it; "held" when it does, taken again if the connection
        that held it ended; "lost" when that connection ended and another worker holds
        the claim now (it is forgotten: the session is this worker's no more)."""
        with self._lock:
            generation = self._held.get(session_id)
            if generation is None:
                return "unclaimed"
            if generation == self._generation and self._alive():
                return "held"
            if self._try_lock(schema, session_id):  # the lock went with its connection
                self._held[session_id] = self._generation
                return "held"
            del self._held[session_id]
            return "lost"

    def alive_key(self, session_id: str) -> tuple[int, int] | None:
        """The ``ALIVE_KEY`` of the claims connection that holds the claim of
        ``session_id`` for this backend (None when it holds none): what a write tries to
        share (``CLAIMS_ALIVE``) once it holds the session's row."""
        with self._lock:
            db = self._db
            if self._held.get(session_id) != self._generation or db is None or _dead(db):
                return None
            return self._key

    def _let_go_strays(
        self, db: psycopg.Connection[Any]
    ) -> tuple[tuple[str, str], Exception] | None:
        """Unlock the ``_stray`` claims on ``db`` (a lock not held any more is only a
        server warning); the first that fails again and its error, else None."""
        for stray in list(self._stray):
            try:
                db.execute(f"SELECT pg_advisory_unlock({CLAIM_KEY})", stray)
            except self._error as exc:
                return stray, exc
            self._stray.remove(stray)
        return None

    def release(self, schema: str, session_id: str) -> str | None:
        """Let go of the claim of ``session_id``; what to warn of (None: nothing) when
        its unlock failed, or found the claims connection ended with other claims."""
        with self._lock:
            generation = self._held.pop(session_id, None)
            db = self._db
            if db is None or db.closed:
                return None  # its lock, if any, went with the connection that held it
            if generation == self._generation:
                self._stray.insert(0, (schema, session_id))
            failed = self._let_go_strays(db)
            if failed is None:
                return None
            (_, stray), exc = failed
            if not _dead(db):  # the other claims hold: the connection is kept
                return (
                    f"cannot let go of the claim of session {stray!r} ({exc}): this worker "
                    "may hold it still, and another cannot claim it, until this worker's "
                    "next claim or release lets go of it, or it closes"
                )
            db.close()  # it holds no lock any more: the next claim connects again
            self._stray.clear()
            others = [sid for sid, gen in self._held.items() if gen == self._generation]
            if not others:
                return None
            shown = ", ".join(repr(sid) for sid in others[:5])
            more = f" and {len(others) - 5} more" if len(others) > 5 else ""
            return (
                f"the connection holding this worker's claims ended (found while letting "
                f"go of session {stray!r}: {exc}); its claims of sessions {shown}{more} "
                "ended with it: each is taken again at the session's next write, which "
                "fails instead if another worker claimed the session meanwhile"
            )

    def close(self) -> None:
        """End every claim now: the server would end them once it sees the connection
        closed, a moment later, when another worker may already be trying to claim."""
        with self._lock:
            if self._db is not None:
                if self._held and not self._db.closed:
                    with suppress(self._error):  # a broken one holds no lock any more
                        self._db.execute("SELECT pg_advisory_unlock_all()")
                self._db.close()
                self._db = self._key = None
            self._held.clear()
            self._stray.clear()
