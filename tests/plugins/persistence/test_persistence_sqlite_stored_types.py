"""SQLite stores any value in any column: a value of the wrong storage type (a hand
edit, another program) is damage, said as such (docs/persistence.md, load rule 3).

Before: an event's line stored as a blob made ``load`` (``dsh sessions show``, ``dsh run
--session``) fail with ``TypeError: sequence item 3: expected str instance, bytes
found``; a ``next_seq`` of ``'x'`` with ``ValueError``; a ``created`` of ``'abc'`` made
``show`` fail with ``ValueError`` and ``dsh sessions list --json`` with ``TypeError``,
listing no session at all; a title stored as a blob was listed as ``b'\\xff\\x00'``.
Now a bad event row or ``next_seq`` is ``SessionCorruptError`` naming the database, the
session and (for a row) the event, and a bad field of a session's row makes that
session's list entry say so (``error``), the others listed as before.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from persistence_cli_support import run, store

from dsh_persistence import (
    PersistenceSettings,
    SessionCorruptError,
    SessionInfo,
    SqliteBackend,
)
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A SQLite store holding sessions ``s`` (turn of 4+ events) and ``t``."""
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.chdir(tmp_path)
    settings = PersistenceSettings(backend="sqlite", directory=tmp_path)
    for name, start in (("s", 1_700_000_000.0), ("t", 1_700_000_100.0)):
        log = LogBuilder(start=start)
        log.turn(f"question of {name}")
        store(settings, name, log)
    (tmp_path / "dsh.yml").write_text(f"persistence:\n  backend: sqlite\n  directory: {tmp_path}\n")
    return tmp_path / "sessions.sqlite3"


def edit(path: Path, statement: str) -> None:
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(statement)


def corrupt(path: Path, doing: str = "load") -> str:
    backend = SqliteBackend(path)
    log = LogBuilder(start=1_700_000_500.0)
    log.turn("more", calls=())
    calls = {
        "load": lambda: backend.load("s"),
        "tail": lambda: backend.tail("s"),
        "append": lambda: backend.append(SessionInfo("s", 1.0), log.events, durable=True),
    }
    try:
        with pytest.raises(SessionCorruptError) as caught:
            calls[doing]()
    finally:
        backend.close()
    return str(caught.value)


@pytest.mark.parametrize("doing", ["load", "tail"])
def test_an_event_row_not_stored_as_text_is_corrupt(database: Path, doing: str) -> None:
    """(A number written into the TEXT column is stored as text: "not an event object".)"""
    edit(database, "UPDATE events SET line=CAST(line AS BLOB) WHERE session='s' AND seq=3")
    said = corrupt(database, doing)
    assert said.startswith(
        f"{database}: session 's', event #3: stored as a blob where its JSON text was expected"
    ), said
    assert "The session is corrupt and was left as it is." in said


def test_a_log_stored_all_as_blobs_is_corrupt(database: Path) -> None:
    """The first row decides how the others are joined: it is checked too."""
    edit(database, "UPDATE events SET line=CAST(line AS BLOB) WHERE session='s'")
    assert corrupt(database).startswith(f"{database}: session 's', event #0: stored as a blob")


@pytest.mark.parametrize(
    ("value", "stored"), [("'x'", "text"), ("2.5", "a real number"), ("X'00'", "a blob")]
)
@pytest.mark.parametrize("doing", ["load", "tail", "append"])
def test_a_next_seq_that_is_not_an_integer_is_corrupt(
    database: Path, value: str, stored: str, doing: str
) -> None:
    edit(database, f"UPDATE sessions SET next_seq={value} WHERE id='s'")
    assert corrupt(database, doing) == (
        f"{database}: session 's': its sessions row's next_seq (how many events are stored) "
        f"is {stored}, not an integer. The session is corrupt and was left as it is."
    )


@pytest.mark.parametrize(
    ("field", "value", "stored", "wanted"),
    [
        ("created", "'abc'", "text", "a number"),
        ("created", "X'31'", "a blob", "a number"),  # float(b"1") would take it
        ("meta", "X'7B7D'", "a blob", "JSON text"),  # json.loads(b"{}") would take it
    ],
)
def test_a_sessions_row_field_of_the_wrong_type_is_corrupt_on_load(
    database: Path, field: str, value: str, stored: str, wanted: str
) -> None:
    edit(database, f"UPDATE sessions SET {field}={value} WHERE id='s'")
    assert corrupt(database) == (
        f"{database}: session 's': its sessions row's {field} is {stored}, not {wanted}. "
        "The session is corrupt and was left as it is."
    )


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("created", "'abc'", "created is text, not a number"),
        ("updated", "X'01'", "updated is a blob, not a number"),
        ("turns", "'x'", "turns is text, not an integer"),
        ("title", "X'FF00'", "title is a blob, not text"),
        ("cwd", "X'FF00'", "workspace is a blob, not text"),
    ],
)
def test_a_bad_field_is_that_sessions_error_and_the_others_are_listed(
    database: Path, field: str, value: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(database, f"UPDATE sessions SET {field}={value} WHERE id='s'")
    backend = SqliteBackend(database)
    try:
        headers = {header.id: header for header in backend.headers()}
    finally:
        backend.close()
    assert headers["t"].error == ""
    assert headers["s"].error == (
        f"{database}: session 's': its sessions row's {said}: the row is damaged"
    )
    assert all(type(getattr(headers["s"], name)) is float for name in ("created", "updated"))
    assert type(headers["s"].turns) is int
    assert type(headers["s"].title) is str and type(headers["s"].workspace) is str

    assert run(database.parent / "dsh.yml", "list", "--json") == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["t"]["error"] is None
    assert said in rows["s"]["error"]
    assert run(database.parent / "dsh.yml", "list") == 0
    out = capsys.readouterr().out
    assert "b'" not in out and "(unreadable: " in out


def test_an_id_stored_as_a_blob_is_listed_with_its_error(database: Path) -> None:
    edit(database, "UPDATE sessions SET id=CAST(id AS BLOB) WHERE id='s'")
    backend = SqliteBackend(database)
    try:
        headers = backend.headers()
    finally:
        backend.close()
    errors = {header.id: header.error for header in headers}
    assert errors["t"] == ""
    assert errors["s"] == (
        f"{database}: session 's': its sessions row's id is a blob, not text: the row is damaged"
    )


def test_show_says_the_damage_on_one_line(
    database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(database, "UPDATE events SET line=CAST(line AS BLOB) WHERE session='s' AND seq=3")
    assert run(database.parent / "dsh.yml", "show", "s") != 0
    err = capsys.readouterr().err
    assert f"{database}: session 's', event #3: stored as a blob" in err
    assert "TypeError" not in err
