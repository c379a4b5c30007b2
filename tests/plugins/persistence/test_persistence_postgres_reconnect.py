"""The PostgreSQL backend when its connections end under it (a server restart, a
failover, a backend ended by an administrator): the data connection is replaced and a
call that cannot write twice runs again on the new one; a claim whose connection ended
is taken again, or fails the next write clearly when another worker took it; a
connection an error left inside a transaction is never used again; ``sync`` says
durable only when it flushed. Against a real server (``pg_server``), restarted or with
its backends terminated."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import pytest
from claims_support import note

from dsh_persistence import PersistenceError, PostgresBackend, SessionInfo, SessionInUseError

pytestmark = pytest.mark.plugins("persistence")

INFO = SessionInfo("s", 1.0)
Opener = Callable[..., PostgresBackend]


@pytest.fixture
def open_backend(pg_url: str) -> Iterator[Opener]:
    opened: list[PostgresBackend] = []

    def opener(url: str = pg_url) -> PostgresBackend:
        opened.append(PostgresBackend(url))
        return opened[-1]

    yield opener
    for backend in opened:
        backend.close()


def end_connections(server: Any) -> None:
    """End every other client connection to the server (as an administrator would),
    and wait until they are gone."""
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as db:
        others = (
            "FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type='client backend'"
        )
        db.execute(f"SELECT pg_terminate_backend(pid) {others}")
        for _ in range(500):
            if db.execute(f"SELECT count(*) {others}").fetchone() == (0,):
                return
            time.sleep(0.01)
    raise AssertionError("the terminated connections did not end")


def seqs(backend: PostgresBackend, session_id: str = "s") -> list[int]:
    loaded = backend.load(session_id)
    return [] if loaded is None else [e.seq for e in loaded.stored.events]


def test_after_a_server_restart_the_first_calls_work(pg_server: Any, open_backend: Opener) -> None:
    """The connection that the restart ended is replaced at the next call, which runs
    on the new one (a read; a write whose transaction the server rolled back)."""
    backend = open_backend()
    backend.append(INFO, [note(0)], durable=True)
    pg_server.restart()
    tail = backend.tail("s")  # a read
    assert tail is not None and tail.next_seq == 1
    pg_server.restart()
    backend.append(INFO, [note(1)], durable=True)  # a write: its BEGIN met the dead one
    end_connections(pg_server)
    assert seqs(backend) == [0, 1]
    end_connections(pg_server)
    assert [h.id for h in backend.headers()] == ["s"]
    end_connections(pg_server)
    assert backend.delete("s") is True


def test_a_write_whose_connection_broke_while_committing_is_not_run_again(
    pg_url: str, open_backend: Opener
) -> None:
    """The commit was sent: whether it was stored is unknown, so the write is not run a
    second time (it could be stored twice) and the error says the outcome is unknown.
    A trigger ends the connection at the commit (a deferred constraint trigger) and
    counts how often it ran in a sequence (which a rollback does not undo)."""
    import psycopg

    backend = open_backend()
    backend.append(INFO, [note(0)], durable=True)
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute("CREATE SEQUENCE kills")
        db.execute(
            "CREATE FUNCTION kill() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "PERFORM nextval('kills'); PERFORM pg_terminate_backend(pg_backend_pid()); "
            "PERFORM pg_sleep(5); RETURN NULL; END $$"
        )
        db.execute(
            "CREATE CONSTRAINT TRIGGER kill AFTER INSERT ON dsh_events DEFERRABLE "
            "INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.line LIKE '%kill-me%') "
            "EXECUTE FUNCTION kill()"
        )
    with pytest.raises(PersistenceError, match="may or may not have been stored"):
        backend.append(INFO, [note(1, "kill-me")], durable=True)
    with psycopg.connect(pg_url, autocommit=True) as db:
        assert db.execute("SELECT last_value FROM kills").fetchone() == (1,)
    assert seqs(backend) == [0]  # the next call reconnects; the commit did not happen


def test_a_claim_whose_connection_ended_is_taken_again_at_the_next_write(
    pg_server: Any, open_backend: Opener
) -> None:
    one = open_backend()
    one.append(INFO, [note(0)], durable=True)
    assert one.claim("s") is True
    end_connections(pg_server)  # the claim ends with its connection
    one.append(INFO, [note(1, "holder")], durable=True)  # takes it again
    other = open_backend()
    assert other.claim("s") is False
    with pytest.raises(SessionInUseError):
        other.append(INFO, [note(2)], durable=True)
    assert seqs(other) == [0, 1]


def test_a_claim_another_worker_took_after_its_connection_ended_fails_the_next_write(
    pg_server: Any, open_backend: Opener
) -> None:
    """The worker must not go on believing it holds the session: its next write is
    refused (``SessionInUseError``), and the claim is its no more."""
    one = open_backend()
    one.append(INFO, [note(0)], durable=True)
    assert one.claim("s") is True
    end_connections(pg_server)
    other = open_backend()
    assert other.claim("s") is True  # the first worker's claim is gone
    with pytest.raises(SessionInUseError, match="claim of it ended with its connection"):
        one.append(INFO, [note(1, "lost")], durable=True)
    with pytest.raises(SessionInUseError):
        one.delete("s")
    other.append(INFO, [note(1, "other")], durable=True)
    assert seqs(one) == [0, 1]
    other.release("s")
    assert one.claim("s") is True  # it may claim it again, as any worker


def test_a_connection_an_interrupt_left_in_a_transaction_is_not_used_again(
    open_backend: Opener,
) -> None:
    """An interrupt (Ctrl-C) that arrives as psycopg starts to roll back a transaction
    that failed (here: an append refused for its seq) leaves the connection inside the
    transaction. It is closed, not used again: later writes would run inside the
    abandoned transaction and never commit. The interrupt is raised by a trace hook
    when psycopg's ``Transaction.__exit__`` is entered with an error."""
    backend = open_backend()
    backend.append(INFO, [note(0)], durable=True)
    interrupted: list[str] = []

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        code = frame.f_code
        if (
            event == "call"
            and not interrupted
            and code.co_name == "__exit__"
            and code.co_filename.endswith(os.path.join("psycopg", "transaction.py"))
            and frame.f_locals.get("exc_type") is not None
        ):
            interrupted.append(code.co_filename)
            raise KeyboardInterrupt
        return None

    sys.settrace(tracer)
    try:
        with pytest.raises(KeyboardInterrupt):
            backend.append(INFO, [note(5)], durable=True)  # refused: seq 1 is next
    finally:
        sys.settrace(None)
    assert interrupted
    backend.append(INFO, [note(1)], durable=True)
    assert seqs(open_backend()) == [0, 1]  # committed, not left in a transaction


def wal(pg_url: str, what: str) -> int:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as db:
        row = db.execute(f"SELECT pg_current_wal_{what}_lsn() - '0/0'::pg_lsn").fetchone()
    assert row is not None
    return int(row[0])


def test_sync_of_a_session_deleted_meanwhile_says_so_and_flushes_the_others(
    pg_url: str, open_backend: Opener
) -> None:
    """Its no-op update finds no row: nothing is written, so nothing is flushed. It
    must neither report the session durable nor take the other sessions' commits for
    flushed."""
    one, other = open_backend(), open_backend()
    one.append(INFO, [note(0)], durable=False)
    assert other.delete("s") is True  # a writer without a claim may
    one.append(SessionInfo("t", 1.0), [note(0)], durable=False)
    written = wal(pg_url, "insert")
    with pytest.raises(PersistenceError, match="cannot sync session 's': it is not stored"):
        one.sync("s")
    one.sync("t")
    assert wal(pg_url, "flush") >= written, "sync('t') returned before t's commit was flushed"


def test_sync_after_a_crash_reports_durable_only_what_is_stored(
    pg_server: Any, open_backend: Opener
) -> None:
    """A server that crashes loses the commits made with ``synchronous_commit=off``
    that were not flushed yet (the test server flushes them every 10 s): ``sync`` on
    the new connection returns only if the session's events are all there."""
    backend = open_backend()
    backend.append(INFO, [note(0)], durable=True)
    backend.append(INFO, [note(1)], durable=False)
    pg_server.restart("immediate")
    failed: list[PersistenceError] = []
    try:
        backend.sync("s")
    except PersistenceError as error:  # looked at below
        failed.append(error)
    if failed:  # the commit was lost: sync says so
        assert "what was written since its last flush is not durable" in str(failed[0])
        assert seqs(backend) == [0]
    else:
        assert seqs(backend) == [0, 1]
