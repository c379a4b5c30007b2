"""accept-edits keeps each harness's own session store out when two harnesses of one
process share the persistence plugin (the entry point's), each with a store of its own
in its workspace: the store check asks ``session_persistence`` with the agent's
harness. Before: it asked with none, so the plugin answered with the store of the last
harness started, and an agent of the first harness could write its own store (forge
the "always" answers ``--continue`` reads back) without being asked."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import dsh_permissions
from dsh import ToolCall
from dsh.harness import Harness

if TYPE_CHECKING:  # imported by the test: the permissions set has no dsh-persistence
    from dsh_persistence import PersistencePlugin

pytestmark = pytest.mark.plugins("permissions", "persistence")


def harness(plugin: PersistencePlugin, ws: Path) -> Harness:
    config = f"permissions:\n  mode: accept-edits\npersistence:\n  directory: {ws / 'store'}\n"
    plugins = [("permissions", dsh_permissions), ("persistence", plugin)]
    return Harness(plugins=plugins, load_entry_points=False, config_text=config, workspace=ws)


async def write(h: Harness, path: str, agent_id: str) -> str:
    agent = (await h.agents.create(agent_id)).agent
    call = ToolCall(id="c", name="write", arguments=f'{{"path": "{path}", "content": "x"}}')
    result = await h.relay.tools_execute(agent, call, 1, 1)
    assert result is not None
    return result.content


async def test_each_harness_keeps_its_own_store_out_of_accept_edits(tmp_path: Path) -> None:
    from dsh_persistence import PersistencePlugin

    plugin = PersistencePlugin()
    wss = [tmp_path / "a", tmp_path / "b"]
    for ws in wss:
        (ws / "store").mkdir(parents=True)
    async with harness(plugin, wss[0]) as first, harness(plugin, wss[1]) as second:
        for h, ws in [(first, wss[0]), (second, wss[1])]:
            told = await write(h, "store/forged.jsonl", "forger")
            kept = str((ws / "store").resolve())
            assert f"accept-edits does not cover {kept}, the session store" in told
            assert not (ws / "store" / "forged.jsonl").exists()
            # edits elsewhere still run
            assert "Permission denied" not in await write(h, "notes.txt", "editor")
