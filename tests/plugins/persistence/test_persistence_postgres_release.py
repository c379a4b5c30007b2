"""The PostgreSQL backend's ``release`` when its unlock fails. A worker's claims are
advisory locks of one claims connection, so closing that connection drops all of them:
a failed unlock on a connection that still lives must keep it (and the other claims),
say which session's claim it could not let go of, and let go of it later; one that
failed because the connection ended says that the other claims ended with it, and the
next claim connects again. The unlock fails for real: ``EXECUTE`` on
``pg_advisory_unlock(bigint)`` is revoked (from a worker that is no superuser) once the
claims are taken; a ``pg_cancel_backend`` that meets the unlock fails it the same way,
but only now and then. Against a real server (``pg_server``)."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from claims_support import note

from dsh_persistence import PersistenceError, PostgresBackend, SessionInfo, SessionInUseError

pytestmark = pytest.mark.plugins("persistence")

_roles = itertools.count()
Opener = Callable[[], PostgresBackend]


@pytest.fixture
def role(pg_server: Any) -> str:
    """A new login role that is no superuser (a superuser is never refused a function)."""
    name = f"claimer_{os.getpid()}_{next(_roles)}"
    pg_server.execute(f"CREATE ROLE {name} LOGIN")
    return name


@pytest.fixture
def open_worker(pg_server: Any, role: str) -> Iterator[Opener]:
    """Opens workers (``PostgresBackend``) of one new schema as ``role``."""
    schema = pg_server.schema()
    pg_server.execute(f"GRANT ALL ON SCHEMA {schema} TO {role}")
    url = pg_server.url(schema).replace("postgres@", f"{role}@", 1)
    opened: list[PostgresBackend] = []

    def opener() -> PostgresBackend:
        opened.append(PostgresBackend(url))
        return opened[-1]

    yield opener
    for backend in opened:
        backend.close()


@contextmanager
def unlock_refused(server: Any) -> Iterator[None]:
    """``pg_advisory_unlock`` fails (permission denied) for workers other than superusers."""
    server.execute("REVOKE EXECUTE ON FUNCTION pg_advisory_unlock(bigint) FROM PUBLIC")
    try:
        yield
    finally:
        server.execute("GRANT EXECUTE ON FUNCTION pg_advisory_unlock(bigint) TO PUBLIC")


def end_connections_of(server: Any, role: str) -> None:
    """End every connection of ``role`` (as an administrator would), and wait until
    they are gone."""
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as db:
        of_role = "FROM pg_stat_activity WHERE usename = %s"
        db.execute(f"SELECT pg_terminate_backend(pid) {of_role}", (role,))
        for _ in range(500):
            if db.execute(f"SELECT count(*) {of_role}", (role,)).fetchone() == (0,):
                return
            time.sleep(0.01)
    raise AssertionError("the terminated connections did not end")


def test_a_failed_release_keeps_the_other_claims_and_names_its_session(
    pg_server: Any, open_worker: Opener, caplog: pytest.LogCaptureFixture
) -> None:
    one, other = open_worker(), open_worker()
    one.prepare()
    assert one.claim("a") is True and one.claim("b") is True
    with unlock_refused(pg_server), caplog.at_level("WARNING", logger="dsh.persistence"):
        one.release("a")
    assert other.claim("b") is False  # still the first worker's
    (record,) = caplog.records
    message = record.getMessage()
    assert "session 'a'" in message and "permission denied" in message, message
    assert "'b'" not in message  # nothing was lost
    with pytest.raises(SessionInUseError, match="another worker is continuing it"):
        other.append(SessionInfo("b", 1.0), [note(0, "other")], durable=True)
    one.append(SessionInfo("b", 1.0), [note(0, "one")], durable=True)  # its claim holds
    assert other.claim("a") is False  # the unlock failed: the first worker holds it still
    assert one.claim("c") is True  # its next claim lets go of it
    assert other.claim("a") is True
    one.release("b")
    assert other.claim("b") is True


def test_a_failed_release_then_a_claim_of_that_session_holds_it_once(
    pg_server: Any, open_worker: Opener, caplog: pytest.LogCaptureFixture
) -> None:
    """The claim of a session whose unlock failed does not take its lock a second time
    (advisory locks count): it lets go of it first, or fails when it cannot; then one
    release lets go of it."""
    one, other = open_worker(), open_worker()
    assert one.claim("a") is True
    with unlock_refused(pg_server), caplog.at_level("WARNING", logger="dsh.persistence"):
        one.release("a")
        with pytest.raises(PersistenceError, match=r"claim session .a.*permission denied"):
            one.claim("a")
    assert other.claim("a") is False
    assert one.claim("a") is True
    one.release("a")
    assert other.claim("a") is True


def test_a_claim_of_a_session_whose_unlock_failed_behind_another_s_holds_it_once(
    pg_server: Any, open_worker: Opener, caplog: pytest.LogCaptureFixture
) -> None:
    """The pending unlocks are tried in turn and stop at the first that fails: a
    session's own, behind another's, was not tried, and its lock was taken again."""
    one, other = open_worker(), open_worker()
    assert one.claim("a") is True and one.claim("b") is True
    with unlock_refused(pg_server), caplog.at_level("WARNING", logger="dsh.persistence"):
        one.release("a")
        one.release("b")
        with pytest.raises(PersistenceError, match=r"claim session .a.*permission denied"):
            one.claim("a")
    assert one.claim("a") is True
    one.release("a")
    assert other.claim("a") is True and other.claim("b") is True


def test_a_release_whose_claims_connection_ended_says_the_other_claims_ended_with_it(
    pg_server: Any, role: str, open_worker: Opener, caplog: pytest.LogCaptureFixture
) -> None:
    one, other = open_worker(), open_worker()
    assert one.claim("a") is True and one.claim("b") is True
    end_connections_of(pg_server, role)
    with caplog.at_level("WARNING", logger="dsh.persistence"):
        one.release("a")
    (record,) = caplog.records
    message = record.getMessage()
    assert "session 'a'" in message and "'b'" in message and "ended" in message, message
    assert other.claim("b") is True  # gone indeed: the first worker's next write says so
    assert one.claim("c") is True  # on a new claims connection
    assert other.claim("c") is False


def test_a_release_whose_claims_connection_ended_with_no_other_claim_says_nothing(
    pg_server: Any, role: str, open_worker: Opener, caplog: pytest.LogCaptureFixture
) -> None:
    one, other = open_worker(), open_worker()
    assert one.claim("a") is True
    end_connections_of(pg_server, role)
    with caplog.at_level("WARNING", logger="dsh.persistence"):
        one.release("a")
    assert caplog.records == []
    assert other.claim("a") is True
    assert one.claim("c") is True
