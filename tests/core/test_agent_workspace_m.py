"""An agent's own workspace, beyond test_agent_workspace.py (found by a mutation review):
``resume`` takes one as ``create`` does, the path is resolved (``..`` and all), and
only a directory will do."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh import DshError
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text


async def test_a_resumed_agent_works_in_the_workspace_it_is_given(tmp_path: Path) -> None:
    (tmp_path / "alice").mkdir()
    store = InMemoryPersistence()
    model = ScriptedModel([text("one")])
    plugins = [("mem", store)]
    async with scripted_harness(model, plugins=plugins, workspace=tmp_path) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
        session_id = agent.session.id
        await agent.dispose()
        resumed = await h.agents.resume("a", session_id, workspace="alice")
        assert resumed.agent.workspace == (tmp_path / "alice").resolve()


async def test_the_workspace_is_resolved(tmp_path: Path) -> None:
    (tmp_path / "alice").mkdir()
    (tmp_path / "bob").mkdir()
    async with scripted_harness(ScriptedModel([]), workspace=tmp_path) as h:
        agent = await h.agents.create("a", options={"model": "scripted"}, workspace="bob/../alice")
        assert agent.agent.workspace == (tmp_path / "alice").resolve()
        assert ".." not in agent.agent.workspace.parts


async def test_a_file_is_not_a_workspace(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a directory")
    async with scripted_harness(ScriptedModel([]), workspace=tmp_path) as h:
        with pytest.raises(DshError, match="is not a directory"):
            await h.agents.create("a", options={"model": "scripted"}, workspace="notes.txt")
        assert h.agents.list() == []
