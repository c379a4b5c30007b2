"""The security review's findings 2, 4 and 6 (session 28) end to end: the real loop, the
real built-in ``bash`` tool, dsh-permissions. ``prlimit rm victim`` removed ``victim``
under ``deny: bash(rm *)``, ``prlimit cat .env`` and ``sh -v .env`` printed ``.env``
under ``deny: read(.env)``; a hard link to ``.env`` cannot be made through ``bash``
(docs/permissions.md, Limits)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import dsh_permissions
from dsh.testing import ScriptedModel, run_turn, scripted_harness, tool_calls

pytestmark = pytest.mark.plugins("permissions")

SECRET = "hunter2-topsecret"


async def _run(ws: Path, command: str, rules: dict[str, Any]) -> tuple[dict[str, Any], str]:
    (ws / "victim").write_text("keep me")
    (ws / "notes.txt").write_text("plain notes\n")
    (ws / ".env").write_text(f"TOKEN={SECRET}\n")
    model = ScriptedModel([tool_calls(("bash", {"command": command})), "done"])
    plugins = [("permissions", dsh_permissions)]
    config = "models: {scripted: {provider: scripted}}\n"
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, config_text=config, workspace=ws
    ) as harness:
        agent = await harness.agents.create(
            "a", options={"model": "scripted", "permissions": rules}
        )
        with anyio.fail_after(20):
            events = await run_turn(agent, "go")
    (decision,) = [e.data for e in events if e.type == "permission/decision"]
    (result,) = [e.data for e in events if e.type == "tool/result"]
    return decision, str(result)


@pytest.mark.parametrize("mode", ["default", "bypass"])
async def test_finding_2_a_denied_command_behind_prlimit_does_not_run(tmp_path, mode):
    rules = {
        "mode": mode,
        "deny": ["bash(rm *)"],
        **({"allow": ["bash"]} if mode == "default" else {}),
    }
    decision, _ = await _run(tmp_path, "prlimit rm victim", rules)
    assert decision["decision"] == "deny", decision["reason"]
    assert (tmp_path / "victim").exists()


async def test_finding_2_a_denied_file_read_behind_prlimit_is_not_shown(tmp_path):
    rules = {"deny": ["read(.env)"], "allow": ["bash"]}
    decision, result = await _run(tmp_path, "prlimit cat .env", rules)
    assert decision["decision"] == "deny", decision["reason"]
    assert SECRET not in result


async def test_finding_2_an_allowed_command_behind_prlimit_runs(tmp_path):
    rules = {"deny": ["read(.env)", "bash(rm *)"], "allow": ["bash"]}
    decision, result = await _run(tmp_path, "prlimit --nofile=64 cat notes.txt", rules)
    assert decision["decision"] == "allow", decision["reason"]
    assert "plain notes" in result


async def test_finding_4_a_shell_given_a_denied_file_as_its_script_is_denied(tmp_path):
    rules = {"deny": ["read(.env)"], "allow": ["bash"]}
    decision, result = await _run(tmp_path, "sh -v .env", rules)
    assert decision["decision"] == "deny", decision["reason"]
    assert SECRET not in result


@pytest.mark.parametrize("command", ["ln .env notes2.txt", "cp -l .env notes2.txt"])
async def test_finding_6_a_hard_link_to_a_denied_file_cannot_be_made(tmp_path, command):
    rules = {"deny": ["read(.env)"], "allow": ["bash"]}
    decision, _ = await _run(tmp_path, command, rules)
    assert decision["decision"] == "deny", decision["reason"]
    assert not (tmp_path / "notes2.txt").exists()
