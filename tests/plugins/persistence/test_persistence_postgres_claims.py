"""Many workers sharing sessions in one PostgreSQL database: claims are advisory locks
that end with the worker's connection (a killed process lets go of them), a claim
refuses another worker's claim, claimless append and delete, and two writers of one
session never both succeed. "Another worker" is another ``PostgresBackend`` (its own
connections: to the server, another process) or a real process where it says so."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from claims_support import note

from dsh_persistence import (
    PersistenceError,
    PostgresBackend,
    SessionConflictError,
    SessionInfo,
    SessionInUseError,
)
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

INFO = SessionInfo("s", 1.0)
Opener = Callable[[], PostgresBackend]


def stored(backend: PostgresBackend, session_id: str = "s") -> int:
    log = LogBuilder()
    log.turn("one")
    backend.append(SessionInfo(session_id, 1.0), log.events, durable=True)
    return len(log.events)


def kept(backend: PostgresBackend, session_id: str = "s") -> int:
    loaded = backend.load(session_id)
    return 0 if loaded is None else loaded.kept


def test_a_claim_refuses_other_workers_until_released(open_backend: Opener) -> None:
    one, two = open_backend(), open_backend()
    count = stored(one)
    assert one.claim("s") is True
    assert one.claim("s") is False  # another agent of the same worker
    assert two.claim("s") is False
    assert two.claim("other") is True  # claims are per session

    with pytest.raises(SessionInUseError, match="another worker is continuing it"):
        two.append(INFO, [note(count)], durable=True)
    with pytest.raises(SessionInUseError) as refused:
        two.delete("s")
    assert str(refused.value).endswith(
        "cannot delete session 's': another worker is continuing it (it holds the "
        "session's claim); nothing was deleted"
    )  # not "nothing was written"
    one.append(INFO, [note(count, "holder")], durable=True)  # the holder is never refused
    assert kept(two) == count + 1

    one.release("s")
    two.append(INFO, [note(count + 1)], durable=True)  # the claim ended
    assert two.claim("s") is True
    assert one.claim("s") is False
    assert two.delete("s") is True  # the holder may delete it


def test_claims_of_one_session_in_two_schemas_are_independent(
    pg_server: object, open_backend: Opener
) -> None:
    """The lock key includes the schema: two stores of one database share no claim."""
    other = PostgresBackend(pg_server.url(pg_server.schema()))  # type: ignore[attr-defined]
    try:
        assert open_backend().claim("s") is True
        assert other.claim("s") is True
    finally:
        other.close()


def test_closing_a_backend_ends_its_claims_at_once(open_backend: Opener) -> None:
    """Not a moment later, when the server has seen the connection closed: a worker
    that disposes its agent and exits lets the next one continue at once."""
    two = open_backend()
    for _ in range(20):
        one = open_backend()
        assert one.claim("s") is True
        one.close()
        assert two.claim("s") is True
        two.release("s")


HOLDER = """
import sys, time
from dsh_persistence import PostgresBackend
backend = PostgresBackend(sys.argv[1])
assert backend.claim("s")
print("holding", flush=True)
time.sleep(120)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_killed_workers_claim_goes_with_its_connection(pg_url: str, open_backend: Opener) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, pg_url], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        waiting = open_backend()
        assert waiting.claim("s") is False
        with pytest.raises(SessionInUseError):
            waiting.append(INFO, [note(0)], durable=True)
    finally:
        holder.send_signal(signal.SIGKILL)  # no release, no close: only the socket ends
        holder.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while not waiting.claim("s"):  # the server notices the closed socket at once
        assert time.monotonic() < deadline, "the dead worker's claim outlived it"
        time.sleep(0.02)
    waiting.append(INFO, [note(0)], durable=True)
    assert kept(waiting) == 1


def race(
    session_id: str, writers: dict[str, PostgresBackend], first: int = 0
) -> dict[str, BaseException | None]:
    """Each writer appends a batch of ``session_id`` from seq ``first`` at once, from its
    thread; what each one's append raised (None: it stored its batch)."""
    start = threading.Barrier(len(writers))
    outcomes: dict[str, BaseException | None] = {}

    def write(backend: PostgresBackend, by: str) -> None:
        batch = [note(seq, by) for seq in range(first, first + 3)]
        start.wait()
        try:
            backend.append(SessionInfo(session_id, 1.0), batch, durable=False)
            outcomes[by] = None
        except BaseException as exc:  # checked by the test
            outcomes[by] = exc

    threads = [threading.Thread(target=write, args=(w, by)) for by, w in writers.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return outcomes


def test_two_workers_creating_one_session_one_wins_the_other_stores_nothing(
    open_backend: Opener,
) -> None:
    """Without claims (as two programs appending through backends of their own), the
    first batch of a new session is stored once: the other writer is refused whole."""
    one, two = open_backend(), open_backend()
    for round_ in range(15):
        session_id = f"race-{round_}"
        outcomes = race(session_id, {"one": one, "two": two})
        winners = [by for by, outcome in outcomes.items() if outcome is None]
        assert len(winners) == 1, outcomes
        (loser,) = set(outcomes) - set(winners)
        assert isinstance(outcomes[loser], SessionConflictError), outcomes
        loaded = one.load(session_id)
        assert loaded is not None
        assert [e.data["by"] for e in loaded.stored.events] == [winners[0]] * 3


def test_two_workers_appending_at_one_seq_one_wins_the_other_stores_nothing(
    open_backend: Opener,
) -> None:
    """The session's row is locked while its next seq is checked: of two appends from
    the same seq, the later one finds the seq taken and is refused whole."""
    one, two = open_backend(), open_backend()
    for round_ in range(15):
        session_id = f"stale-{round_}"
        count = stored(one, session_id)
        outcomes = race(session_id, {"one": one, "two": two}, first=count)
        winners = [by for by, outcome in outcomes.items() if outcome is None]
        assert len(winners) == 1, outcomes
        (loser,) = set(outcomes) - set(winners)
        assert isinstance(outcomes[loser], SessionConflictError), outcomes
        loaded = two.load(session_id)
        assert loaded is not None
        notes = [e.data["by"] for e in loaded.stored.events if e.type == "note"]
        assert notes == [winners[0]] * 3


def test_two_claimless_writers_take_turns_rather_than_refuse(open_backend: Opener) -> None:
    """Claimless writers share the claim's lock while they write: they never take each
    other for a claim (no ``SessionInUseError``), and the session row's lock and the seq
    check order their appends."""
    writers = [open_backend(), open_backend()]
    stored(writers[0])
    refused: list[BaseException] = []

    def write(backend: PostgresBackend, by: str) -> None:
        done = 0
        while done < 25:
            tail = backend.tail("s")
            assert tail is not None
            try:
                backend.append(INFO, [note(tail.next_seq, by)], durable=False)
                done += 1
            except SessionConflictError:
                continue  # the other one appended first: read the tail again
            except BaseException as exc:  # checked below
                refused.append(exc)
                return

    threads = [threading.Thread(target=write, args=(w, str(n))) for n, w in enumerate(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert refused == []
    loaded = writers[1].load("s")
    assert loaded is not None
    notes = [e.data["by"] for e in loaded.stored.events if e.type == "note"]
    assert sorted(notes) == ["0"] * 25 + ["1"] * 25


def prepare_at_once(backends: list[PostgresBackend]) -> list[BaseException]:
    """``prepare`` of every backend at once, each from its thread; what they raised."""
    start = threading.Barrier(len(backends))
    failed: list[BaseException] = []

    def prepare(backend: PostgresBackend) -> None:
        start.wait()
        try:
            backend.prepare()
        except BaseException as exc:  # checked by the test
            failed.append(exc)

    threads = [threading.Thread(target=prepare, args=(b,)) for b in backends]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return failed


def test_workers_opening_a_new_store_at_once_all_get_it(pg_url: str) -> None:
    """The first connection creates the tables under a lock: concurrent ``CREATE TABLE
    IF NOT EXISTS`` of one table would fail all but one of them."""
    import psycopg

    for _ in range(3):
        backends = [PostgresBackend(pg_url) for _ in range(4)]
        failed = prepare_at_once(backends)
        for backend in backends:
            backend.close()
        assert failed == []
        with psycopg.connect(pg_url, autocommit=True) as db:
            assert db.execute("SELECT count(*) FROM dsh_version").fetchone() == (1,)
            db.execute("DROP TABLE dsh_version, dsh_sessions, dsh_events, dsh_workspaces")


def test_a_delete_meeting_an_append_in_progress_leaves_none_of_its_events(
    open_backend: Opener, pg_url: str
) -> None:
    """A delete that meets an append still in its transaction (a writer without a claim:
    the row locked, its events inserted, not committed) waits for it and then removes
    its events too: none is left behind to make the id's next first append collide."""
    import psycopg

    backend = open_backend()
    backend.append(INFO, [note(0)], durable=True)
    with psycopg.connect(pg_url) as raw:
        raw.execute("SELECT next_seq FROM dsh_sessions WHERE id='s' FOR UPDATE")
        raw.execute("INSERT INTO dsh_events (session, seq, line) VALUES ('s', 1, '{}')")
        raw.execute("UPDATE dsh_sessions SET next_seq=2 WHERE id='s'")
        done: list[bool] = []
        deleting = threading.Thread(target=lambda: done.append(backend.delete("s")))
        deleting.start()
        with psycopg.connect(pg_url, autocommit=True) as watch:
            waits = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type='Lock'"
            for _ in range(500):  # until the delete waits on the row (10 s at most)
                if watch.execute(waits).fetchone() == (1,):
                    break
                time.sleep(0.02)
        raw.commit()  # the append ends while the delete waits on its row
        deleting.join(10)
    assert done == [True]
    with psycopg.connect(pg_url) as raw:
        left = raw.execute("SELECT count(*) FROM dsh_events WHERE session='s'").fetchone()
    assert left == (0,)
    backend.append(INFO, [note(0)], durable=True)  # the id is free again


def test_an_append_waits_for_a_held_session_row_no_longer_than_the_timeout(
    pg_url: str,
) -> None:
    """Another worker's transaction holding the session's row (stuck, or on a vanished
    machine the server has not noticed yet) makes an append fail after ``timeout``,
    as the SQLite backend's does, instead of holding up every call of the process
    (they share one connection); the next call works."""
    import psycopg

    backend = PostgresBackend(pg_url, timeout=0.2)
    try:
        backend.append(INFO, [note(0)], durable=True)
        with psycopg.connect(pg_url) as raw:
            raw.execute("SELECT next_seq FROM dsh_sessions WHERE id='s' FOR UPDATE")
            failed: list[BaseException] = []

            def append() -> None:
                try:
                    backend.append(INFO, [note(1)], durable=True)
                except BaseException as error:  # looked at below
                    failed.append(error)

            appending = threading.Thread(target=append)
            appending.start()
            appending.join(10)
            blocked = appending.is_alive()
            raw.rollback()  # lets a blocked append go on, so the thread ends
            appending.join(10)
        assert not blocked, "the append waited on the row past its timeout"
        assert len(failed) == 1 and "lock timeout" in str(failed[0])
        assert isinstance(failed[0], PersistenceError)
        backend.append(INFO, [note(1)], durable=True)  # nothing was written; now it is
        loaded = backend.load("s")
        assert loaded is not None and [e.seq for e in loaded.stored.events] == [0, 1]
    finally:
        backend.close()


def test_workers_whose_search_paths_find_one_store_share_its_claims(pg_server: object) -> None:
    """A worker whose search path starts with another (empty) schema finds the tables
    in the next one, as a worker whose path holds that schema alone: they share the
    sessions, and so they share the claims (keyed by the schema the tables are in,
    not the first of the search path)."""
    server: Any = pg_server
    tables, empty = server.schema(), server.schema()
    one = PostgresBackend(server.url(tables))
    two = PostgresBackend(server.url(f"{empty}%2C{tables}"))
    try:
        count = stored(one)
        assert kept(two) == count  # one store
        assert one.claim("s") is True
        assert two.claim("s") is False
        with pytest.raises(SessionInUseError):
            two.append(INFO, [note(count)], durable=True)
        one.release("s")
        assert two.claim("s") is True
        assert one.claim("s") is False
    finally:
        one.close()
        two.close()
