"""A rule that keeps a file from being read (deny or ask on ``read``) keeps ``grep`` from
reading it too: a rule written for one tool must not leak through another."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import dsh_permissions
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh.testing import tool_calls as calls

pytestmark = pytest.mark.plugins("permissions")


async def grep_results(workspace: Path, rules: dict[str, Any], *paths: str) -> list[str]:
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("TOKEN = None\n")
    (workspace / ".env").write_text("TOKEN=hunter2\n")
    script = [
        calls(*((f"grep#{n}", {"pattern": "TOKEN", "path": p}) for n, p in enumerate(paths))),
        text("done"),
    ]
    plugins = [("permissions", dsh_permissions)]
    options = {"model": "scripted", "permissions": rules}
    async with scripted_harness(
        ScriptedModel(script), plugins=plugins, load_entry_points=False, workspace=workspace
    ) as harness:
        agent = await harness.agents.create("a", options=options)
        with anyio.fail_after(10):
            events = await run_turn(agent, "find the token")
    return [e.data["content"] for e in events if e.type == "tool/result"]


@pytest.mark.parametrize("action", ["deny", "ask"])
async def test_a_read_rule_keeps_grep_out_of_the_file(tmp_path: Path, action: str) -> None:
    found = await grep_results(tmp_path, {action: ["read(.env)"]}, ".env", ".", "src")
    on_env, on_root, on_src = found
    assert on_env.startswith("Permission denied") and "hunter2" not in on_env
    assert on_root.startswith("Permission denied") and "hunter2" not in on_root
    assert "src/a.py:1: TOKEN = None" in on_src  # a directory without it is searched


async def test_allowing_read_does_not_widen_grep(tmp_path: Path) -> None:
    found = await grep_results(tmp_path, {"allow": ["read(.env)"], "deny": ["grep(.env)"]}, ".env")
    assert found[0].startswith("Permission denied")
