"""An agent may have its own workspace (``agents.create(..., workspace=...)``): a
service gives each user a directory, and one user's agent cannot read another's files
(found by the second embedding study: ``options={"workspace": ...}`` was ignored and
every agent shared the harness's directory)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from dsh import DshError
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls


async def test_each_agent_works_in_its_own_directory(tmp_path: Path) -> None:
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    alice.mkdir()
    bob.mkdir()
    (bob / "secret.txt").write_text("bob's")
    model = ScriptedModel(
        [
            tool_calls(("bash", {"command": "pwd"}), ("read", {"path": "../bob/secret.txt"})),
            text("done"),
        ]
    )
    async with scripted_harness(model, load_entry_points=False, workspace=tmp_path) as h:
        agent = await h.agents.create("alice", options={"model": "scripted"}, workspace="alice")
        assert agent.agent.workspace == alice.resolve()
        with anyio.fail_after(30):
            events = await run_turn(agent, "go")
    pwd, read = [e.data for e in events if e.type == "tool/result"]
    assert pwd["content"].splitlines()[0] == str(alice.resolve())
    assert read["is_error"] and "outside the workspace" in read["content"]
    assert "bob's" not in read["content"]


async def test_a_workspace_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    async with scripted_harness(
        ScriptedModel([]), load_entry_points=False, workspace=tmp_path
    ) as h:
        with pytest.raises(DshError) as caught:
            await h.agents.create("a", options={"model": "scripted"}, workspace="missing")
        assert h.agents.list() == []
    assert str(caught.value) == (
        f"agent 'a': workspace {str((tmp_path / 'missing').resolve())!r} is not a directory"
    )
