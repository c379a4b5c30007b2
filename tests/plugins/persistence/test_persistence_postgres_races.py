"""Two races of the PostgreSQL backend, each stopped in its window against a real server.

- A worker opening a new database creates the tables under the schema lock; a newer
  version that created its own tables while this one waited for that lock had them
  changed by it: the old tables were created beside the newer ones, committed, and only
  then was the newer version refused ("The database was not changed" was not true).
- A claim that ended (its connection ended) while its holder was between the claim's
  check and its write: another worker claimed the session meanwhile, and the former
  holder's write went in, so the new holder's own write was the one refused.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from claims_support import note
from test_persistence_postgres_claims import INFO, Opener
from test_persistence_reading_creates_nothing import tables

from dsh_persistence import (
    PostgresBackend,
    SessionFormatError,
    SessionInUseError,
)
from dsh_persistence._postgres_claims import AdvisoryClaims

pytestmark = pytest.mark.plugins("persistence")


def end_connection(admin: Any, pid: int) -> None:
    """End the server process ``pid`` (a connection's), as a crash or a network failure
    would, and wait until the server has let it go."""
    admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    wait_for(admin, "SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid=%s)", (pid,))


def wait_for(db: Any, query: str, args: tuple[Any, ...] = ()) -> None:
    deadline = time.monotonic() + 30
    while db.execute(query, args).fetchone() != (True,):
        assert time.monotonic() < deadline, query
        time.sleep(0.01)


def test_a_newer_schema_made_while_waiting_for_the_schema_lock_is_left_unchanged(
    pg_server: Any,
) -> None:
    """The newer version's store holds ``dsh_version`` (2), ``dsh_sessions``,
    ``dsh_events`` and a table of its own in place of ``dsh_workspaces``."""
    import psycopg

    from dsh_persistence._postgres_schema import SCHEMA_LOCK

    schema = pg_server.schema()
    newer = psycopg.connect(pg_server.url(schema))  # not autocommit: one transaction
    watcher = psycopg.connect(pg_server.url(), autocommit=True)
    backend = PostgresBackend(pg_server.url(schema))
    outcome: list[BaseException | None] = []

    def prepare() -> None:
        try:
            backend.prepare()
            outcome.append(None)
        except BaseException as exc:  # reported below
            outcome.append(exc)

    try:
        newer.execute(SCHEMA_LOCK)
        thread = threading.Thread(target=prepare)
        thread.start()
        wait_for(  # it found no tables and waits for the schema lock
            watcher,
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype='advisory' AND NOT granted)",
        )
        newer.execute("CREATE TABLE dsh_version (version integer NOT NULL)")
        newer.execute("INSERT INTO dsh_version VALUES (2)")
        newer.execute("CREATE TABLE dsh_sessions (id text PRIMARY KEY)")
        newer.execute("CREATE TABLE dsh_events (session text, seq bigint)")
        newer.execute("CREATE TABLE dsh_places (session text PRIMARY KEY)")
        newer.commit()
        thread.join(30)
    finally:
        newer.close()
        watcher.close()
        backend.close()

    (error,) = outcome
    assert isinstance(error, SessionFormatError), error
    assert "version 2 is newer" in str(error)
    assert "not changed" in str(error)
    assert tables(pg_server, schema) == sorted(
        ["dsh_version", "dsh_sessions", "dsh_events", "dsh_places"]
    )


def test_a_claim_lost_between_its_check_and_the_write_refuses_the_write(
    pg_server: Any, open_backend: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The holder's claims connection is ended right after the check of its write found
    it held; another worker claims the session and reads where it ends (seq 1 next).
    The former holder's write must be refused, and the new holder's go in."""
    import psycopg

    holder, other = open_backend(), open_backend()
    holder.append(INFO, [note(0)], durable=True)
    assert holder.claim("s")
    real = AdvisoryClaims.check
    tails: list[Any] = []

    def check(self: AdvisoryClaims, schema: str, session_id: str) -> Any:
        found = real(self, schema, session_id)
        if self is holder._claims and not tails:
            db = self._db
            assert db is not None
            pid = db.info.backend_pid
            with psycopg.connect(pg_server.url(), autocommit=True) as admin:
                end_connection(admin, pid)
            assert other.claim("s")
            tails.append(other.tail("s"))
        return found

    monkeypatch.setattr(AdvisoryClaims, "check", check)

    with pytest.raises(SessionInUseError, match="'s'"):
        holder.append(INFO, [note(1, "former holder")], durable=True)

    assert tails and tails[0] is not None
    other.append(INFO, [note(tails[0].next_seq, "new holder")], durable=True)
    loaded = other.load("s")
    assert loaded is not None
    assert [e.data["by"] for e in loaded.stored.events] == ["test", "new holder"]


def test_a_claim_taken_while_a_former_holders_write_holds_the_row_waits_for_it(
    pg_server: Any, open_backend: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The former holder's write found its claim held once it held the session's row;
    its claims connection ends before it commits. A worker claiming the session then
    waits for that write, so what it reads after its claim holds it (it read the log
    without it, and its own write was refused)."""
    import psycopg

    holder, other = open_backend(), open_backend()
    holder.append(INFO, [note(0)], durable=True)
    assert holder.claim("s")
    real = PostgresBackend._confirm_claim
    tails: list[Any] = []
    threads: list[threading.Thread] = []

    def claim_and_read() -> None:
        assert other.claim("s")
        tails.append(other.tail("s"))

    def confirm(self: PostgresBackend, db: Any, session_id: str, doing: str) -> None:
        real(self, db, session_id, doing)
        if self is holder and not threads:
            claims = holder._claims._db
            assert claims is not None
            pid = claims.info.backend_pid
            with psycopg.connect(pg_server.url(), autocommit=True) as admin:
                end_connection(admin, pid)
                threads.append(threading.Thread(target=claim_and_read))
                threads[0].start()
                deadline = time.monotonic() + 30
                while threads[0].is_alive() and admin.execute(
                    "SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE "
                    "wait_event_type='Lock' AND query LIKE '%%FOR KEY SHARE%%')"
                ).fetchone() == (True,):
                    assert time.monotonic() < deadline, "the claim neither ended nor waited"
                    time.sleep(0.01)

    monkeypatch.setattr(PostgresBackend, "_confirm_claim", confirm)
    holder.append(INFO, [note(1, "former holder")], durable=True)
    threads[0].join(30)

    (tail,) = tails
    assert tail is not None and tail.next_seq == 2
    other.append(INFO, [note(2, "new holder")], durable=True)
    loaded = other.load("s")
    assert loaded is not None
    assert [e.data["by"] for e in loaded.stored.events] == ["test", "former holder", "new holder"]
