"""A claim racing a JSONL delete's cleanup: the delete removes its session's lock files
that no process holds (``remove_leftovers(age=0)``), holding each one's lock for the
instant before it removes it. A claimant that has just made the claim's lock file and
meets that lock is not refused as "in use" when the deleting process is preempted in
that instant for longer than ``BUSY_PAUSES`` (a loaded machine): it tries again while
the name still leads to the file it made, and takes the new one once it is removed.

Nothing is timed: the cleanup is held until the claimant has tried more often than
``BUSY_PAUSES`` allows (or has given up)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

import dsh_persistence._claims as claims
import dsh_persistence._jsonl as jsonl
import dsh_persistence._leftovers as leftovers
from dsh_persistence import JsonlBackend, SessionInfo
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
]

LIMIT = 30.0


def test_a_claim_made_while_a_delete_removes_its_lock_file_is_not_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deleter, claimant = JsonlBackend(tmp_path), JsonlBackend(tmp_path)
    deleter.append(SessionInfo("s", 1.0), LogBuilder().turn("hi"), durable=True)
    made, holds, tried_enough = threading.Event(), threading.Event(), threading.Event()
    tries: list[bool] = []
    result: list[bool] = []

    real_try = claims.try_lock_file

    def try_lock(fd: int) -> bool:  # the claimant, after its open made the file
        if threading.current_thread().name == "claimant":
            if not made.is_set():
                made.set()
                assert holds.wait(LIMIT)  # the cleanup holds the file's lock now
            tries.append(real_try(fd))
            if len(tries) > 1 + len(claims.BUSY_PAUSES):
                tried_enough.set()
            return tries[-1]
        return real_try(fd)

    real_leads = leftovers.leads_to

    def leads_to(path: Path, fd: int) -> bool:  # the cleanup, holding the lock it took
        if path.name == ".s.jsonl.claim":
            holds.set()
            tried_enough.wait(LIMIT)  # preempted: until the claimant tried long enough
        return real_leads(path, fd)

    real_remove = jsonl.remove_leftovers

    def remove(directory: Path, **kwargs: object) -> None:  # s.jsonl is unlinked now
        def claim() -> None:
            result.append(claimant.claim("s"))
            tried_enough.set()  # given up (or taken): the cleanup goes on

        thread = threading.Thread(target=claim, name="claimant")
        thread.start()
        assert made.wait(LIMIT)
        real_remove(directory, **kwargs)  # type: ignore[arg-type]
        thread.join(LIMIT)

    monkeypatch.setattr(claims, "try_lock_file", try_lock)
    monkeypatch.setattr(leftovers, "leads_to", leads_to)
    monkeypatch.setattr(jsonl, "remove_leftovers", remove)
    try:
        assert deleter.delete("s")
        assert result == [True], "the claim was refused as in use"
        assert tries[0] is False  # the cleanup held it at first
        assert (tmp_path / ".s.jsonl.claim").exists()  # a new file, held
        assert not deleter.claim("s")
    finally:
        claimant.close()
        deleter.close()
