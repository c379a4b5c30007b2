"""What the per-call check keeps between calls (bench/README.md, "Eighteenth session:
permission check") must not change a decision or its logged event: each event has
parts of its own, and a kept verdict is found again only for the same tool facts."""

from __future__ import annotations

from typing import Any

import pytest
from permissions_util import FakeAgent, make_tools

import dsh_permissions
from dsh import ToolCall
from dsh.tools import ToolRegistry, tool

pytestmark = pytest.mark.plugins("permissions")


def _events(agent: Any) -> list[dict[str, Any]]:
    return [e.data for e in agent.session.events if e.type == "permission/decision"]


async def test_each_decision_event_has_parts_of_its_own(layout):
    plugin = dsh_permissions.Permissions({"allow": ["fetch"]})
    agent = FakeAgent(layout.ws, make_tools([]), None, {})
    for index in range(2):
        call = ToolCall(id=f"c{index}", name="fetch", arguments='{"url": "x"}')
        assert await plugin.tools_execute(agent, call, 1, index) is None
    first, second = _events(agent)
    expected = [{"kind": "tool", "value": "", "decision": "allow", "by": "rule"}]
    assert first["parts"] == second["parts"] == [{**expected[0], "rule": "allow: fetch"}]
    assert first["parts"] is not second["parts"]
    assert first["parts"][0] is not second["parts"][0]
    first["parts"][0]["value"] = "changed by a reader"
    third = ToolCall(id="c2", name="fetch", arguments='{"url": "x"}')
    assert await plugin.tools_execute(agent, third, 1, 2) is None
    assert _events(agent)[2]["parts"][0]["value"] == ""
    assert [e["call_id"] for e in _events(agent)] == ["c0", "c1", "c2"]


async def test_a_tool_registered_anew_is_decided_by_its_new_facts(layout):
    """The kept verdict of a call naming no path (found by the identity of the tool's
    facts) is not reused once the registry's tool changes what it declares."""
    plugin = dsh_permissions.Permissions()
    agent = FakeAgent(layout.ws, make_tools([]), None, {})
    call = ToolCall(id="c", name="fetch", arguments='{"url": "x"}')
    assert await plugin.tools_execute(agent, call, 1, 1) is None  # changes nothing
    assert await plugin.tools_execute(agent, call, 1, 2) is None

    @tool(mutating=True)
    def fetch(url: str) -> str:
        "Fetch, now declared as changing things."
        return url

    agent.tools = ToolRegistry()
    agent.tools.add("corpus", fetch)
    denied = await plugin.tools_execute(agent, call, 1, 3)
    assert denied is not None  # asked about, and no front end can ask
    assert "no rule allows" in _events(agent)[-1]["reason"]
