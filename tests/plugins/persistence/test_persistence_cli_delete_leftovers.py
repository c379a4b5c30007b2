"""``dsh sessions delete ID`` where a database holds events of ``ID`` but no sessions row
(left over: a row removed by hand or by another program): the SQLite and PostgreSQL
stores deleted those events and said ``no stored session 'ID'``, status 1, untrue about
what they did. Now it says how many leftover events it deleted (status 0: nothing of
``ID`` is stored any more, and a new session may take the id)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from persistence_cli_support import run, store

from dsh_persistence import PersistenceSettings
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> PersistenceSettings:
    if request.param == "postgresql":
        return PersistenceSettings(backend="postgresql", url=request.getfixturevalue("pg_url"))
    return PersistenceSettings(backend="sqlite", directory=tmp_path / "sessions")


@pytest.fixture
def store_config(
    database: PersistenceSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "dsh.yml"
    if database.backend == "postgresql":
        path.write_text(f"persistence:\n  backend: postgresql\n  url: '{database.url}'\n")
    else:
        where = database.session_directory()
        path.write_text(f"persistence:\n  backend: sqlite\n  directory: {where}\n")
    return path


def events_left(database: PersistenceSettings, session_id: str, *, drop_row: bool) -> int:
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


def test_deleting_the_leftover_events_of_an_id_says_so(
    database: PersistenceSettings, store_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("hello", calls=())
    store(database, "gone\nrow", log)
    stored = events_left(database, "gone\nrow", drop_row=True)
    assert stored == len(log.events) > 1
    assert run(store_config, "delete", "gone\nrow") == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out == (
        f"deleted {stored} leftover events of 'gone\\nrow' (its session was not stored)\n"
    )
    assert events_left(database, "gone\nrow", drop_row=False) == 0
    # nothing left: the id is deleted, and said so, no more
    assert run(store_config, "delete", "gone\nrow") == 1
    assert capsys.readouterr().err == "dsh: error: no stored session 'gone\\nrow'\n"
