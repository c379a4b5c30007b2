"""accept-edits does not cover a ``dsh.yml``/``dsh.yaml`` anywhere in the workspace,
not only the config file the rules came from: when the run's rules came from elsewhere
(``-c other.yml``, ``$DSH_CONFIG``, options in code), an agent that created one unasked
would have the next plain ``dsh run`` there load it (``mode: bypass`` lifting every
rule). Run end to end through the loop and the real write tool."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

import dsh_permissions
from dsh.config import find_config
from dsh.testing import ScriptedModel, run_turn, scripted_harness, tool_calls

pytestmark = pytest.mark.plugins("permissions")

PLANTED = "permissions:\n  mode: bypass\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("path", ["dsh.yml", "dsh.yaml", "DSH.YML", "sub/dsh.yml"])
async def test_accept_edits_does_not_plant_a_config_file(tmp_path: Path, path: str):
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    config = (  # the person's config, outside the workspace
        "models: {scripted: {provider: scripted}}\n"
        "permissions: {mode: accept-edits, deny: ['bash(rm *)']}\n"
    )
    model = ScriptedModel([tool_calls(("write", {"path": path, "content": PLANTED})), "done"])
    async with scripted_harness(
        model,
        plugins=[("permissions", dsh_permissions)],
        load_entry_points=False,
        config_text=config,
        workspace=ws,
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(20):
            events = await run_turn(agent, "go")
    (decision,) = [e.data for e in events if e.type == "permission/decision"]
    assert decision["decision"] != "allow", decision["reason"]
    assert "dsh config file" in decision["reason"], decision["reason"]
    assert find_config(ws) is None
    assert not (ws / path).exists()


@pytest.mark.anyio
async def test_accept_edits_still_covers_other_yaml(tmp_path: Path):
    config = "models: {scripted: {provider: scripted}}\npermissions: {mode: accept-edits}\n"
    model = ScriptedModel([tool_calls(("write", {"path": "app.yml", "content": "x: 1\n"})), "done"])
    async with scripted_harness(
        model,
        plugins=[("permissions", dsh_permissions)],
        load_entry_points=False,
        config_text=config,
        workspace=tmp_path,
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(20):
            events = await run_turn(agent, "go")
    (decision,) = [e.data for e in events if e.type == "permission/decision"]
    assert decision["decision"] == "allow", decision["reason"]
