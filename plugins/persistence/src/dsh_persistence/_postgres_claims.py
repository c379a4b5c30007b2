"""The claims of the PostgreSQL backend: session-level advisory locks, held on a
connection of their own that is kept open for them.

A worker that dies, or whose connection breaks, lets go of its claims with the
connection: the server ends the locks of a session that ends. ``CLAIM_KEY`` makes the
lock's key from the session id and the schema of the tables.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from dsh_persistence._postgres_schema import CLAIM_KEY

if TYPE_CHECKING:
    import psycopg

__all__ = ["AdvisoryClaims"]


class AdvisoryClaims:
    """``claim`` / ``release`` as ``SessionBackend`` has them. ``connect`` opens a new
    connection (autocommit); ``error`` is psycopg's base error class."""

    def __init__(
        self, connect: Callable[[], psycopg.Connection[Any]], error: type[Exception]
    ) -> None:
        self._connect = connect
        self._error = error
        self._lock = threading.Lock()
        self._db: psycopg.Connection[Any] | None = None
        self._held: set[str] = set()

    def holds(self, session_id: str) -> bool:
        """Whether this backend holds the claim of ``session_id``."""
        return session_id in self._held

    def _connection(self) -> psycopg.Connection[Any]:
        if self._db is not None and not self._db.closed:
            return self._db
        self._held.clear()  # the locks went with the connection that held them
        self._db = self._connect()
        return self._db

    def claim(self, session_id: str) -> bool:
        """Hold the session's advisory lock; False when another worker (or another
        agent of this one) holds it. psycopg's errors are the caller's to report."""
        with self._lock:
            if session_id in self._held:
                return False
            row = self._connection().execute(
                f"SELECT pg_try_advisory_lock({CLAIM_KEY})", (session_id,)
            )
            held = row.fetchone() == (True,)
            if held:
                self._held.add(session_id)
            return held

    def release(self, session_id: str) -> None:
        with self._lock:
            if session_id not in self._held:
                return
            self._held.discard(session_id)
            db = self._db
            if db is None or db.closed:
                return
            try:
                db.execute(f"SELECT pg_advisory_unlock({CLAIM_KEY})", (session_id,))
            except self._error:  # a broken connection holds no lock any more
                db.close()

    def close(self) -> None:
        """End every claim now: the server would end them once it sees the connection
        closed, a moment later, when another worker may already be trying to claim."""
        with self._lock:
            if self._db is not None:
                if self._held and not self._db.closed:
                    with suppress(self._error):  # a broken one holds no lock any more
                        self._db.execute("SELECT pg_advisory_unlock_all()")
                self._db.close()
                self._db = None
            self._held.clear()
