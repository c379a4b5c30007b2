"""What is particular to the JSONL backend: the file format, names, atomic publishing,
torn tails cut on append, and ``headers()`` reading only the ends of files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dsh.session import SessionEvent
from dsh_persistence import (
    JsonlBackend,
    PersistenceError,
    SessionConflictError,
    SessionCorruptError,
    SessionFormatError,
    SessionInfo,
)
from dsh_persistence._files import file_name, publish, session_id_of
from dsh_persistence.testing import JsonlDamage, LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def logged(turns: int = 2) -> LogBuilder:
    log = LogBuilder()
    for n in range(turns):
        log.turn(f"question {n}")
    return log


def test_the_file_is_a_header_line_then_one_event_per_line(tmp_path: Path) -> None:
    log = logged()
    meta = {"parent": "p-1", "seed_length": 7, "tag": "x"}
    JsonlBackend(tmp_path).append(
        SessionInfo("s", 123.5, meta, "/work", "question 0"), log.events, durable=True
    )

    lines = (tmp_path / "s.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {
        "format": "dsh-session",
        "version": 1,
        "id": "s",
        "created": 123.5,
        "cwd": "/work",
        "title": "question 0",
        "parent": "p-1",
        "seed_length": 7,
        "meta": {"tag": "x"},
    }
    assert lines[1:] == [event.to_json() for event in log.events]


def test_a_new_file_is_published_whole_and_temp_files_are_ignored(tmp_path: Path) -> None:
    backend = JsonlBackend(tmp_path)
    backend.append(SessionInfo("s", 1.0), logged().events, durable=True)
    # what a crash between writing the temp file and linking it leaves behind
    (tmp_path / ".t.jsonl.123-abcd.tmp").write_text('{"format":"dsh-session"')

    assert sorted(p.name for p in tmp_path.iterdir()) == [".t.jsonl.123-abcd.tmp", "s.jsonl"]
    assert [h.id for h in backend.headers()] == ["s"]
    assert backend.load("t") is None


def test_ids_become_safe_file_names_and_back() -> None:
    for session_id in ("a-b_c", "../../etc/passwd", ".hidden", "ñ/☃ x", "a.jsonl"):
        name = file_name(session_id)
        assert "/" not in name and not name.startswith(".")
        assert name.endswith(".jsonl") and session_id_of(name) == session_id
    with pytest.raises(PersistenceError, match="shorter id"):
        file_name("x" * 300)


def test_a_torn_tail_is_cut_before_the_next_append(tmp_path: Path) -> None:
    log = logged()
    JsonlBackend(tmp_path).append(SessionInfo("s", 1.0), log.events[:10], durable=True)
    JsonlDamage(tmp_path).tear("s")

    backend = JsonlBackend(tmp_path)
    loaded = backend.load("s")
    assert loaded is not None and loaded.kept == 9
    backend.append(SessionInfo("s", 1.0), log.events[9:], durable=True)

    lines = (tmp_path / "s.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert [json.loads(line)["seq"] for line in lines[1:-1]] == list(range(len(log.events)))


def test_an_unfinished_write_longer_than_the_next_append_is_cut_whole(tmp_path: Path) -> None:
    log = logged()
    JsonlBackend(tmp_path).append(SessionInfo("s", 1.0), log.events[:10], durable=True)
    with (tmp_path / "s.jsonl").open("ab") as file:  # blocks of zeros, as after a power cut
        file.write(b"\x00" * 5000 + b"\n" + b"\x00" * 5000)

    backend = JsonlBackend(tmp_path)
    loaded = backend.load("s")
    assert loaded is not None and (loaded.kept, loaded.dropped) == (10, 2)
    backend.append(SessionInfo("s", 1.0), log.events[10:11], durable=True)

    assert b"\x00" not in (tmp_path / "s.jsonl").read_bytes()
    again = JsonlBackend(tmp_path).load("s")
    assert again is not None and (again.kept, again.dropped) == (11, 0)


def test_publishing_never_replaces_a_file_that_appeared_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"someone else's\n")

    with pytest.raises(SessionConflictError, match="another writer"):
        publish(path, [b"mine"], fsync=True)
    assert path.read_bytes() == b"someone else's\n"
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]  # no temp file left


def test_headers_read_the_first_line_and_the_tail_only(tmp_path: Path) -> None:
    log = logged(turns=3)
    JsonlBackend(tmp_path).append(SessionInfo("s", 1.0, title="t"), log.events, durable=True)
    path = tmp_path / "s.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    middle = len(lines) // 2
    lines[middle] = b"\x00" * 100_000 + b"\n"  # unreadable, far from both ends
    path.write_bytes(b"".join(lines))

    (header,) = JsonlBackend(tmp_path).headers()
    assert (header.id, header.turns, header.title) == ("s", 3, "t")
    assert header.updated == log.events[-1].time
    with pytest.raises(SessionCorruptError, match=rf"s\.jsonl:{middle + 1}: not a JSON event"):
        JsonlBackend(tmp_path).load("s")


def test_an_unreadable_file_is_listed_with_its_problem(tmp_path: Path) -> None:
    backend = JsonlBackend(tmp_path)
    backend.append(SessionInfo("good", 1.0), logged().events, durable=True)
    (tmp_path / "bad.jsonl").write_text("not json\n")

    headers = {h.id: h for h in backend.headers()}
    assert headers["good"].turns == 2
    assert headers["bad"].error


def test_a_file_removed_under_a_writer_is_not_silently_recreated(tmp_path: Path) -> None:
    log = logged()
    backend = JsonlBackend(tmp_path)
    backend.append(SessionInfo("s", 1.0), log.events[:10], durable=True)
    os.unlink(tmp_path / "s.jsonl")

    with pytest.raises(SessionConflictError, match="must start at seq 0"):
        backend.append(SessionInfo("s", 1.0), log.events[10:], durable=True)
    assert not (tmp_path / "s.jsonl").exists()


def test_a_header_for_another_session_is_corruption(tmp_path: Path) -> None:
    JsonlBackend(tmp_path).append(
        SessionInfo("a", 1.0), [SessionEvent("note", 0, 1.0, {})], durable=True
    )
    os.rename(tmp_path / "a.jsonl", tmp_path / "b.jsonl")

    with pytest.raises(SessionCorruptError) as caught:
        JsonlBackend(tmp_path).load("b")
    assert str(caught.value) == (  # as dsh sessions list says it of the file
        f"{tmp_path / 'b.jsonl'}: the file name says session 'b', its header says 'a'; "
        "rename it to a.jsonl to reach it"
    )


def test_the_longest_accepted_session_id_can_be_stored(tmp_path: Path) -> None:
    session_id = "a" * 240
    assert file_name(session_id)  # accepted as a file name
    log = LogBuilder()
    log.turn("one")
    backend = JsonlBackend(tmp_path)
    backend.append(SessionInfo(session_id, 1.0), log.events, durable=False)
    loaded = backend.load(session_id)
    assert loaded is not None and loaded.kept == len(log.events)


@pytest.mark.parametrize(
    "content", [b'{"x":1}\n', b"", b"not json\n", b'{"format":"other","version":1}\n']
)
@pytest.mark.parametrize("locks", [True, False])
def test_delete_refuses_a_file_that_is_not_a_session(
    tmp_path: Path, content: bytes, locks: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``delete`` reads the header first: a ``.jsonl`` file of another program (that
    ``list`` shows as "not a dsh session file") is named and left where it is, with
    file locks or without them (Windows)."""
    monkeypatch.setattr("dsh_persistence._jsonl_locks.LOCKS", locks)
    (tmp_path / "data.jsonl").write_bytes(content)

    refused = r"data\.jsonl: not a dsh session file.*; not deleted"
    with pytest.raises(SessionFormatError, match=refused):
        JsonlBackend(tmp_path).delete("data")
    assert (tmp_path / "data.jsonl").read_bytes() == content


def test_delete_removes_a_session_of_a_newer_format(tmp_path: Path) -> None:
    """A dsh session file this version cannot read is still a session: deleted."""
    (tmp_path / "s.jsonl").write_text('{"format":"dsh-session","version":99,"id":"s"}\n')

    assert JsonlBackend(tmp_path).delete("s") is True
    assert not (tmp_path / "s.jsonl").exists()


def test_a_file_that_cannot_be_read_is_listed_saying_so_as_other_errors_do(
    tmp_path: Path,
) -> None:
    """A ``.jsonl`` entry that cannot be read is listed with the module's usual "cannot
    read the session file: <reason>", not a raw ``[Errno 21] ...``."""
    (tmp_path / "d.jsonl").mkdir()
    (header,) = JsonlBackend(tmp_path).headers()
    path = tmp_path / "d.jsonl"
    assert header.error == f"{path}: cannot read the session file: Is a directory"
