"""Two writers of one JSONL session at the same moment (two processes that both resumed
it): an append takes the file's advisory lock before it checks where the log ends, so
a writer that appended meanwhile is seen and the late one is refused as a conflict
(docs/persistence.md, "Appends take an advisory lock on the file").

The other writer here is the test itself, appending as another process that holds no
claim does: it takes its turn (``flock`` on ``.s.jsonl.lock``, see ``_claims``), then the
file's lock, on its own open files; ``/proc/locks`` tells when the backend's append waits
for it, so the order of events is fixed, not left to thread timing. (The file's lock
held without the turn is a claim: an append is refused at once then, see
test_persistence_unclaimed.py.)
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import pytest

from dsh.session import SessionEvent
from dsh_persistence import JsonlBackend, SessionConflictError, SessionInfo
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs Linux /proc/locks"),
]


def waits_for_lock(inode: int) -> bool:
    """Whether some process or thread is blocked waiting for a lock on ``inode``."""
    with open("/proc/locks") as locks:
        return any("->" in line and f":{inode} " in line for line in locks)


def test_an_append_waits_for_the_lock_and_then_sees_the_other_writers_event(
    tmp_path: Path,
) -> None:
    log = LogBuilder()
    log.turn("one")
    backend = JsonlBackend(tmp_path)
    backend.append(SessionInfo("s", 1.0), log.events, durable=True)
    path = tmp_path / "s.jsonl"
    mine = SessionEvent("note", len(log.events), 2.0, {"by": "me"})
    theirs = SessionEvent("note", len(log.events), 3.0, {"by": "the other process"})
    outcome: list[BaseException | None] = []

    def append() -> None:
        try:
            backend.append(SessionInfo("s", 1.0), [mine], durable=True)
            outcome.append(None)
        except BaseException as exc:  # checked below
            outcome.append(exc)

    turn_path = tmp_path / ".s.jsonl.lock"
    turn = os.open(turn_path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(turn, fcntl.LOCK_EX)  # the other writer's turn
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the other writer is mid-append
        thread = threading.Thread(target=append)
        thread.start()
        # until the append blocks on the lock (or, if it took none, has finished); the
        # deadline only guards a /proc/locks that never shows the wait (the order is
        # then left to the scheduler, and the assertions below still hold for a lock)
        deadline = time.monotonic() + 10
        while thread.is_alive() and not waits_for_lock(turn_path.stat().st_ino):
            if time.monotonic() > deadline:
                break
            thread.join(0.001)
        os.write(fd, theirs.to_json_bytes() + b"\n")
    finally:
        os.close(fd)  # releases the lock
        os.unlink(turn_path)  # as a writer lets go of its turn
        os.close(turn)
    thread.join(30)

    assert len(outcome) == 1
    assert isinstance(outcome[0], SessionConflictError)
    loaded = JsonlBackend(tmp_path).load("s")
    assert loaded is not None
    assert (loaded.kept, loaded.dropped) == (len(log.events) + 1, 0)
    assert loaded.stored.events[-1].data == {"by": "the other process"}
