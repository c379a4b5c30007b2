"""The JSONL backend holds no whole extra copy of a session's log: a write keeps the
events' JSON lines (one copy of what is new) and writes a long line from its own bytes;
a load reads the file a line at a time, so besides the events it holds only the line
being parsed.

Before: an append joined the lines into one payload, plus its newline (two more copies
of all it wrote; a new file's header joined to it, one more), and a load read the whole
file, split it into lines and joined them into one JSON text (three copies before the
parse): a session holding three 50 MB prompts peaked at ~800 MB RSS to load its 150 MB
file, ~290 MB now.

Measured with ``tracemalloc``: the bytes Python allocates, the same on a loaded machine
as on an idle one (no RSS, no timing)."""

from __future__ import annotations

import gc
import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_persistence import JsonlBackend, SessionCorruptError, SessionInfo, read_log
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

MB = 1024 * 1024
PROMPT = 4 * MB  # bytes of each long prompt


def traced(call: Callable[[], Any]) -> tuple[Any, int, int]:
    """What ``call`` returns, the memory held before it and the most held during it
    (bytes, traced)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, before, peak


@pytest.fixture
def log() -> LogBuilder:
    """Three turns, each with a prompt of ``PROMPT`` bytes and short events around it."""
    log = LogBuilder()
    for n in range(3):
        log.turn(chr(ord("a") + n) * PROMPT, answer="done")
    return log


def test_an_append_writes_its_lines_without_copying_them(
    tmp_path: Path, log: LogBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted from the moment the lines are encoded (orjson reserves several times a
    long text while it encodes it: pages it never touches, which RSS does not count):
    what the append holds besides the lines."""
    import dsh_persistence._jsonl as jsonl

    encoded: list[int] = []  # memory held once the lines are encoded
    encode = jsonl.encode_events

    def encoding(*args: Any) -> list[bytes]:
        lines = encode(*args)
        tracemalloc.reset_peak()
        encoded.append(tracemalloc.get_traced_memory()[0])
        return lines

    monkeypatch.setattr(jsonl, "encode_events", encoding)
    backend = JsonlBackend(tmp_path, fsync=False)
    info = SessionInfo("s", 1.0)
    half = len(log.events) // 2
    for events in (log.events[:half], log.events[half:]):  # the file made, then appended to
        encoded.clear()
        _, _, peak = traced(lambda events=events: backend.append(info, events, durable=False))
        assert len(encoded) == 1
        assert peak - encoded[0] < MB  # joined, the lines were copied twice: 8 MB at least
    assert (tmp_path / "s.jsonl").stat().st_size > 3 * PROMPT
    loaded = backend.load("s")
    assert loaded is not None and loaded.stored.events == log.events


def test_a_load_holds_the_events_and_one_line_at_a_time(tmp_path: Path, log: LogBuilder) -> None:
    JsonlBackend(tmp_path, fsync=False).append(SessionInfo("s", 1.0), log.events, durable=False)
    size = (tmp_path / "s.jsonl").stat().st_size
    loaded, before, peak = traced(lambda: JsonlBackend(tmp_path).load("s"))
    assert loaded is not None and loaded.stored.events == log.events
    # the events' texts (about the file's size) and, while a prompt's line is read and
    # parsed, its bytes, its decoded text and its parse: read whole, the file was held
    # four more times (its bytes, its lines, their join, its decoded text)
    assert peak - before < size + 4 * PROMPT


def test_lines_of_any_length_are_written_whole_and_in_order(tmp_path: Path) -> None:
    """Short lines joined into writes of up to ``_JOINED`` bytes, a longer one written
    alone: each line ends up once, in order, with its newline."""
    from dsh_persistence._files import _JOINED, write_lines

    lengths = [10, _JOINED - 1, 1, _JOINED, 3, *[_JOINED // 3] * 7, _JOINED + 5, 0, 2]
    lines = [bytes([ord("a") + n % 26]) * length for n, length in enumerate(lengths)]
    path = tmp_path / "lines"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        written = write_lines(fd, lines, 5)
    finally:
        os.close(fd)
    assert path.read_bytes() == b"\0" * 5 + b"".join(line + b"\n" for line in lines)
    assert written == sum(lengths) + len(lengths)


def test_a_bad_record_past_the_first_batch_is_found_where_it_is() -> None:
    """Records are parsed in batches of ``_BATCH`` bytes, a longer one alone: a bad one
    in a later batch is named by its place, and an intact event after it, in the same
    batch or the next (the long record read before the batch was parsed), is proof of
    damage."""
    from dsh_persistence._records import _BATCH

    log = LogBuilder()
    for n in range(3):
        log.turn("x" * _BATCH if n else "short")
    records = [event.to_json() for event in log.events]
    long = next(n for n, record in enumerate(records) if len(record) > _BATCH)
    where = lambda index: f"#{index}"  # noqa: E731
    events, ignored = read_log(iter(records), where)
    assert events == log.events and ignored == 0
    for bad in (long - 1, long, len(records) - 2):
        damaged = [*records[:bad], "{bad", *records[bad + 1 :]]
        with pytest.raises(SessionCorruptError, match=rf"^#{bad}: not a JSON event .* #"):
            read_log(iter(damaged), where)
    cut = [*records[: long - 1], "{bad", records[long]]  # the long one read ahead
    with pytest.raises(SessionCorruptError, match=rf"seq {long} follows at #{long}, so"):
        read_log(iter(cut), where)
    lost = [*records[: long - 1], "\0\0{bad", "x" * _BATCH, "{bad"]  # a lost page: the tail
    events, ignored = read_log(iter(lost), where)
    assert (events, ignored) == (log.events[: long - 1], 3)
