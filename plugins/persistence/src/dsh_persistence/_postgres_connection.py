"""The data connection of the PostgreSQL backend: one connection, used by one thread at
a time, replaced when it breaks.

``run(work, safe=...)`` runs ``work`` on the connection (connecting first when there is
none). A connection that died under it (a server restart, a failover, a terminated
backend) is dropped, and ``work`` runs once more on a new one when that cannot write
twice: when it is ``safe`` (a read) or when the commit of its ``transaction`` was never
sent (the server rolled the transaction back with the connection). A connection that
broke while committing is not retried: the write may or may not be stored, and the
error says so. A connection left in a transaction by any error (an interrupt while it
rolled back) is closed rather than used again.

At connect the tables are found through the connection's ``search_path`` (the first
schema that holds the session tables, else the first that holds ``dsh_version``), and the
search path is then pinned to that schema: ``schema`` names it, for the claims' keys.
Missing (all of them, or all but ``dsh_version``: a half-done setup, nothing to lose),
they are created (in the search path's first schema, or beside ``dsh_version``) for a
write only (``run``, ``prepare``): a read (``read``) of a database without them finds
nothing and creates nothing (``dsh sessions list`` pointed at the wrong database leaves it
as it was), and looks for them again each time until they are there (another worker may
create them). A schema holding some of the session tables but not all is a damaged store:
reads and writes fail, naming the schema and the missing tables, and nothing is created.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from dsh_persistence._errors import (
    PersistenceError,
    SessionFormatError,
    SessionStoreUnusableError,
)
from dsh_persistence._opening import set_up, unusable_error
from dsh_persistence._postgres_schema import SCHEMA, SCHEMA_LOCK, SCHEMA_VERSION, TABLES
from dsh_persistence._postgres_url import not_text, scrub

if TYPE_CHECKING:
    import psycopg

__all__ = ["DataConnection"]

T = TypeVar("T")

#: Each schema of the search path (in its order) that holds some of the tables: which.
_TABLES_FOUND = (
    "SELECT s.name, array_agg(c.relname::text) "
    "FROM unnest(current_schemas(false)) WITH ORDINALITY AS s(name, pos) "
    "JOIN pg_namespace n ON n.nspname=s.name "
    "JOIN pg_class c ON c.relnamespace=n.oid AND c.relname=ANY(%s) "
    "GROUP BY s.name, s.pos ORDER BY s.pos"
)
#: The tables that hold the sessions (``dsh_version`` holds none).
_DATA_TABLES = tuple(table for table in TABLES if table != "dsh_version")


class DataConnection:
    """The connection that reads and writes the sessions. ``pg``: psycopg; ``location``
    and ``source`` name the store in messages (``url`` only to hide its password)."""

    def __init__(
        self, pg: ModuleType, url: str, *, location: str, source: str, timeout: float
    ) -> None:
        self._pg = pg
        self._url = url
        self._location = location
        self._source = source
        self._timeout = timeout
        #: Held while the connection is used (by ``run``): one thread at a time.
        self.lock = threading.Lock()
        self._db: psycopg.Connection[Any] | None = None
        self._sync_commit: bool | None = None  # the connection's synchronous_commit
        self._committing = False  # the current work's commit was sent
        #: The schema that holds the tables (read at connect; None before, or while the
        #: database has none).
        self.schema: str | None = None
        #: The tables hold their version row (checked; a write adds it where missing).
        self.versioned = False
        #: Counts the connections made: a commit is on the server of its generation.
        self.generation = 0

    # -- connecting ----------------------------------------------------------------------

    def unusable(self, doing: str, reason: object) -> PersistenceError:
        shown = scrub(str(reason).strip(), self._url)
        return unusable_error(self._location, self._source, doing, shown)

    def open(self) -> psycopg.Connection[Any]:
        """A new connection (autocommit), for data or claims."""
        try:
            return self._pg.connect(self._url, autocommit=True)  # type: ignore[no-any-return]
        except self._pg.Error as exc:
            reason = str(exc)
        except UnicodeError:  # psycopg's parser: a percent-encoded byte that is not UTF-8
            reason = not_text(self._url)
        # raised here, out of the except block, so that it carries no cause and no
        # context: libpq may quote the connection string, password included
        raise self.unusable("connect to the session database", reason)

    def prepare(self) -> str:
        """Connect now (creating the tables if they are missing); the tables' schema."""
        schema = self._run(lambda db: self.schema, safe=True, create=True)
        assert schema is not None
        return schema

    def _connect(self, *, create: bool) -> psycopg.Connection[Any]:
        """The connection: a new one when there is none, which finds the tables and sets
        ``schema`` (creating them first if ``create``)."""
        if self._db is not None and not self._db.closed:
            return self._db
        self._db, self._sync_commit = None, None
        db = self.open()
        with set_up(db, self._pg.Error, self.unusable, "create the session tables"):
            db.execute(f"SET lock_timeout = {max(1, round(self._timeout * 1000))}")
            self.schema = self._check_schema(db, create=create)
        self._db = db
        self.generation += 1
        return db

    def _check_schema(self, db: psycopg.Connection[Any], *, create: bool) -> str | None:
        """Find the tables, pin the search path to their schema, check their version; the
        schema. None of the data tables (``dsh_version`` alone, a half-done manual setup,
        holds no session), or no version row: they are created if ``create``, else None
        (no data tables: nothing stored) or the schema. Some of the data tables but not
        all (or no ``dsh_version`` beside them): a damaged store, refused."""

        def tables() -> tuple[str | None, set[str]]:
            # the first schema holding data tables (a stray dsh_version earlier in the
            # search path hides no store), else the first holding dsh_version
            found = [
                (str(name), set(names))
                for name, names in db.execute(_TABLES_FOUND, (list(TABLES),)).fetchall()
            ]
            for name, names in found:
                if names & set(_DATA_TABLES):
                    return name, names
            return found[0] if found else (None, set())

        def pin(schema: str) -> None:
            # every later statement finds the tables there, whatever else the search
            # path holds (or comes to hold): the claims are keyed by this schema
            db.execute(
                "SELECT set_config('search_path', quote_ident(%s) || ', pg_temp', false)",
                (schema,),
            )

        def version() -> int | None:
            row = db.execute("SELECT max(version) FROM dsh_version").fetchone()
            return None if row is None or row[0] is None else int(row[0])

        found, present = tables()
        if found is not None:
            pin(found)
        version_found = None if "dsh_version" not in present else version()
        if version_found is not None:
            self._refuse_newer(version_found)  # whatever its tables are now
        data = present & set(_DATA_TABLES)
        if data and not present >= set(TABLES):
            assert found is not None
            raise self._damaged(found, [table for table in TABLES if table not in present])
        self.versioned = version_found is not None
        if not create:
            # for a read, nothing created: no data tables, nothing stored (None); tables
            # an administrator made without their version row are read as they are
            return found if data else None
        if version_found is not None and data:
            return found
        # no tables, dsh_version alone, or no version row: create what is missing
        with db.transaction():
            db.execute(SCHEMA_LOCK)
            for statement in SCHEMA:  # in the search path's first schema if none
                db.execute(statement)
            found, _ = tables()
            assert found is not None
            pin(found)
            version_found = version()
            if version_found is None:
                db.execute("INSERT INTO dsh_version VALUES (%s)", (SCHEMA_VERSION,))
                version_found = SCHEMA_VERSION
            # inside the transaction: a newer version may have made its tables while this
            # one waited for the lock, and refusing rolls back what was created beside them
            self._refuse_newer(version_found)
        self.versioned = True
        return found

    def _damaged(self, schema: str, missing: list[str]) -> PersistenceError:
        return PersistenceError(
            f'{self._location}: schema "{schema}" holds only some of the session tables '
            f"(missing: {', '.join(missing)}): the sessions stored there may be incomplete, "
            "so dsh neither reads nor writes them. To use it again, restore the missing "
            "tables from a backup (or create them empty with the statements in "
            "dsh_persistence/_postgres_schema.py), or point the URL's search_path at "
            "another schema. The database was not changed."
        )

    def _refuse_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise SessionFormatError(
                f"{self._location}: session tables schema version {version} is newer than "
                f"this dsh-persistence reads (up to {SCHEMA_VERSION}); upgrade "
                "dsh-persistence to open it. The database was not changed."
            )

    # -- running work --------------------------------------------------------------------

    def run(
        self,
        work: Callable[[psycopg.Connection[Any]], T],
        *,
        safe: bool = False,
        unstored: Callable[..., str] | None = None,
    ) -> T:
        """``work(connection)``, once more on a new connection when the connection died
        under it and running it again cannot write twice (see the module). The tables
        are created first if they are missing. ``unstored(whole=...)``: what a failure
        leaves unstored (``_errors.unstored``), said after why."""
        if unstored is None:
            return self._run(work, safe=safe, create=True)
        try:
            return self._run(work, safe=safe, create=True, unstored=unstored)
        except SessionStoreUnusableError as exc:  # not connected, or no tables made
            raise SessionStoreUnusableError(f"{exc}; {unstored()}") from exc.__cause__

    def read(
        self, work: Callable[[psycopg.Connection[Any]], T], nothing: T, *, safe: bool = True
    ) -> T:
        """``run`` for what only reads what is stored (or removes it): ``nothing`` when the
        database has no tables, which are not created to say so."""

        def stored(db: psycopg.Connection[Any]) -> T:
            return nothing if self.schema is None else work(db)

        return self._run(stored, safe=safe, create=False)

    def _run(
        self,
        work: Callable[[psycopg.Connection[Any]], T],
        *,
        safe: bool,
        create: bool,
        unstored: Callable[..., str] | None = None,
    ) -> T:
        with self.lock:
            for attempt in (1, 2):
                generation = self.generation
                db = self._connect(create=create)
                self._committing = False
                try:
                    # none (or no version row, for a write) when this connection looked
                    missing = self.schema is None or (create and not self.versioned)
                    if missing and self.generation == generation:
                        self._look_again(db, create=create)
                    return work(db)
                except self._pg.Error as exc:
                    self._drop_unless_idle(db)
                    dead = db.closed or db.broken
                    if dead and attempt == 1 and (safe or not self._committing):
                        continue  # the server rolled back what it had not committed
                    # one line, as ``unusable_error`` says it (a hint is on a line of its own)
                    said = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
                    reason = scrub(said, self._url)
                    lost = dead and self._committing
                    if lost:
                        reason += (
                            " (the connection was lost while committing: the write may "
                            "or may not have been stored)"
                        )
                    if unstored is not None:
                        reason += f"; {unstored(whole=not lost)}"
                    raise PersistenceError(f"{self._location}: {reason}") from exc
                except BaseException:
                    self._drop_unless_idle(db)
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _look_again(self, db: psycopg.Connection[Any], *, create: bool) -> None:
        """Find the tables (creating them if ``create``) on a connection that found none:
        another worker may have created them since. A connection that died meanwhile is
        left for ``run`` to replace."""
        try:
            self.schema = self._check_schema(db, create=create)
        except self._pg.Error as exc:
            if db.closed or db.broken:
                raise
            raise self.unusable("create the session tables", exc) from exc

    def _drop_unless_idle(self, db: psycopg.Connection[Any]) -> None:
        """Close the connection unless it is idle and sound: one left in a transaction
        (or with a statement still running) must not carry the next call's work."""
        idle = self._pg.pq.TransactionStatus.IDLE
        if db.closed or db.broken or db.info.transaction_status != idle:
            with suppress(self._pg.Error):
                db.close()
            if self._db is db:
                self._db = None

    @contextmanager
    def transaction(self, db: psycopg.Connection[Any]) -> Iterator[None]:
        """``db.transaction()``, noting when its commit is sent (``run`` retries a write
        only before that)."""
        with db.transaction():
            yield
            self._committing = True

    def commit_sync(self, db: psycopg.Connection[Any], on: bool) -> None:
        """Set the connection's ``synchronous_commit`` (only when it changes)."""
        if self._sync_commit is not on:
            db.execute(f"SET synchronous_commit = {'on' if on else 'off'}")
            self._sync_commit = on

    def close(self) -> None:
        with self.lock:
            if self._db is not None:
                self._db.close()
                self._db = None
