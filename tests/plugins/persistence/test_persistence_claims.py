"""A stored session continued by one process is that process's until its agent is
disposed: another process that resumes it is refused before it asks the model anything
(two `dsh run --continue` at once both called the model and ran tools, then all but one
failed to save), and cannot delete it meanwhile.

"Another process" is here another ``PersistencePlugin`` over the same store: its
backend opens the session file (JSONL) or the claim's lock file (SQLite) itself, and
``flock`` locks belong to an open file, so two backends in one process hold and meet
locks as two processes do. The CLI test runs a real second process (`dsh run
--continue`). Every test runs once per backend (the ``settings`` fixture).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from claims_support import harness_over, kept, stored_session

import dsh
from dsh.errors import DshError
from dsh.testing import ScriptedModel, run_turn, text
from dsh_persistence import (
    JsonlBackend,
    PersistenceError,
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


async def test_a_session_continued_elsewhere_is_refused_before_the_model_is_asked(
    settings: PersistenceSettings,
) -> None:
    session_id = await stored_session(settings)
    async with harness_over(settings, ScriptedModel([text("blue")])) as first:
        await first.agents.resume("a", session_id)
        size = kept(settings, session_id)
        late_model = ScriptedModel([text("never")])
        async with harness_over(settings, late_model) as second:
            with pytest.raises(SessionInUseError) as caught:
                await second.agents.resume("b", session_id)
            location = open_backend(settings).location
            assert str(caught.value) == (
                f"session {session_id!r} is in use: another process or harness is continuing it "
                f"(stored in {location}); try again when it is done"
            )
            assert second.agents.get("b") is None  # undone: the id is free again
            assert late_model.requests == []
            # the core's type too, which dsh.testing.InMemoryPersistence raises
            assert isinstance(caught.value, dsh.SessionInUseError)
            assert isinstance(caught.value, PersistenceError)
            assert caught.value.code == "SESSION_IN_USE" and caught.value.exit_status == 1
        assert kept(settings, session_id) == size  # the refused agent wrote nothing

        # the holder goes on and saves its turn as usual
        handle = first.agents.get("a")
        assert handle is not None
        with anyio.fail_after(10):
            events = await run_turn(handle, "what colour?")
        assert events[-1].data["reason"] == "completed"
    assert kept(settings, session_id) > size

    # disposed: the session is free for the other process
    async with harness_over(settings, ScriptedModel([text("blue again")])) as third:
        handle = await third.agents.resume("c", session_id)
        with anyio.fail_after(10):
            events = await run_turn(handle, "and now?")
        assert events[-1].data["reason"] == "completed"


async def test_a_harness_can_create_an_agent_after_a_refused_resume(
    settings: PersistenceSettings,
) -> None:
    """A refused resume leaves the harness usable: another agent with the same agent
    id, on a new session of its own, works (test_persistence_new_session_claims.py: a
    new session is claimed too)."""
    session_id = await stored_session(settings)
    async with harness_over(settings, ScriptedModel([text("ok")] * 2)) as h:
        await h.agents.resume("a", session_id)
        with pytest.raises(DshError, match="is in use"):  # a second agent in this harness
            await h.agents.resume("b", session_id)
        fresh = await h.agents.create("b", options={"model": "scripted"})
        with anyio.fail_after(10):
            events = await run_turn(fresh, "hi")
        assert events[-1].data["reason"] == "completed"


def test_a_claimed_session_cannot_be_deleted_by_another_process(
    settings: PersistenceSettings,
) -> None:
    log = LogBuilder()
    log.turn("one")
    mine, theirs = open_backend(settings), open_backend(settings)
    mine.prepare()
    mine.append(SessionInfo("s", 1.0), log.events, durable=True)
    assert mine.claim("s")
    assert not theirs.claim("s")
    with pytest.raises(SessionInUseError, match="another process or harness is continuing it"):
        theirs.delete("s")
    assert theirs.tail("s") is not None
    # the holder still appends (its claim is the lock an append would take)
    stored = len(log.events)
    log.turn("two")
    mine.append(SessionInfo("s", 1.0), log.events[stored:], durable=True)
    mine.release("s")
    assert theirs.claim("s")
    theirs.release("s")
    assert theirs.delete("s")
    assert mine.claim("gone")  # a session not stored that no one claims is free
    mine.release("gone")
    for backend in (mine, theirs):
        backend.close()


def test_dsh_run_continue_is_refused_while_another_dsh_continues_the_session(
    settings: PersistenceSettings, tmp_path: Path
) -> None:
    """A real second process: a program holds the session (resumed, idle); `dsh run
    --continue` exits 1 saying so, before any model call (its model is unreachable:
    a call would fail with a connection error instead)."""
    session_id = anyio.run(stored_session, settings, tmp_path)  # --continue runs there
    (tmp_path / "dsh.yml").write_text(
        f"persistence: {{backend: {settings.backend}, directory: '{settings.directory}'}}\n"
        "models: {m: {provider: openai-compatible, base_url: 'http://127.0.0.1:9', model: m}}\n"
    )
    env = {
        **os.environ,
        "DSH_LOAD_PLUGINS": "persistence",
        "DSH_PERSISTENCE_DIR": str(settings.session_directory()),
    }
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, session_id],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        done = subprocess.run(
            [sys.executable, "-m", "dsh.cli", "-m", UNREACHABLE, "run", "--continue", "what?"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        holder.communicate("", timeout=30)
    assert done.returncode == 1, done.stderr
    in_use = f"session {session_id!r} is in use: another process or harness is continuing it"
    assert in_use in done.stderr
    assert "connect" not in done.stderr.lower()


UNREACHABLE = "openai-compatible:m@http://127.0.0.1:9/v1"
HOLDER = """
import sys, anyio
from dsh.harness import Harness

async def main():
    async with Harness(config="dsh.yml") as harness:
        await harness.agents.resume("holder", sys.argv[1], options={"model": "m"})  # of dsh.yml
        print("holding", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)

anyio.run(main)
"""


def test_loading_many_sessions_keeps_a_bounded_memory_of_their_file_ends(
    tmp_path: Path,
) -> None:
    """A long-running program that reads many stored sessions (``dsh sessions show``,
    a listing service) without writing them keeps at most ``_ENDS_KEPT`` file ends."""
    from dsh_persistence import _jsonl

    log = LogBuilder()
    log.turn("one")
    backend = JsonlBackend(tmp_path)
    count = _jsonl._ENDS_KEPT + 20
    for index in range(count):
        backend.append(SessionInfo(f"s{index}", 1.0), log.events, durable=False)
    backend.forget("s0")
    fresh = JsonlBackend(tmp_path)
    for index in range(count):
        assert fresh.load(f"s{index}") is not None
    assert len(fresh._ends) == _jsonl._ENDS_KEPT
    assert "s0" not in fresh._ends and f"s{count - 1}" in fresh._ends  # the oldest went


def test_claim_files_leave_nothing_behind_and_take_a_file_replaced_under_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's claims are lock files beside the database: removed when released, and a
    claimer whose file was removed (and made again) between its open and its lock takes
    the new file, not the removed one no one else can see."""
    from dsh_persistence import _claims

    claims = _claims.ClaimFiles(tmp_path / "db-claims")
    assert claims.claim("s")
    assert claims.path("s").exists()
    claims.release("s")
    assert list((tmp_path / "db-claims").iterdir()) == []

    real = _claims.try_lock_file
    seen: list[int] = []

    def released_meanwhile(fd: int) -> bool:
        if not seen:  # the holder removes the file just before this claimer locks it
            os.unlink(claims.path("s"))
        seen.append(os.fstat(fd).st_ino)
        return real(fd)

    monkeypatch.setattr(_claims, "try_lock_file", released_meanwhile)
    assert claims.claim("s")
    assert len(seen) == 2  # tried again, on the file made anew
    assert claims.path("s").exists()
    monkeypatch.undo()
    other = _claims.ClaimFiles(tmp_path / "db-claims")
    assert not other.claim("s")  # the claim is on the file others see
    claims.close()
    assert other.claim("s")
    other.close()


@pytest.mark.asyncio_only("an asyncio task cancelled by task.cancel()")
async def test_a_resume_cancelled_by_asyncio_while_its_claim_runs_holds_nothing(
    settings: PersistenceSettings,
) -> None:
    # asyncio's own cancellation (wait_for, task.cancel()) does not wait for the worker
    # thread the claim runs in: the claim it still takes is let go, so the session is
    # not left claimed by nobody (a later resume here was refused as "another process")
    import asyncio
    import threading

    sid = await stored_session(settings)
    async with harness_over(settings, ScriptedModel([text("again")])) as h:
        backend = (await h.relay.session_persistence()).backend
        claim, release = backend.claim, backend.release
        entered, go, released = threading.Event(), threading.Event(), threading.Event()

        def slow_claim(session_id: str) -> bool:
            entered.set()
            go.wait(10)
            return bool(claim(session_id))

        def recorded_release(session_id: str) -> None:
            release(session_id)
            released.set()

        backend.claim, backend.release = slow_claim, recorded_release
        task = asyncio.ensure_future(h.agents.resume("a", sid))
        await anyio.to_thread.run_sync(entered.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        go.set()
        assert await anyio.to_thread.run_sync(released.wait, 10)
        backend.claim = claim
        assert h.agents.list() == []
        agent = await h.agents.resume("b", sid)
        events = await run_turn(agent, "hi")
        assert events[-1].type == "turn/end" and events[-1].data["reason"] == "completed"
