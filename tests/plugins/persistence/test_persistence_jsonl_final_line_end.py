"""A JSONL session file whose last line lost its line end (saved by a script that joins
lines with ``"\\n"``, a shell's ``$(...)``, an editor told not to end the file) keeps
that last event: a whole event with the next seq is no torn write (a proper prefix of
an event's JSON is never whole JSON). The next append ends its line first.

Before: it was taken for a torn write: the session loaded without it (a finished turn
read as interrupted, its synthetic closers added), and the next save cut it off the
file, the turn's real end lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_persistence import JsonlBackend, SessionInfo
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

INFO = SessionInfo("s", 1.0)


def test_a_last_event_without_its_line_end_is_kept_and_the_next_append_ends_it(
    tmp_path: Path,
) -> None:
    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    log.turn("hello")
    backend.append(INFO, log.events, durable=True)
    backend.close()
    path = tmp_path / "s.jsonl"
    written = path.read_bytes()
    path.write_bytes(written[:-1])  # "\n".join(lines)
    backend = JsonlBackend(tmp_path)
    try:
        loaded = backend.load("s")
        assert loaded is not None and loaded.stored.events == log.events
        assert (loaded.kept, loaded.dropped, loaded.closers) == (len(log.events), 0, 0)
        tail = backend.tail("s")
        assert tail is not None and tail.next_seq == len(log.events)
        more = log.turn("again")
        backend.append(INFO, more, durable=True)
    finally:
        backend.close()
    assert path.read_bytes().startswith(written)
    again = JsonlBackend(tmp_path)
    try:
        loaded = again.load("s")
        assert loaded is not None and loaded.stored.events == log.events
        assert (loaded.dropped, loaded.closers) == (0, 0)
    finally:
        again.close()


@pytest.mark.parametrize("last", [b'{"type":"turn/end","seq":', b"   ", b'{"type":"x"}'])
def test_a_torn_or_foreign_last_line_is_still_cut_off(tmp_path: Path, last: bytes) -> None:
    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    log.turn("hello")
    backend.append(INFO, log.events[:-1], durable=True)  # its turn left open
    backend.close()
    path = tmp_path / "s.jsonl"
    written = path.read_bytes()
    path.write_bytes(written + last)
    backend = JsonlBackend(tmp_path)
    try:
        loaded = backend.load("s")
        assert loaded is not None and loaded.kept == len(log.events) - 1
        assert loaded.dropped == 1
        backend.append(INFO, log.events[-1:], durable=True)
    finally:
        backend.close()
    assert path.read_bytes() == written + log.events[-1].to_json_bytes() + b"\n"
