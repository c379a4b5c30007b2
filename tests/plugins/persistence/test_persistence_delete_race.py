"""A JSONL append by a writer without a claim, racing a delete of its session.

Such a writer opens the session file, then waits for its turn and the file's lock; a
delete by another process in between unlinks the file it opened. Writing on would put
the events into a file no one can read again while the append reports success. After
taking the lock, the append checks that the path still leads to the file it opened:
when no file is there any more it fails with ``SessionDeletedError`` naming the session
(nothing written; the events stay the caller's, and a ``SessionWriter`` stores its whole
log again with its next write), and when another file took the name it appends to that
one, as if it had opened it after the delete (the seq check decides).

Real processes hold the turn and delete; the racing append runs in a thread of the test
process, stopped in the window by the turn held elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh.session import Session
from dsh_persistence import (
    JsonlBackend,
    SessionConflictError,
    SessionDeletedError,
    SessionInfo,
)
from dsh_persistence._writer import SessionWriter
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(
        not os.path.isdir("/proc/self/fd"), reason="finds the waiting append in /proc/self/fd"
    ),
]

INFO = SessionInfo("s", 1_700_000_000.0, {}, "/w", "hello")

TURN_HOLDER = """
import sys
from pathlib import Path
from dsh_persistence._claims import hold_lock_file, let_go

turn = Path(sys.argv[1])
fd = hold_lock_file(turn, wait=True)
print("holding", flush=True)
sys.stdin.readline()
let_go(turn, fd)
"""

DELETER = """
import sys
from dsh_persistence import JsonlBackend

print(JsonlBackend(sys.argv[1]).delete("s"), flush=True)
"""

# A new agent stores the session (claimed: a writer without a claim would take its turn
# first, which the race holds: that of an append in progress, as far as it can tell)
CREATOR = """
import sys
from dsh_persistence import JsonlBackend, SessionInfo
from dsh_persistence.testing import LogBuilder

log = LogBuilder(start=1_800_000_000.0)
backend = JsonlBackend(sys.argv[1])
assert backend.claim("s")
backend.append(SessionInfo("s", 1.8e9), log.turn("new")[:3], durable=True)
backend.release("s")
"""


def run_python(code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def opened_here(path: Path) -> bool:
    """Whether a file of this process is open on ``path``."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                return True
        except OSError:
            continue
    return False


def race(directory: Path, append: Callable[[], Any], meanwhile: Callable[[], None]) -> list[Any]:
    """Run ``append`` in a thread while a real process holds the turn of writers without
    a claim (so the append has opened the session file and waits for its turn), run
    ``meanwhile``, then let the append go on. Returns [its result or its exception]."""
    turn = directory / ".s.jsonl.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", TURN_HOLDER, str(turn)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append(append())
        except BaseException as exc:  # reported by the caller
            outcome.append(exc)

    thread = threading.Thread(target=target)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        thread.start()
        deadline = time.monotonic() + 10
        while not opened_here(turn):  # opened after the session file: in the window
            assert time.monotonic() < deadline, "the append never reached its turn"
            time.sleep(0.005)
        assert thread.is_alive()
        meanwhile()
    finally:
        holder.communicate("go\n", timeout=30)
        thread.join(30)
    assert outcome, "the append did not finish"
    return outcome


def open_under(root: Path) -> list[str]:
    """The files under ``root`` this process has open (a deleted one too)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(root)):
            found.append(target)
    return found


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


def test_an_append_racing_a_delete_fails_naming_the_session(directory: Path) -> None:
    log = LogBuilder()
    log.turn("one")
    log.turn("two")
    JsonlBackend(directory).append(INFO, log.events[:9], durable=True)
    writer = JsonlBackend(directory)
    assert writer.tail("s") is not None  # it knows where the file ends

    def delete() -> None:
        assert run_python(DELETER, str(directory)) == "True"

    (outcome,) = race(directory, lambda: writer.append(INFO, log.events[9:], durable=True), delete)

    assert isinstance(outcome, SessionDeletedError), outcome
    assert isinstance(outcome, SessionConflictError)  # handled as any refused append
    assert "'s'" in str(outcome)
    assert "deleted" in str(outcome)
    assert "nothing was written" in str(outcome)
    assert JsonlBackend(directory).load("s") is None
    assert writer.tail("s") is None


def test_an_append_racing_a_delete_and_a_new_session_meets_the_new_file(
    directory: Path,
) -> None:
    """Another file under the name (the session deleted and stored anew) is the one
    appended to: here its log is shorter, so the seq check refuses the append and the
    new session stays as stored."""
    log = LogBuilder()
    log.turn("one")
    JsonlBackend(directory).append(INFO, log.events[:9], durable=True)
    writer = JsonlBackend(directory)
    assert writer.tail("s") is not None

    def replace() -> None:
        assert run_python(DELETER, str(directory)) == "True"
        run_python(CREATOR, str(directory))

    (outcome,) = race(directory, lambda: writer.append(INFO, log.events[9:], durable=True), replace)

    assert type(outcome) is SessionConflictError, outcome
    assert "next is 3" in str(outcome)
    assert open_under(directory) == []  # the file opened before the delete is closed
    loaded = JsonlBackend(directory).load("s")
    assert loaded is not None
    assert (loaded.stored.created, loaded.kept) == (1.8e9, 3)


def test_a_session_writer_loses_nothing_to_the_race(directory: Path) -> None:
    """The refused write keeps the events in the live log: the writer's next write finds
    no stored session and stores the whole log again, where writing into the deleted
    file would have lost the batch with nothing reported."""
    log = LogBuilder()
    log.turn("one")
    log.turn("two")
    JsonlBackend(directory).append(INFO, log.events[:9], durable=True)
    session = Session("s", log.events, created=INFO.created)
    writer = SessionWriter(JsonlBackend(directory), session, cwd="/w")

    def delete() -> None:
        assert run_python(DELETER, str(directory)) == "True"

    (outcome,) = race(directory, lambda: writer.write(True), delete)

    assert isinstance(outcome, SessionDeletedError), outcome
    writer.write(True)
    loaded = JsonlBackend(directory).load("s")
    assert loaded is not None
    assert [e.to_dict() for e in loaded.stored.events] == [e.to_dict() for e in log.events]
