"""Review of the session claims (s12): what the claim tests left open, found by mutating
the claim code (a refused claim or delete that keeps its file open, a delete or a closed
store that keeps a claim, a resumed agent disposed before it wrote anything), and the
bugs the review found, as strict xfails.

As in test_persistence_claims.py, "another process" is another backend (or
``PersistencePlugin``) over the same store: ``flock`` locks belong to an open file.
"""

from __future__ import annotations

import errno
import os
from contextlib import suppress
from pathlib import Path

import anyio
import pytest
from claims_support import harness_over, in_thread, stored, stored_session

from dsh.errors import DshError
from dsh.testing import ScriptedModel, run_turn, text
from dsh_persistence import (
    JsonlBackend,
    PersistenceSettings,
    SessionInfo,
    SessionInUseError,
    open_backend,
)
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
]

FDS = Path("/proc/self/fd")
needs_fd_list = pytest.mark.skipif(not FDS.is_dir(), reason="counts /proc/self/fd")


def open_files() -> int:
    return len(os.listdir(FDS))


async def resumable_elsewhere(settings: PersistenceSettings, session_id: str) -> bool:
    """Whether another harness (another process, for the locks) can resume it now."""
    async with harness_over(settings, ScriptedModel([])) as other:
        try:
            await other.agents.resume("elsewhere", session_id)
        except SessionInUseError:
            return False
        return True


@needs_fd_list
def test_a_refused_claim_or_delete_leaves_no_file_open(settings: PersistenceSettings) -> None:
    stored(settings)
    mine, theirs = open_backend(settings), open_backend(settings)
    assert mine.claim("s")
    theirs.headers()  # connected: the database's files stay open from here on
    before = open_files()
    for _ in range(5):
        assert not theirs.claim("s")
        with pytest.raises(SessionInUseError):
            theirs.delete("s")
    assert open_files() == before
    mine.close()
    theirs.close()


def test_a_store_closed_ends_its_claims(settings: PersistenceSettings) -> None:
    stored(settings)
    mine, theirs = open_backend(settings), open_backend(settings)
    assert mine.claim("s")
    mine.close()
    assert theirs.claim("s")
    theirs.close()


def test_a_deleted_session_keeps_no_claim(settings: PersistenceSettings) -> None:
    """SQLite claims a session while it deletes it: the claim ends with the delete."""
    stored(settings)
    mine, theirs = open_backend(settings), open_backend(settings)
    assert mine.delete("s")
    assert theirs.claim("s")
    theirs.release("s")
    if settings.backend == "sqlite":
        assert list(Path(f"{mine.location}-claims").iterdir()) == []
    mine.close()
    theirs.close()


def test_the_jsonl_holder_may_delete_the_session_it_claims(tmp_path: Path) -> None:
    """``_unlink_unclaimed``: the claim is this backend's, so its lock is no reason to
    refuse (the service refuses a live session before it gets here)."""
    settings = PersistenceSettings(backend="jsonl", directory=tmp_path)
    stored(settings)
    mine = JsonlBackend(tmp_path)
    assert mine.claim("s")
    assert mine.delete("s")
    assert mine.tail("s") is None
    mine.release("s")
    mine.close()


async def test_a_resumed_agent_disposed_before_writing_frees_the_session(
    settings: PersistenceSettings,
) -> None:
    session_id = await stored_session(settings)
    async with harness_over(settings, ScriptedModel([])) as h:
        handle = await h.agents.resume("a", session_id)
        assert not await resumable_elsewhere(settings, session_id)
        await handle.dispose()  # no turn: nothing was written
        assert await resumable_elsewhere(settings, session_id)


async def test_an_agent_that_cannot_start_gives_its_claim_back(
    settings: PersistenceSettings,
) -> None:
    """The claim is taken before the agent starts; a start that fails (its id is taken)
    releases it, or the session would stay claimed while the harness lives."""
    session_id = await stored_session(settings)
    async with harness_over(settings, ScriptedModel([])) as h:
        await h.agents.create("a", options={"model": "scripted"})
        with pytest.raises(DshError, match="already exists"):
            await h.agents.resume("a", session_id)
        assert await resumable_elsewhere(settings, session_id)


# -- bugs found by the review --------------------------------------------------------


def test_an_append_behind_another_process_claim_is_refused_at_once(tmp_path: Path) -> None:
    """A writer that holds no claim waited with a blocking flock for as long as the
    claim lasted (a strict xfail until s16): it is refused at once now, writing nothing.
    Both backends, and the writers it must still wait for: test_persistence_unclaimed.py."""
    log = LogBuilder()
    log.turn("one")
    writer, holder = JsonlBackend(tmp_path), JsonlBackend(tmp_path)
    writer.append(SessionInfo("s", 1.0), log.events, durable=False)
    count = len(log.events)
    log.turn("two")
    assert holder.claim("s")
    thread, outcome = in_thread(
        lambda: writer.append(SessionInfo("s", 1.0), log.events[count:], durable=False)
    )
    thread.join(3)
    waited = thread.is_alive()
    holder.release("s")  # let a waiting append go, so that the thread ends
    thread.join(10)
    writer.close()
    holder.close()
    assert not waited, "the append waited for the other process's claim"
    assert outcome and isinstance(outcome[0], SessionInUseError)
    assert "session 's'" in str(outcome[0]) and "another process or harness" in str(outcome[0])
    loaded = JsonlBackend(tmp_path).load("s")
    assert loaded is not None and loaded.kept == count  # nothing was written


async def test_a_live_session_created_here_cannot_be_resumed_elsewhere(
    settings: PersistenceSettings,
) -> None:
    async with harness_over(settings, ScriptedModel([text("noted")])) as h:
        agent = await h.agents.create("first", options={"model": "scripted"})
        with anyio.fail_after(10):
            await run_turn(agent, "remember blue")
        assert not await resumable_elsewhere(settings, agent.session.id)


async def test_a_resume_from_a_stale_load_is_refused_or_reloaded(
    settings: PersistenceSettings,
) -> None:
    session_id = await stored_session(settings)
    async with harness_over(settings, ScriptedModel([text("blue")])) as first:
        handle = await first.agents.resume("a", session_id)
        async with harness_over(settings, ScriptedModel([])) as second:
            stale = await second.agents.load_stored(session_id)  # `dsh run --continue`
            with anyio.fail_after(10):
                await run_turn(handle, "what colour?")  # the holder goes on, then ends
            await handle.dispose()
            try:
                late = await second.agents.resume_stored("b", stale)
            except DshError:
                return  # refused: fine
            fresh = await second.agents.load_stored(session_id)
            assert len(late.session.events) == len(fresh.events)


def test_a_claim_file_that_cannot_be_removed_is_still_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh_persistence import _claims

    claims = _claims.ClaimFiles(tmp_path / "db-claims")
    assert claims.claim("s")

    def refused(path: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(_claims.os, "unlink", refused)
    with suppress(OSError):  # raising is fine; keeping the lock is not
        claims.release("s")
    monkeypatch.undo()
    assert _claims.ClaimFiles(tmp_path / "db-claims").claim("s")


@needs_fd_list
def test_a_claim_whose_lock_fails_leaves_no_file_open(
    settings: PersistenceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh_persistence import _claims, _jsonl_locks

    stored(settings)
    backend = open_backend(settings)

    def no_locks(fd: int) -> bool:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(_jsonl_locks, "try_lock_file", no_locks)
    monkeypatch.setattr(_claims, "try_lock_file", no_locks)
    before = open_files()
    with pytest.raises((OSError, DshError)):  # PersistenceError for SQLite
        backend.claim("s")
    assert open_files() == before
    backend.close()
