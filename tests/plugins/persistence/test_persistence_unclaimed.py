"""Writers that hold no claim of a session: a program that appends through a backend of
its own, without ``claim``. Another process's claim refuses such an append at once (it
waited for as long as the claim lasted, JSONL, or wrote into the claimed session,
SQLite); the claim holder's own appends are never refused; and two such writers of one
session take turns: one that meets the other mid-append waits for it, as before.

As in test_persistence_claims.py, "another process" is mostly another backend over the
same store (``flock`` locks belong to an open file), and real processes where it says
so. Every test runs once per backend (the ``settings`` fixture).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from claims_support import claimed_elsewhere, files_of, in_thread, kept, note, stored, stored_files

from dsh_persistence import (
    PersistenceSettings,
    SessionBackend,
    SessionInfo,
    SessionInUseError,
    open_backend,
)

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
]

INFO = SessionInfo("s", 1.0)


def wait_until_blocked_on_a_lock(thread: threading.Thread) -> None:
    """Until some thread of this process waits for a ``flock`` (Linux /proc/locks lists
    waiters with "->" and their pid), or ``thread`` is done; elsewhere, a pause."""
    if not os.path.exists("/proc/locks"):
        thread.join(0.5)
        return
    mine = f" {os.getpid()} "
    deadline = time.monotonic() + 10
    while thread.is_alive() and time.monotonic() < deadline:
        with open("/proc/locks") as locks:
            if any("->" in line and mine in line for line in locks):
                return
        thread.join(0.001)


def test_an_unclaimed_append_behind_a_claim_is_refused_at_once(
    settings: PersistenceSettings,
) -> None:
    count = stored(settings)
    holder, writer = open_backend(settings), open_backend(settings)
    assert holder.claim("s")
    started = time.monotonic()
    thread, outcome = in_thread(lambda: writer.append(INFO, [note(count)], durable=False))
    thread.join(5)
    waited = thread.is_alive()
    holder.release("s")  # lets a waiting append go, so that the thread ends
    thread.join(30)
    assert not waited, "the append waited for the claim"
    assert time.monotonic() - started < 5
    error = outcome[0]
    assert isinstance(error, SessionInUseError), error
    assert "cannot append to session 's': another process or harness is continuing it" in (
        str(error)
    )
    assert "nothing was written" in str(error)
    assert kept(settings) == count
    writer.append(INFO, [note(count)], durable=False)  # the claim has ended: it goes
    assert kept(settings) == count + 1
    holder.close()
    writer.close()


def test_an_append_behind_a_real_process_claim_is_refused(
    settings: PersistenceSettings,
) -> None:
    count = stored(settings)
    writer = open_backend(settings)
    with claimed_elsewhere(settings, "s"):  # its claim ends with the block
        thread, outcome = in_thread(lambda: writer.append(INFO, [note(count)], durable=False))
        thread.join(5)
        refused_at_once = not thread.is_alive()
    thread.join(30)
    assert refused_at_once, "the append waited for the other process's claim"
    assert isinstance(outcome[0], SessionInUseError), outcome
    writer.append(INFO, [note(count)], durable=False)
    writer.close()
    assert kept(settings) == count + 1


def test_the_claim_holder_is_never_refused(settings: PersistenceSettings) -> None:
    """Its appends go through its claim, whatever writers without one try meanwhile;
    so do those of a new session it claimed before it was stored."""
    count = stored(settings)
    holder, other = open_backend(settings), open_backend(settings)
    assert holder.claim("s")
    holder.append(INFO, [note(count, "holder")], durable=True)
    with pytest.raises(SessionInUseError):
        other.append(INFO, [note(count + 1, "other")], durable=False)
    holder.append(INFO, [note(count + 1, "holder")], durable=False)
    assert holder.claim("new")  # not stored yet
    new = SessionInfo("new", 1.0)
    holder.append(new, [note(0, "holder")], durable=False)
    with pytest.raises(SessionInUseError):
        other.append(new, [note(1, "other")], durable=False)
    holder.append(new, [note(1, "holder")], durable=False)
    for session in (holder.load("s"), holder.load("new")):
        assert session is not None
        assert {e.data["by"] for e in session.stored.events if e.type == "note"} == {"holder"}
    assert kept(settings) == count + 2
    holder.close()
    other.close()


def pause_mid_append(backend: SessionBackend, settings: PersistenceSettings) -> Any:
    """Make ``backend``'s next append stop where it holds its locks (JSONL: reading the
    file, which a fresh backend does; SQLite: running the transaction) until released.
    Returns (reached, release) events."""
    reached, release = threading.Event(), threading.Event()
    name = "_read" if settings.backend == "jsonl" else "_run"
    real = getattr(backend, name)

    def paused(*args: Any) -> Any:
        reached.set()
        assert release.wait(30)
        return real(*args)

    setattr(backend, name, paused)
    return reached, release


def test_two_unclaimed_writers_take_turns_rather_than_refuse(
    settings: PersistenceSettings,
) -> None:
    """The second meets the first mid-append (its lock held for the length of it): it
    waits, then appends after it, where a claim would have refused it."""
    count = stored(settings)
    first, second = open_backend(settings), open_backend(settings)
    reached, release = pause_mid_append(first, settings)
    one, first_outcome = in_thread(lambda: first.append(INFO, [note(count)], durable=False))
    try:
        assert reached.wait(30)
        two, second_outcome = in_thread(
            lambda: second.append(INFO, [note(count + 1, "second")], durable=False)
        )
        wait_until_blocked_on_a_lock(two)
        assert two.is_alive(), f"the second writer did not wait: {second_outcome}"
    finally:
        release.set()
    one.join(30)
    two.join(30)
    assert first_outcome == [None]
    assert second_outcome == [None]
    assert kept(settings) == count + 2
    first.close()
    second.close()


def test_unclaimed_appends_leave_no_lock_file(settings: PersistenceSettings) -> None:
    """The lock files they take turns on and claim with are removed when let go: the
    store holds its sessions' files (or database) and nothing else."""
    count = stored(settings)  # stored by a writer without a claim, too
    writer = open_backend(settings)
    writer.append(INFO, [note(count)], durable=False)
    writer.close()
    assert files_of(settings) == stored_files(settings, "s")


WRITER = """
import sys, time
from dsh.session import SessionEvent
from dsh_persistence import (
    PersistenceSettings, SessionConflictError, SessionInfo, SessionInUseError, open_backend
)

backend = open_backend(PersistenceSettings(backend=sys.argv[1], directory=sys.argv[2]))
name, wanted = sys.argv[3], int(sys.argv[4])
backend.tail("s")  # imported and opened: now wait for the others, to write at once
print("ready", flush=True)
sys.stdin.readline()
written = refused = 0
while written < wanted:
    tail = backend.tail("s")
    event = SessionEvent("note", tail.next_seq, time.time(), {"by": name})
    try:
        backend.append(SessionInfo("s", 1.0), [event], durable=True)
        written += 1
    except SessionConflictError:
        pass  # the other one appended first: read the tail again
    except SessionInUseError:
        refused += 1
print(refused)
"""


def test_unclaimed_writers_in_real_processes_never_refuse_each_other(
    settings: PersistenceSettings,
) -> None:
    """Three processes append to one session as fast as they can, all at once, each
    reading the tail again when another appended first: none is ever refused as if a
    claim held the session."""
    count = stored(settings)
    wanted = 100
    where = [settings.backend, str(settings.directory)]
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, *where, name, str(wanted)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b", "c")
    ]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    refusals = [writer.communicate(timeout=120)[0].strip() for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0, 0]
    assert refusals == ["0", "0", "0"]
    assert kept(settings) == count + 3 * wanted
