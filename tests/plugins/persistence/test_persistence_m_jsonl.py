"""JSONL backend details the other tests leave open: views shared by several instances
(processes), damaged or foreign files in the directory, names, and the summary that
``list()`` reads from the ends of a file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dsh.session import SessionEvent
from dsh_persistence import (
    JsonlBackend,
    PersistenceError,
    SessionCorruptError,
    SessionFormatError,
    SessionInfo,
)
from dsh_persistence._files import file_name, session_id_of
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def logged(turns: int = 2) -> LogBuilder:
    log = LogBuilder()
    for n in range(turns):
        log.turn(f"question {n}")
    return log


def test_tail_sees_what_another_instance_appended_since(tmp_path: Path) -> None:
    """``tail`` says where the stored log ends now, not where this instance last wrote
    it: a writer that attaches after another process appended continues there."""
    log = logged()
    one, two = JsonlBackend(tmp_path), JsonlBackend(tmp_path)
    one.append(SessionInfo("s", 1.0), log.events[:10], durable=True)
    two.append(SessionInfo("s", 1.0), log.events[10:15], durable=True)

    tail = one.tail("s")
    assert tail is not None
    assert (tail.next_seq, tail.last) == (15, log.events[14])
    one.append(SessionInfo("s", 1.0), log.events[15:], durable=True)
    loaded = two.load("s")
    assert loaded is not None and loaded.kept == len(log.events)


@pytest.mark.parametrize("content", [b"", b'{"format":"dsh-session","version":1,"id":"s"'])
def test_a_file_without_a_complete_header_line_is_reported_as_corrupt(
    tmp_path: Path, content: bytes
) -> None:
    """An empty file, or one whose first line never ended, is a damaged session file:
    ``load`` and ``tail`` say which file and why (a ``SessionCorruptError``), and
    ``list()`` shows it as unreadable instead of failing."""
    (tmp_path / "s.jsonl").write_bytes(content)
    backend = JsonlBackend(tmp_path)

    for read in (backend.load, backend.tail):
        with pytest.raises(SessionCorruptError, match=r"s\.jsonl:1: .*header"):
            read("s")
    (header,) = backend.headers()
    assert header.id == "s" and header.error
    assert (tmp_path / "s.jsonl").read_bytes() == content


def test_a_long_header_line_is_read_whole_by_list(tmp_path: Path) -> None:
    """A header longer than the first block ``list()`` reads (a big meta) is read on
    until its end: the session is listed with its title and turns."""
    meta = {"options": {"system": "x" * 20_000}}
    log = logged()
    JsonlBackend(tmp_path).append(
        SessionInfo("s", 1.0, meta, "/w", "the title"), log.events, durable=True
    )

    (header,) = JsonlBackend(tmp_path).headers()
    assert (header.id, header.title, header.turns) == ("s", "the title", 2)
    assert header.updated == log.events[-1].time


def test_list_finds_the_turn_far_before_the_end_of_the_file(tmp_path: Path) -> None:
    """The last turn boundary can lie much more than a block before the end (a turn with
    big tool output): ``list()`` reads further back until it finds it, and stops."""
    log = logged(turns=3)
    log.add("turn/start", {"turn": 4})
    for n in range(6):
        log.add("note/big", {"n": n, "blob": "y" * 20_000})
    JsonlBackend(tmp_path).append(SessionInfo("s", 1.0), log.events, durable=True)

    (header,) = JsonlBackend(tmp_path).headers()
    assert header.turns == 4  # the open turn counts
    assert header.updated == log.events[-1].time


def test_list_counts_a_turn_that_is_still_open(tmp_path: Path) -> None:
    """A session whose last turn started but did not end (running, or crashed) is
    listed with that turn's number."""
    log = logged(turns=2)
    log.add("turn/start", {"turn": 3})
    log.add("user/message", {"content": "third"})
    JsonlBackend(tmp_path).append(SessionInfo("s", 1.0), log.events, durable=True)

    (header,) = JsonlBackend(tmp_path).headers()
    assert header.turns == 3


def test_a_session_without_events_after_its_header_is_listed_at_its_creation(
    tmp_path: Path,
) -> None:
    """``updated`` falls back to ``created`` when no event can be read after the
    header (a torn first event)."""
    JsonlBackend(tmp_path).append(
        SessionInfo("s", 1234.5), [SessionEvent("note", 0, 2000.0, {})], durable=True
    )
    path = tmp_path / "s.jsonl"
    path.write_bytes(path.read_bytes()[:-5])  # the only event is torn

    (header,) = JsonlBackend(tmp_path).headers()
    assert (header.created, header.updated, header.turns) == (1234.5, 1234.5, 0)


def test_other_files_in_the_directory_are_not_listed(tmp_path: Path) -> None:
    """Only ``*.jsonl`` files that are not hidden are sessions (no id names a dotfile):
    a database, notes, editor backups or a hidden copy in the same directory are not
    listed (not even as unreadable)."""
    JsonlBackend(tmp_path).append(SessionInfo("s", 1.0), logged().events, durable=True)
    (tmp_path / "sessions.sqlite3").write_bytes(b"SQLite format 3\x00")
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "s.jsonl~").write_text("backup\n")
    (tmp_path / ".s.jsonl").write_bytes((tmp_path / "s.jsonl").read_bytes())  # hidden

    assert [h.id for h in JsonlBackend(tmp_path).headers()] == ["s"]


def test_a_corrupt_header_is_listed_as_unreadable_not_raised(tmp_path: Path) -> None:
    """``list()`` keeps going past a file that is not a session file (wrong format,
    newer version, or no id): it is shown with its problem."""
    JsonlBackend(tmp_path).append(SessionInfo("good", 1.0), logged().events, durable=True)
    (tmp_path / "other.jsonl").write_text('{"format":"something-else"}\n')
    (tmp_path / "newer.jsonl").write_text('{"format":"dsh-session","version":9,"id":"x"}\n')
    (tmp_path / "noid.jsonl").write_text('{"format":"dsh-session","version":1}\n')

    headers = {h.id: h for h in JsonlBackend(tmp_path).headers()}
    assert headers["good"].turns == 2
    for name in ("other", "newer", "noid"):
        assert headers[name].error, name


@pytest.mark.parametrize("session_id", ["ends.", "x/", "%", "a%2", "ñ"])
def test_ids_ending_in_an_escape_round_trip_through_list(tmp_path: Path, session_id: str) -> None:
    """The file name of an id ending in a byte that is escaped decodes back to the id,
    so ``list()`` shows the id that ``load`` accepts."""
    assert session_id_of(file_name(session_id)) == session_id
    backend = JsonlBackend(tmp_path)
    backend.append(SessionInfo(session_id, 1.0), logged(1).events, durable=True)
    assert [h.id for h in backend.headers()] == [session_id]


def test_the_longest_id_that_fits_a_file_name_is_accepted() -> None:
    """Ids up to 240 bytes once encoded are stored; one more byte is refused clearly."""
    assert file_name("x" * 240) == "x" * 240 + ".jsonl"
    with pytest.raises(PersistenceError, match="shorter id"):
        file_name("x" * 241)
    with pytest.raises(PersistenceError, match="empty"):
        file_name("")


def test_a_created_file_leaves_no_temp_file_and_is_private(tmp_path: Path) -> None:
    """Publishing a new session leaves only ``<id>.jsonl``, created ``0600``."""
    JsonlBackend(tmp_path).append(SessionInfo("s", 1.0), logged().events, durable=True)

    assert os.listdir(tmp_path) == ["s.jsonl"]
    assert (tmp_path / "s.jsonl").stat().st_mode & 0o777 == 0o600


def test_a_directory_that_became_a_file_is_named_with_its_setting_by_append(
    tmp_path: Path,
) -> None:
    """When the session directory is unusable at write time (here a file stands where it
    should be), the append's error names the directory and the setting it comes from,
    not only the session file inside it."""
    directory = tmp_path / "sessions"
    directory.write_text("not a directory\n")
    backend = JsonlBackend(directory, source="persistence.directory")

    with pytest.raises(PersistenceError) as caught:
        backend.append(SessionInfo("s", 1.0), logged(1).events, durable=True)
    message = str(caught.value)
    assert message.startswith(f"{directory} (persistence.directory) is not a usable session")
    assert directory.read_text() == "not a directory\n"


@pytest.mark.parametrize("version", ['"1"', "null", "true", "0"])
def test_a_header_version_that_is_not_a_positive_int_is_a_format_error(
    tmp_path: Path, version: str
) -> None:
    """``"version": "1"`` (a string), ``null``, ``true`` or ``0`` are not versions this
    code knows: ``load`` refuses the file with a ``SessionFormatError`` naming it, and
    ``list()`` shows it as unreadable instead of failing."""
    path = tmp_path / "s.jsonl"
    path.write_text(f'{{"format":"dsh-session","version":{version},"id":"s"}}\n')
    backend = JsonlBackend(tmp_path)

    with pytest.raises(SessionFormatError, match=r"s\.jsonl:1: unknown session format version"):
        backend.load("s")
    (header,) = backend.headers()
    assert header.error


def test_a_header_line_that_is_not_json_is_corruption(tmp_path: Path) -> None:
    """A damaged header (not JSON) is a corrupt session file, reported at line 1."""
    (tmp_path / "s.jsonl").write_bytes(b'{"format":"dsh-sess\x00\x00\n')
    with pytest.raises(SessionCorruptError, match=r"s\.jsonl:1: the header line is not JSON"):
        JsonlBackend(tmp_path).load("s")


@pytest.mark.parametrize("format_", [None, "other-tool"])
def test_a_header_without_the_dsh_session_format_is_not_a_session_file(
    tmp_path: Path, format_: str | None
) -> None:
    """``format`` must be ``dsh-session``: a JSONL file of another tool (even with an
    ``id`` and a ``version``) is refused as not a session file, and not listed as one."""
    header = {"version": 1, "id": "s"} | ({} if format_ is None else {"format": format_})
    event = SessionEvent("note", 0, 5.0, {})
    (tmp_path / "s.jsonl").write_text(f"{json.dumps(header)}\n{event.to_json()}\n")
    backend = JsonlBackend(tmp_path)

    with pytest.raises(SessionFormatError, match="not a dsh session file"):
        backend.load("s")
    (listed,) = backend.headers()
    assert listed.error


def test_list_and_load_keep_a_last_event_without_its_newline(tmp_path: Path) -> None:
    """A last event whose newline never reached the file (or a file saved without its
    final newline) is whole, no torn line: ``load`` keeps it
    (test_persistence_jsonl_final_line_end), and ``list()`` reports it (its time and
    its turn). Was: both ignored it, and the next append cut it off."""
    log = logged(turns=1)
    JsonlBackend(tmp_path).append(SessionInfo("s", 1.0), log.events, durable=True)
    with (tmp_path / "s.jsonl").open("ab") as file:
        file.write(SessionEvent("turn/start", len(log.events), 9e9, {"turn": 2}).to_json_bytes())

    (header,) = JsonlBackend(tmp_path).headers()
    assert (header.updated, header.turns) == (9e9, 2)
    loaded = JsonlBackend(tmp_path).load("s")
    assert loaded is not None and (loaded.kept, loaded.dropped) == (len(log.events) + 1, 0)


def test_a_load_closes_an_open_turn_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: the file's reader closed it to check the repaired log, and ``load`` again to
    return it (the same closers, made twice)."""
    import dsh_persistence._jsonl
    import dsh_persistence._session_file
    from dsh_persistence._records import close_turn

    made: list[int] = []

    def counted(events: list[SessionEvent]) -> list[SessionEvent]:
        made.append(len(events))
        return close_turn(events)

    for module in (dsh_persistence._jsonl, dsh_persistence._session_file):
        if hasattr(module, "close_turn"):
            monkeypatch.setattr(module, "close_turn", counted)
    log = logged(1)
    log.turn("cut")
    cut = log.events[:-3]
    JsonlBackend(tmp_path).append(SessionInfo("s", 1.0), cut, durable=True)
    loaded = JsonlBackend(tmp_path).load("s")
    assert loaded is not None and loaded.closers == len(loaded.stored.events) - len(cut)
    assert loaded.closers > 0 and made == [len(cut)]
