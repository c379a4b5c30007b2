"""``Checkpointer.close()`` racing a ``request()``: the plugin's close runs in a worker
thread while ``session_event`` asks for checkpoints on the loop. A request made while
close() waits for the thread it stopped is served (by a new thread), and close() still
returns: the stopped thread's stop flag is its own, not one a new thread resets.

Nothing is timed: the limits below are only reached when what they wait for never
happens."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from dsh_persistence._checkpoints import Checkpointer

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 30.0


class Writer:
    """What the checkpointer uses of a ``SessionWriter``; its write can be held."""

    def __init__(self, name: str, hold: threading.Event | None = None) -> None:
        self.scheduled = False
        self.due = 0.0
        self.durable_checkpoint = False
        self.queued_due: float | None = None
        self.session: Any = type("S", (), {"id": name})()
        self.hold = hold
        self.writing = threading.Event()
        self.written = threading.Event()

    def write(self, durable: bool) -> None:  # as SessionWriter.write begins
        self.scheduled = False
        self.writing.set()
        if self.hold is not None:
            self.hold.wait(LIMIT)
        self.written.set()


def checkpoint_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "dsh-persistence-checkpoints"]


def test_a_request_while_close_waits_for_the_thread_is_served_and_close_returns() -> None:
    checkpoints, release = Checkpointer(), threading.Event()
    first, second = Writer("one", hold=release), Writer("two")
    before = set(checkpoint_threads())
    checkpoints.request(first, 0, False)
    assert first.writing.wait(LIMIT)  # the thread is writing "one"
    closer = threading.Thread(target=checkpoints.close, daemon=True)
    closer.start()  # close() stops that thread and waits for it
    with checkpoints._wake:
        assert checkpoints._wake.wait_for(lambda: checkpoints._thread is None, LIMIT)
    checkpoints.request(second, 3600, False)  # session_event meanwhile
    release.set()  # the write of "one" ends

    closer.join(LIMIT)
    assert not closer.is_alive(), "close() never returned"
    assert second.written.wait(LIMIT), "the request made during close() was never written"
    checkpoints.close()
    for thread in set(checkpoint_threads()) - before:
        thread.join(LIMIT)
        assert not thread.is_alive(), "a checkpoint thread outlived close()"
