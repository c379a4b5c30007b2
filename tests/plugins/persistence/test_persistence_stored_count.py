"""SQLite and PostgreSQL store an append in one transaction, with the session row's
``next_seq``: a crash leaves all of it or none. So a stored log with fewer readable
events than the row says (the last turn's rows deleted) is damage: loading, ``tail`` and
the next append refuse it as ``SessionCorruptError`` naming the database, the session
and what is missing. It was read as a crash tail: the turn was lost without a word, and
the next append deleted whatever rows were left after the readable prefix
(docs/persistence.md, "Loading: the repair rules", rule 3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_persistence import (
    PersistenceError,
    PostgresBackend,
    SessionBackend,
    SessionCorruptError,
    SessionInfo,
    SqliteBackend,
)
from dsh_persistence.testing import Damage, LogBuilder, PostgresDamage, SqliteDamage

pytestmark = pytest.mark.plugins("persistence")


@pytest.fixture(params=["sqlite", "postgres"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[Callable[[], SessionBackend], Damage]:
    if request.param == "sqlite":
        path = tmp_path / "sessions.sqlite3"
        return (lambda: SqliteBackend(path)), SqliteDamage(path)
    url: str = request.getfixturevalue("pg_url")
    return (lambda: PostgresBackend(url)), PostgresDamage(url)


@pytest.mark.parametrize("lost", [1, 3, "turn"], ids=["last-row", "last-3-rows", "last-turn"])
def test_rows_missing_at_the_end_of_a_stored_log_are_damage(
    store: tuple[Callable[[], SessionBackend], Damage], lost: int | str
) -> None:
    opener, damage = store
    log = LogBuilder()
    for prompt in ("one", "two", "three"):
        log.turn(prompt, calls=())
    events = log.events
    last_turn = max(e.seq for e in events if e.type == "turn/start")
    kept = last_turn if lost == "turn" else len(events) - int(lost)
    backend = opener()
    try:
        backend.append(SessionInfo("s1", 1.0), events, durable=True)
    finally:
        backend.close()
    for seq in range(kept, len(events)):
        damage.drop("s1", seq)

    for _ in range(2):  # said again: no row was deleted or written
        backend = opener()
        try:
            with pytest.raises(SessionCorruptError) as caught:
                backend.load("s1")
            message = str(caught.value)
            assert "session 's1'" in message
            assert f"its sessions row says {len(events)} events are stored" in message
            missing = (
                f"seq {kept}-{len(events) - 1} are"
                if kept + 1 < len(events)
                else (f"seq {kept} is")
            )
            assert f"{missing} missing" in message
            assert "corrupt" in message
            with pytest.raises(SessionCorruptError):
                backend.tail("s1")
            with pytest.raises(PersistenceError):  # a resume's write at the readable end
                backend.append(SessionInfo("s1", 1.0), events[kept:], durable=True)
        finally:
            backend.close()
