"""A workspace moved and replaced by a symlink to its new place between two calls
(``mv ws ws2 && ln -s ws2 ws``, by the user or a tool): the kept policy's root was
reused while both paths named the same directory (``os.stat`` follows the link), so it
stayed ``.../ws`` while every path resolved to ``.../ws2/...``: outside the workspace,
no relative rule matched them, and ``read secrets/key`` ran under
``deny: read(secrets/**)`` (a plugin made anew denied it). Review of session 24."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dsh import ToolCall

pytestmark = pytest.mark.plugins("permissions")

RULES = {"allow": ["bash(*)", "read(**)"], "deny": ["read(secrets/**)", "bash(cat secrets/*)"]}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = Path(os.path.realpath(tmp_path)) / "ws"
    (ws / "secrets").mkdir(parents=True)
    (ws / "secrets" / "key").write_text("k\n")
    (ws / "notes.txt").write_text("n\n")
    return ws


def swap(ws: Path) -> None:
    """``mv ws ws2 && ln -s ws2 ws``"""
    os.rename(ws, ws.with_name("ws2"))
    os.symlink(ws.with_name("ws2"), ws)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [("read", {"path": "secrets/key"}), ("bash", {"command": "cat secrets/key"})],
)
async def test_a_workspace_swapped_for_a_symlink_keeps_its_rules(
    ws: Path, name: str, arguments: dict[str, str]
) -> None:
    from permissions_util import FakeAgent, make_tools

    from dsh_permissions._plugin import Permissions

    agent = FakeAgent(ws, make_tools([]), None, {"permissions": RULES})
    agent.harness = None
    plugin = Permissions()

    async def decision(tool: str, args: dict[str, str]) -> str:
        call = ToolCall(id="c1", name=tool, arguments=json.dumps(args))
        return str((await plugin._check(agent, call)).verdict.decision)

    assert await decision("read", {"path": "notes.txt"}) == "allow"  # the policy is kept
    assert await decision(name, arguments) == "deny"
    swap(ws)
    assert await decision(name, arguments) == "deny"
