"""Where a session last ran, on both backends: a run in another workspace than the one
the session was started in is recorded (JSONL: a ``cwd`` key on the lines of its turn
boundaries; SQLite: a row of the ``workspaces`` table), ``headers()`` gives it, and
files and databases written before it existed load and list as they did."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from dsh.persistence import last_in
from dsh_persistence import JsonlBackend, SessionBackend, SessionInfo, SqliteBackend
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def info(cwd: str) -> SessionInfo:
    return SessionInfo("s", 1.0, {}, cwd, "hello")


@pytest.fixture(params=["jsonl", "sqlite"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionBackend]:
    made: SessionBackend
    if request.param == "jsonl":
        made = JsonlBackend(tmp_path / "sessions")
    else:
        made = SqliteBackend(tmp_path / "sessions.sqlite3")
    try:
        yield made
    finally:
        made.close()


def test_headers_follow_the_workspace_of_the_last_turn(backend: SessionBackend) -> None:
    log = LogBuilder()
    backend.append(info("/p/first"), log.turn("one"), durable=False)
    assert [h.workspace for h in backend.headers()] == ["/p/first"]

    backend.append(info("/p/second"), log.turn("two"), durable=False)
    assert [h.workspace for h in backend.headers()] == ["/p/second"]
    loaded = backend.load("s")
    assert loaded is not None and loaded.stored.events == log.events  # the tags are not data

    backend.append(info("/p/first"), log.turn("three"), durable=False)
    assert [h.workspace for h in backend.headers()] == ["/p/first"]
    (header,) = backend.headers()
    assert (header.turns, header.title) == (3, "hello")


def test_a_batch_without_a_turn_boundary_does_not_move_the_session(
    backend: SessionBackend,
) -> None:
    """Where a session is is where its turns ran: a write from elsewhere that holds no
    turn boundary (a plugin's note, say) leaves it where it was."""
    log = LogBuilder()
    backend.append(info("/p/first"), log.turn("one"), durable=False)
    backend.append(info("/p/second"), [log.add("note", {"n": 1})], durable=False)
    assert [h.workspace for h in backend.headers()] == ["/p/first"]


def test_jsonl_marks_only_the_turn_lines_of_a_run_elsewhere(tmp_path: Path) -> None:
    """The header (line 1) stays as written; the turn boundaries of the run in another
    workspace carry ``"cwd"`` and no other line does."""
    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    try:
        backend.append(info("/p/first"), log.turn("one"), durable=False)
        backend.append(info("/p/second"), log.turn("two"), durable=False)
    finally:
        backend.close()
    lines = [json.loads(line) for line in (tmp_path / "s.jsonl").read_bytes().splitlines()]
    assert lines[0]["cwd"] == "/p/first"
    tagged = [(line["type"], line["data"].get("turn")) for line in lines[1:] if "cwd" in line]
    assert tagged == [("turn/start", 2), ("turn/end", 2)]
    assert {line["cwd"] for line in lines[1:] if "cwd" in line} == {"/p/second"}


def test_jsonl_records_a_workspace_whose_name_is_not_utf8(tmp_path: Path) -> None:
    """A ``SessionInfo`` made by hand may hold ``os.fsdecode``'s lone surrogates (``of``
    writes U+FFFD): the line is still written (the path escaped) and read back, and
    ``last_in`` finds the session from that directory."""
    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    where = "/p/caf\udce9"
    try:
        backend.append(info("/p/first"), log.turn("one"), durable=False)
        backend.append(info(where), log.turn("two"), durable=False)
        headers = backend.headers()
        loaded = backend.load("s")
    finally:
        backend.close()
    assert [h.workspace for h in headers] == [where]
    assert last_in(headers, where) == headers[0]
    assert loaded is not None and loaded.stored.events == log.events


def test_jsonl_listing_reads_back_to_the_last_turn_boundary_only(tmp_path: Path) -> None:
    """The workspace is on the last turn boundary, which the listing reads anyway: the
    rest of a long log is not read (garbage written over its middle does not show)."""
    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    try:
        for n in range(200):
            backend.append(info("/p/first"), log.turn(f"turn {n}"), durable=False)
        backend.append(info("/p/second"), log.turn("moved"), durable=False)
    finally:
        backend.close()
    path = tmp_path / "s.jsonl"
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 5000] = b"x" * 5000
    path.write_bytes(bytes(data))
    (header,) = JsonlBackend(tmp_path).headers()
    assert (header.workspace, header.turns) == ("/p/second", 201)


OLD_JSONL = [
    {
        "format": "dsh-session",
        "version": 1,
        "id": "old",
        "created": 1.0,
        "cwd": "/p/started",
        "title": "from before",
        "parent": None,
        "seed_length": None,
        "meta": {},
    },
    {"type": "turn/start", "seq": 0, "time": 2.0, "data": {"turn": 1}},
    {"type": "user/message", "seq": 1, "time": 2.0, "data": {"content": "from before"}},
    {"type": "turn/end", "seq": 2, "time": 3.0, "data": {"turn": 1, "reason": "completed"}},
]


def test_a_jsonl_file_of_the_format_before_lists_where_it_was_started(tmp_path: Path) -> None:
    """A file written before runs were recorded (no ``cwd`` on any event line) lists
    with its header's workspace and loads; continued elsewhere, it follows."""
    path = tmp_path / "old.jsonl"
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in OLD_JSONL))
    backend = JsonlBackend(tmp_path)
    try:
        (header,) = backend.headers()
        assert (header.id, header.workspace, header.turns) == ("old", "/p/started", 1)
        loaded = backend.load("old")
        assert loaded is not None and len(loaded.stored.events) == 3
        log = LogBuilder(start=10.0)
        log.events = list(loaded.stored.events)
        log.turns = 1
        backend.append(SessionInfo("old", 1.0, {}, "/p/later"), log.turn("two"), durable=False)
        assert [h.workspace for h in backend.headers()] == ["/p/later"]
    finally:
        backend.close()
    assert json.loads(path.read_bytes().splitlines()[0]) == OLD_JSONL[0]  # line 1 as it was


def old_database(path: Path) -> None:
    """A database as dsh-persistence wrote it before the ``workspaces`` table."""
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, created REAL NOT NULL, updated REAL "
            "NOT NULL, turns INTEGER NOT NULL, title TEXT NOT NULL, cwd TEXT NOT NULL, meta "
            "TEXT NOT NULL, next_seq INTEGER NOT NULL) WITHOUT ROWID"
        )
        db.execute(
            "CREATE TABLE events (session TEXT NOT NULL, seq INTEGER NOT NULL, line TEXT NOT "
            "NULL, PRIMARY KEY (session, seq)) WITHOUT ROWID"
        )
        row = ("old", 1.0, 3.0, 1, "from before", "/p/started", "{}", 3)
        db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
        for event in OLD_JSONL[1:]:
            line = json.dumps(event)
            db.execute("INSERT INTO events VALUES ('old', ?, ?)", (event["seq"], line))
        db.execute("PRAGMA user_version=1")


def test_a_database_of_the_schema_before_lists_where_it_was_started(tmp_path: Path) -> None:
    """A database without the ``workspaces`` table lists each session with its row's
    ``cwd`` and loads it; continued elsewhere, the session follows."""
    path = tmp_path / "db.sqlite3"
    old_database(path)
    backend = SqliteBackend(path)
    try:
        (header,) = backend.headers()
        assert (header.id, header.workspace, header.turns) == ("old", "/p/started", 1)
        loaded = backend.load("old")
        assert loaded is not None and len(loaded.stored.events) == 3
        log = LogBuilder(start=10.0)
        log.events = list(loaded.stored.events)
        log.turns = 1
        backend.append(SessionInfo("old", 1.0, {}, "/p/later"), log.turn("two"), durable=False)
        assert [h.workspace for h in backend.headers()] == ["/p/later"]
    finally:
        backend.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
        assert db.execute("SELECT cwd FROM sessions").fetchall() == [("/p/started",)]


def test_sqlite_ignores_a_workspace_left_by_a_deleted_session_of_the_same_id(
    tmp_path: Path,
) -> None:
    """A version that did not know the table deletes the session and leaves its row,
    and stores a new session of that id (another ``created``): that one is listed where
    it was started. Deleting it removes the row left behind."""
    path = tmp_path / "db.sqlite3"
    backend = SqliteBackend(path)
    log = LogBuilder()
    try:
        backend.append(info("/p/first"), log.turn("one"), durable=False)
        backend.append(info("/p/second"), log.turn("two"), durable=False)
        with closing(sqlite3.connect(path)) as db, db:  # as an older version would
            db.execute("DELETE FROM events")
            db.execute("DELETE FROM sessions")
            db.execute("INSERT INTO sessions VALUES ('s', 5.0, 5.0, 0, '', '/p/third', '{}', 0)")
        assert [h.workspace for h in backend.headers()] == ["/p/third"]
        assert backend.delete("s")
    finally:
        backend.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT count(*) FROM workspaces").fetchone()[0] == 0
