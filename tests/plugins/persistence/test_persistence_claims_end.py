"""A claim ends with its agent however the agent ends: disposed after a turn that failed
(a model error, or a model that raised), or left to the harness's exit, idle or mid-turn.
Once it has ended another process resumes the session, and no lock file is left. And a
claim let go ends when its lock file can no longer be looked at."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from claims_support import files_of, harness_over
from test_review_s12_claims import resumable_elsewhere

from dsh.messages import ModelRequest
from dsh.testing import Reply, ScriptedModel, fail, hang, run_turn, text
from dsh_persistence import PersistenceSettings, SqliteBackend
from dsh_persistence._claims import ClaimFiles

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
]


def lock_files(settings: PersistenceSettings) -> list[str]:
    """The store's lock files (claims', turns'; none for PostgreSQL)."""
    return [name for name in files_of(settings) if name.endswith((".claim", ".lock", ".turn"))]


def raising(request: ModelRequest) -> str:
    raise RuntimeError("a model's own bug")


@pytest.mark.parametrize("answer", [fail(), raising], ids=["model error", "model raised"])
async def test_a_turn_that_failed_then_dispose_frees_the_session(
    any_store: PersistenceSettings, answer: object
) -> None:
    async with harness_over(any_store, ScriptedModel([text("one"), answer])) as h:  # type: ignore[list-item]
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "first")
        await run_turn(agent, "second")
        await agent.dispose()
        assert lock_files(any_store) == []
        assert await resumable_elsewhere(any_store, agent.session.id)


@pytest.mark.parametrize("mid_turn", [False, True], ids=["idle", "mid-turn"])
async def test_the_harness_exit_frees_its_agents_sessions(
    any_store: PersistenceSettings, mid_turn: bool
) -> None:
    asked = anyio.Event()

    def hanging(request: ModelRequest) -> Reply:
        asked.set()
        return hang("thinking")

    async with harness_over(any_store, ScriptedModel([text("one"), hanging])) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "first")
        if mid_turn:
            agent.send("second")
            with anyio.fail_after(10):
                await asked.wait()
    assert lock_files(any_store) == []
    assert await resumable_elsewhere(any_store, agent.session.id)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts /proc/self/fd")
def test_sqlite_claims_end_when_their_directory_cannot_be_looked_in(tmp_path: Path) -> None:
    """Its ``-claims/`` directory replaced by a file while claims were held: release and
    close raised ``NotADirectoryError`` as each looked whether its lock file was still
    there, and left every claim's file open, its lock held, for the process's life."""
    backend = SqliteBackend(tmp_path / "sessions.sqlite3")
    before = len(os.listdir("/proc/self/fd"))
    assert backend.claim("a")
    assert backend.claim("b")
    claims = tmp_path / "sessions.sqlite3-claims"
    claims.rename(tmp_path / "moved")
    claims.write_text("")

    backend.release("a")
    backend.close()

    assert len(os.listdir("/proc/self/fd")) == before
    assert sorted(path.name for path in (tmp_path / "moved").iterdir()) == sorted(
        ClaimFiles(tmp_path / "moved").path(session).name for session in "ab"
    )  # not where it looked: left
