"""Blank lines in a JSONL session file: one an editor adds at the end (only whitespace,
after the last event) is harmless, and the next append writes over it, leaving a
valid file; one inside the log is damage, refused saying so and left as it is.

Before: a blank line at the end made the session corrupt ("not a JSON event"), so
saving a file in an editor that adds a final newline lost the user their session."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_persistence import JsonlBackend, SessionCorruptError, SessionInfo
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

INFO = SessionInfo("s", 1.0)


def stored(directory: Path) -> tuple[LogBuilder, Path]:
    backend = JsonlBackend(directory)
    log = LogBuilder()
    log.turn("hello")
    backend.append(INFO, log.events, durable=True)
    backend.close()
    return log, directory / "s.jsonl"


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"  \n\t\n\n", b'\n{"type":"tur'])
def test_blank_lines_at_the_end_are_harmless_and_the_next_append_is_valid(
    tmp_path: Path, end: bytes
) -> None:
    log, path = stored(tmp_path)
    written = path.read_bytes()
    path.write_bytes(written + end)
    backend = JsonlBackend(tmp_path)
    try:
        loaded = backend.load("s")
        assert loaded is not None and loaded.stored.events == log.events
        assert [header.error for header in backend.headers()] == [""]
        first = len(log.events)
        log.turn("again")
        backend.append(INFO, log.events[first:], durable=True)
    finally:
        backend.close()
    assert path.read_bytes().startswith(written)
    assert b"\n\n" not in path.read_bytes() and path.read_bytes().endswith(b"}\n")
    again = JsonlBackend(tmp_path)
    try:
        loaded = again.load("s")
        assert loaded is not None and loaded.stored.events == log.events
        assert (loaded.dropped, loaded.closers) == (0, 0)
    finally:
        again.close()


def test_a_blank_line_inside_the_log_is_refused_saying_so_and_kept(tmp_path: Path) -> None:
    log, path = stored(tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines.insert(2, b" ")  # after the header and the first event
    path.write_bytes(b"\n".join(lines))
    damaged = path.read_bytes()
    backend = JsonlBackend(tmp_path)
    try:
        with pytest.raises(SessionCorruptError) as caught:
            backend.load("s")
        assert str(caught.value).startswith(f"{path}:3: a blank line, not an event; ")
        with pytest.raises(SessionCorruptError):
            backend.append(INFO, log.turn("more"), durable=True)
    finally:
        backend.close()
    assert path.read_bytes() == damaged
