"""The checkpoint thread, beyond its timing: a burst of requests does not postpone the
checkpoint, every checkpoint of a long turn is written, a failing write is logged as a
warning and the thread keeps serving the other sessions, and the checkpointer works
again after ``close()``.

Writes are awaited through events with a generous limit; nothing here sleeps.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from dsh.session import Session, SessionEvent
from dsh_persistence import JsonlBackend, PersistenceError, SessionInfo
from dsh_persistence._checkpoints import Checkpointer
from dsh_persistence._writer import SessionWriter

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10.0


class Writer:
    """What the checkpointer uses of a ``SessionWriter``; signals each write."""

    def __init__(self, name: str = "s", fails: bool = False) -> None:
        self.scheduled = False
        self.due = 0.0
        self.durable_checkpoint = False
        self.queued_due: float | None = None
        self.writes: list[bool] = []
        self.written = threading.Event()
        self.fails = fails
        self.session: Any = type("S", (), {"id": name})()

    def write(self, durable: bool) -> None:  # as SessionWriter.write begins
        self.scheduled = False
        self.writes.append(durable)
        self.written.set()
        if self.fails:
            raise PersistenceError(f"{self.session.id}.jsonl: cannot append: disk full")

    def wait(self) -> bool:
        done = self.written.wait(LIMIT)
        self.written.clear()
        return done


def test_a_burst_of_requests_does_not_postpone_the_checkpoint() -> None:
    """Requests while a checkpoint is asked for merge into it: it stays due ``delay``
    after the first, so a turn that keeps logging tool events is still written."""
    checkpoints, writer = Checkpointer(), Writer()
    try:
        checkpoints.request(writer, 3600, False)
        first = writer.due
        for _ in range(3):
            checkpoints.request(writer, 3600, True)
        assert writer.due == first
        assert writer.durable_checkpoint is False
    finally:
        checkpoints.close()
    assert writer.writes == [False]


def test_a_failed_checkpoint_is_a_warning_and_the_thread_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """docs/persistence.md: "A failed checkpoint is logged as a warning (logger
    dsh.persistence) and left to the flush"; the other sessions' checkpoints are still
    written, without waiting for another request."""
    checkpoints = Checkpointer()
    broken, other = Writer("broken", fails=True), Writer("other")
    try:
        with caplog.at_level("WARNING", logger="dsh.persistence"):
            checkpoints.request(broken, 0, False)
            checkpoints.request(other, 0, False)
            assert broken.wait()
            assert other.wait()
    finally:
        checkpoints.close()
    warnings = [r for r in caplog.records if r.name == "dsh.persistence"]
    assert [r.levelname for r in warnings] == ["WARNING"]
    assert "checkpoint of session 'broken' failed" in warnings[0].getMessage()
    assert "disk full" in warnings[0].getMessage()


def test_the_checkpointer_works_again_after_close() -> None:
    """``close()`` writes what is pending and stops the thread; later requests start a
    new one that keeps serving requests (a harness started again in the process)."""
    checkpoints, writer = Checkpointer(), Writer()
    try:
        checkpoints.request(writer, 3600, False)
        checkpoints.close()
        assert writer.wait() and writer.writes == [False]
        for round_ in range(3):
            checkpoints.request(writer, 0, False)
            assert writer.wait(), f"request {round_} after close() was never written"
    finally:
        checkpoints.close()
    assert writer.writes == [False] * 4


class Signalling(JsonlBackend):
    """A JSONL backend that signals each append."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.appended = threading.Event()

    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        super().append(info, events, durable=durable)
        self.appended.set()


def test_every_checkpoint_of_a_long_turn_is_written_not_only_the_first(tmp_path: Path) -> None:
    """A long turn asks for a checkpoint after each tool call: each one is written in
    the background, so a crash late in the turn keeps what it did (not only what came
    before its first checkpoint)."""
    backend = Signalling(tmp_path)
    session = Session("s")
    writer = SessionWriter(backend, session)
    checkpoints = Checkpointer()
    try:
        session._append("turn/start", {"turn": 1})
        for n in range(3):
            session._append("tool/call", {"id": f"c{n}", "name": "x", "arguments": "{}"})
            checkpoints.request(writer, 0, False)
            assert backend.appended.wait(LIMIT), f"checkpoint {n} was never written"
            backend.appended.clear()
            tail = backend.tail("s")
            assert tail is not None and tail.next_seq == len(session.events)
    finally:
        checkpoints.close()
