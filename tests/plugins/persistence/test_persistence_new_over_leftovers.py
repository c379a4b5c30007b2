"""A new session whose id still has something of a session gone left in the store.

In a database, event rows of an id whose sessions row is gone (removed by hand or by
another program; ``dsh sessions delete ID`` removes them): the store said the id was
free (the claim's check found no sessions row), the agent ran its turn, and its first
save clashed with the leftover row of seq 0 (an SQLite or PostgreSQL unique-key error),
so the turn was lost. Now creating the agent is refused at once, saying what is left
and what to run, and the leftovers are kept. In a JSONL store a kill leaves no events
outside a session file (a first save is published whole): a temp file of a first save
cut short is no clash, and the new session is stored cleanly.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from claims_support import harness_over
from persistence_cli_support import store
from test_persistence_leftover_temp import dead, temp  # noqa: F401 - dead: a fixture

from dsh.testing import ScriptedModel, run_turn, text
from dsh_persistence import PersistenceSettings, SessionConflictError, open_backend
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

OPTIONS = {"model": "scripted"}


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> PersistenceSettings:
    if request.param == "postgresql":
        return PersistenceSettings(backend="postgresql", url=request.getfixturevalue("pg_url"))
    return PersistenceSettings(backend="sqlite", directory=tmp_path / "sessions")


def rows_of(database: PersistenceSettings, session_id: str, *, drop_row: bool = False) -> int:
    """How many event rows ``session_id`` has; with ``drop_row``, its sessions row is
    removed first (as another program could)."""
    if database.backend == "postgresql":
        import psycopg

        with psycopg.connect(str(database.url), autocommit=True) as pg:
            if drop_row:
                pg.execute("DELETE FROM dsh_sessions WHERE id=%s", (session_id,))
            row = pg.execute("SELECT count(*) FROM dsh_events WHERE session=%s", (session_id,))
            return int(row.fetchone()[0])  # type: ignore[index]
    db = sqlite3.connect(database.database_path())
    try:
        with db:
            if drop_row:
                db.execute("DELETE FROM sessions WHERE id=?", (session_id,))
            row = db.execute("SELECT count(*) FROM events WHERE session=?", (session_id,))
            return int(row.fetchone()[0])
    finally:
        db.close()


async def test_a_new_session_over_leftover_events_is_refused_at_once_naming_the_fix(
    database: PersistenceSettings,
) -> None:
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("the old prompt", calls=())
    store(database, "reused", log)
    left = rows_of(database, "reused", drop_row=True)
    assert left == len(log.events) > 1
    model = ScriptedModel([text("new answer")])
    async with harness_over(database, model) as h:
        with pytest.raises(SessionConflictError) as caught:
            await h.agents.create("a", session_id="reused", options=OPTIONS)
        assert h.agents.get("a") is None
    assert model.requests == []  # refused before the model was asked anything
    location = open_backend(database).location
    assert str(caught.value) == (
        f"session 'reused' is not stored, but {left} events of it are left in {location} "
        "(its session was removed without them): run `dsh sessions delete reused` to "
        "delete them, or give the new agent another session id"
    )
    assert rows_of(database, "reused") == left  # nothing lost


async def test_the_backend_refuses_a_first_save_over_leftover_events_saying_so(
    database: PersistenceSettings,
) -> None:
    """Its own users (no claim taken first) get the same words, not a unique-key error."""
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("the old prompt", calls=())
    store(database, "reused", log)
    left = rows_of(database, "reused", drop_row=True)
    fresh = LogBuilder(start=1_800_000_000.0)
    fresh.turn("a new prompt", calls=())
    with pytest.raises(SessionConflictError, match=r"run `dsh sessions delete reused`"):
        store(database, "reused", fresh)
    assert rows_of(database, "reused") == left


@pytest.mark.skipif(os.name == "nt", reason="whether a pid runs is not asked on Windows")
async def test_a_new_jsonl_session_over_a_leftover_temp_file_is_stored_cleanly(
    tmp_path: Path,
    dead: int,  # noqa: F811 - the fixture
) -> None:
    settings = PersistenceSettings(directory=tmp_path / "sessions")
    directory = settings.session_directory()
    directory.mkdir(parents=True)
    name = open_backend(settings).path("reused").name  # type: ignore[attr-defined]
    temp(directory, name, dead)
    async with harness_over(settings, ScriptedModel([text("new answer")])) as h:
        agent = await h.agents.create("a", session_id="reused", options=OPTIONS)
        await run_turn(agent, "a new prompt")
        await agent.dispose()
    loaded = open_backend(settings).load("reused")
    assert loaded is not None
    prompts = [e.data["content"] for e in loaded.stored.events if e.type == "user/message"]
    assert prompts == ["a new prompt"]
