"""How a claimed write of the PostgreSQL backend checks, holding the session's row,
that its claim is still held: it tries to share a lock that the claims connection holds
while it lives, so neither the server's process id (a pooler such as PgBouncer shows one
of its own) nor the server's lock table (``pg_locks``) is asked. And a claim that waits
for a write holding the session's row past the lock timeout names the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from claims_support import note

from dsh_persistence import PersistenceError, PostgresBackend, SessionInfo

pytestmark = pytest.mark.plugins("persistence")

INFO = SessionInfo("sess-42", 1.0)


@pytest.fixture
def backend(pg_url: str) -> Iterator[PostgresBackend]:
    opened = PostgresBackend(pg_url, timeout=1.0)
    yield opened
    opened.close()


def test_a_claimed_write_does_not_depend_on_the_server_process_id(
    backend: PostgresBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind PgBouncer ``info.backend_pid`` is the pooler's own number, not the server
    process's: the check of the claim inside the write must not need it."""
    import psycopg

    monkeypatch.setattr(psycopg.ConnectionInfo, "backend_pid", property(lambda self: 12345))
    backend.append(INFO, [note(0)], durable=True)
    assert backend.claim(INFO.id)
    backend.append(INFO, [note(1)], durable=True)
    assert backend.delete(INFO.id)


def test_a_claim_that_waits_past_the_lock_timeout_names_the_session(
    pg_url: str, backend: PostgresBackend
) -> None:
    """A claim waits for a write holding the session's row (a former holder's); a
    transaction that holds the row past the lock timeout fails the claim with an error
    that names the session, and the claim is not kept."""
    import psycopg

    writer = PostgresBackend(pg_url)
    writer.append(INFO, [note(0)], durable=True)
    writer.close()
    with psycopg.connect(pg_url) as other:  # a hung writer holding the session's row
        other.execute("SELECT 1 FROM dsh_sessions WHERE id=%s FOR UPDATE", (INFO.id,))
        with pytest.raises(PersistenceError, match="cannot claim session 'sess-42'"):
            backend.claim(INFO.id)
        other.rollback()
    assert backend.claim(INFO.id)  # not kept: claimed again once the row is free
