"""The checkpoint thread: it writes a running turn ``delay`` after it did something,
and costs a short turn nothing (its flush overtakes the checkpoint)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

pytestmark = pytest.mark.plugins("persistence")


class Writer:
    """What the checkpointer uses of a ``SessionWriter``; counts its writes."""

    def __init__(self) -> None:
        self.scheduled = False
        self.due = 0.0
        self.durable_checkpoint = False
        self.queued_due: float | None = None
        self.writes: list[bool] = []
        self.times: list[float] = []
        self.session: Any = type("S", (), {"id": "s"})()

    def write(self, durable: bool) -> None:  # as SessionWriter.write begins
        self.scheduled = False
        self.writes.append(durable)
        self.times.append(time.monotonic())


class CountingCondition(threading.Condition):
    """Counts its ``notify`` calls, and the ``wait`` calls begun (a thread that has
    begun one is waiting, or has been woken since)."""

    def __init__(self) -> None:
        super().__init__()
        self.notified = 0
        self.waits = 0

    def notify(self, n: int = 1) -> None:
        self.notified += 1
        super().notify(n)

    def wait(self, timeout: float | None = None) -> bool:
        self.waits += 1
        return super().wait(timeout)


def wait_for(condition: Any, seconds: float = 60) -> None:
    """Until ``condition()`` holds; the deadline is only reached when it never does (a
    busy machine may keep the checkpoint thread waiting for seconds)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_a_checkpoint_a_write_overtook_is_dropped() -> None:
    from dsh_persistence._checkpoints import Checkpointer

    checkpoints, writer = Checkpointer(), Writer()
    with checkpoints._wake:  # the thread cannot look at the job before the flush began
        checkpoints.request(writer, 0.05, False)
        writer.write(True)  # the turn's flush, before the checkpoint is due
    wait_for(lambda: not checkpoints._jobs)  # the thread looked at the job, when due
    checkpoints.close()
    assert writer.writes == [True]


def test_a_checkpoint_nothing_overtook_is_written_after_its_delay() -> None:
    from dsh_persistence._checkpoints import Checkpointer

    checkpoints, writer = Checkpointer(), Writer()
    checkpoints.request(writer, 0.05, False)
    checkpoints.request(writer, 0.05, False)  # merged into the pending one
    wait_for(lambda: writer.writes)
    checkpoints.close()
    assert writer.writes == [False]


def test_a_request_wakes_the_thread_only_when_due_before_what_it_waits_for() -> None:
    from dsh_persistence._checkpoints import Checkpointer

    checkpoints = Checkpointer()
    condition = checkpoints._wake = CountingCondition()
    first, second, third = Writer(), Writer(), Writer()
    checkpoints.request(first, 60, False)  # starts the thread, which reads the queue
    checkpoints.request(second, 60, False)  # due after the first: no need to wake it
    assert condition.notified == 0
    checkpoints.request(third, 0.01, False)  # due sooner: the thread must wait less
    assert condition.notified == 1
    checkpoints.close()  # writes what is pending at once
    assert (first.writes, second.writes, third.writes) == ([False], [False], [False])


def test_short_turns_queue_one_job_and_wake_the_thread_once() -> None:
    """Turns shorter than the delay: each asks for a checkpoint and its flush overtakes
    it. The first request queues the writer's one job; the others neither queue nor
    wake the thread (each wake would take the GIL from the event loop)."""
    from dsh_persistence._checkpoints import Checkpointer

    checkpoints, writer = Checkpointer(), Writer()
    condition = checkpoints._wake = CountingCondition()
    for _ in range(100):
        checkpoints.request(writer, 60, False)  # a step of the turn asks
        checkpoints.request(writer, 60, False)  # merged
        writer.write(True)  # the turn's flush
    assert len(checkpoints._jobs) == 1
    assert condition.notified == 0
    checkpoints.close()  # nothing is pending: every request was overtaken
    assert writer.writes == [True] * 100


def test_a_request_after_a_write_is_written_its_own_delay_after_it() -> None:
    """The queued job comes up for an older request that a write overtook; the newer
    request is filed again and written ``delay`` after it was made."""
    from dsh_persistence._checkpoints import Checkpointer

    checkpoints, writer = Checkpointer(), Writer()
    with checkpoints._wake:  # the thread cannot look at the job before the flush began
        checkpoints.request(writer, 0.2, False)
        writer.write(True)  # overtakes the first request
    time.sleep(0.1)
    asked = time.monotonic()
    checkpoints.request(writer, 0.2, False)  # the job still waits for the first one
    wait_for(lambda: len(writer.writes) == 2)
    checkpoints.close()
    assert writer.writes == [True, False]
    assert writer.times[1] - asked >= 0.2 - 0.01


def test_a_delay_too_long_for_the_clock_does_not_stop_the_thread() -> None:
    from dsh_persistence._checkpoints import Checkpointer

    checkpoints, far, near = Checkpointer(), Writer(), Writer()
    condition = checkpoints._wake = CountingCondition()
    checkpoints.request(far, 1e308, False)  # beyond what a condition can wait for
    wait_for(lambda: condition.waits)  # the thread is waiting for it
    assert condition.waits == 1
    checkpoints.request(near, 0.01, False)
    wait_for(lambda: near.writes)
    assert near.writes == [False]
    checkpoints.close()  # writes what is pending at once
    assert far.writes == [False]


class Broken(Writer):
    """A writer the thread itself trips over (not its write: that is caught and logged)."""

    @property  # type: ignore[override]
    def scheduled(self) -> bool:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("broken writer")
        return False

    @scheduled.setter
    def scheduled(self, value: bool) -> None:
        pass


def test_a_thread_that_fails_is_reported_and_the_next_request_restarts_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from dsh_persistence._checkpoints import Checkpointer

    checkpoints, later = Checkpointer(), Writer()
    with caplog.at_level("ERROR", logger="dsh.persistence"):
        checkpoints.request(Broken(), 0, False)
        wait_for(lambda: caplog.records)
    (record,) = caplog.records
    assert "checkpoint thread stopped (RuntimeError: broken writer)" in record.getMessage()
    checkpoints.request(later, 0, False)
    wait_for(lambda: later.writes)
    checkpoints.close()
    assert later.writes == [False]
