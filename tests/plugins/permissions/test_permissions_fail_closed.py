"""Fail closed: whatever goes wrong inside the plugin, the call is denied with a reason,
and a decision that cannot be logged is never an allow."""

from __future__ import annotations

from typing import Any

import pytest
from permissions_util import FakeAgent, make_tools

import dsh_permissions
import dsh_permissions._plugin as plugin_module
from dsh import ToolCall, create_plugin_manager, hookimpl
from dsh.session import Session
from dsh_permissions import PermissionAnswer

pytestmark = pytest.mark.plugins("permissions")

READ = ToolCall(id="c1", name="read", arguments='{"path": "a.txt"}')


async def execute(layout, call: ToolCall = READ, **options: Any) -> tuple[Any, FakeAgent, list]:
    pm = create_plugin_manager([("permissions", dsh_permissions)], load_entry_points=False)
    ran: list[str] = []
    agent = FakeAgent(layout.ws, make_tools(ran), pm.relay, options)
    result = await pm.relay.tools_execute(agent, call, 1, 1)
    return result, agent, ran


def decisions(agent: FakeAgent) -> list[dict[str, Any]]:
    return [e.data for e in agent.session.events if e.type == "permission/decision"]


async def test_the_baseline_call_is_allowed(layout):
    result, agent, ran = await execute(layout)

    assert result is not None and result.content == "ran" and ran == ["read a.txt"]
    assert [d["decision"] for d in decisions(agent)] == ["allow"]


async def test_an_exception_while_deciding_denies_with_the_reason(layout, monkeypatch):
    def broken(*args: Any) -> None:
        raise RuntimeError("rule store unreachable")

    monkeypatch.setattr(plugin_module, "decide", broken)

    result, agent, ran = await execute(layout)

    assert ran == []
    assert result is not None and result.is_error
    assert "RuntimeError: rule store unreachable" in result.content
    assert "fails closed" in result.content
    (decision,) = decisions(agent)
    assert decision["decision"] == "deny"
    assert "rule store unreachable" in decision["reason"]


async def test_a_broken_tool_registry_denies(layout):
    class Broken:
        def get(self, name: str) -> None:
            raise KeyError(name)

    pm = create_plugin_manager([("permissions", dsh_permissions)], load_entry_points=False)
    agent = FakeAgent(layout.ws, make_tools([]), pm.relay, {})
    agent.tools = Broken()  # type: ignore[assignment]

    result = await pm.relay.tools_execute(agent, READ, 1, 1)

    assert result is not None and result.is_error and "KeyError" in result.content


async def test_a_decision_that_cannot_be_logged_is_a_deny(layout):
    pm = create_plugin_manager([("permissions", dsh_permissions)], load_entry_points=False)
    ran: list[str] = []
    agent = FakeAgent(layout.ws, make_tools(ran), pm.relay, {})

    class FullDisk(Session):
        def emit(self, *args: Any, **kwargs: Any) -> Any:
            raise OSError("disk full")

    agent.session = FullDisk("full")

    result = await pm.relay.tools_execute(agent, READ, 1, 1)

    assert ran == []
    assert result is not None and result.is_error
    assert "could not be logged (OSError: disk full)" in result.content


async def test_options_that_are_not_a_mapping_fail_closed(layout):
    result, agent, ran = await execute(layout, permissions=["allow", "everything"])

    assert ran == [] and result is not None and result.is_error
    (decision,) = decisions(agent)
    assert decision["decision"] == "deny"
    assert (
        "InvalidSettings: the permissions settings of agent 'corpus' are invalid"
        in (decision["reason"])
    )


async def test_malformed_grants_in_the_log_are_ignored(layout):
    pm = create_plugin_manager([("permissions", dsh_permissions)], load_entry_points=False)
    ran: list[str] = []
    agent = FakeAgent(layout.ws, make_tools(ran), pm.relay, {})
    forged = [None, {"tool": "write"}, {"tool": "write", "kind": "path", "value": 7}, "x"]
    agent.session.append("permission/decision", {"answer": "always", "remember": forged})
    call = ToolCall(id="c2", name="write", arguments='{"path": "a.txt"}')

    result = await pm.relay.tools_execute(agent, call, 1, 1)

    assert ran == [] and result is not None and result.is_error
    assert "no front end" in result.content


@pytest.mark.parametrize("choice", ["no", "DENY", None, "", "yes"])
def test_an_answer_with_an_unknown_choice_cannot_be_built(choice: Any):
    with pytest.raises(ValueError, match="must be one of once, always, deny"):
        PermissionAnswer(choice)


@pytest.mark.parametrize("choice", ["no", "DENY", None])
async def test_a_front_end_answering_an_unknown_choice_denies(layout, choice: Any):
    class Sloppy:
        @hookimpl(optionalhook=True)
        def permission_ask(self) -> PermissionAnswer:
            return PermissionAnswer(choice)  # raises: the front end fails

    class Altered:
        @hookimpl(optionalhook=True)
        def permission_ask(self) -> PermissionAnswer:
            answer = PermissionAnswer.once()
            object.__setattr__(answer, "choice", choice)  # past the check
            return answer

    for front_end in (Sloppy(), Altered()):
        pm = create_plugin_manager(
            [("permissions", dsh_permissions), ("ui", front_end)], load_entry_points=False
        )
        ran: list[str] = []
        agent = FakeAgent(
            layout.ws, make_tools(ran), pm.relay, {"permissions": {"mode": "default"}}
        )
        call = ToolCall(id="c1", name="bash", arguments='{"command": "rm -rf build"}')
        result = await pm.relay.tools_execute(agent, call, 1, 1)

        assert ran == []
        assert result is not None and result.is_error
        assert [d["decision"] for d in decisions(agent)] == ["deny"]


async def test_a_path_typed_argument_is_checked_like_text(layout):
    from pathlib import Path

    from dsh.tools import ToolRegistry, tool

    ran: list[str] = []

    @tool(path_args=("path",))
    def peek(path: Path) -> str:
        "Peek at a file."
        ran.append(str(path))
        return "ran"

    registry = ToolRegistry()
    registry.add("t", peek)
    pm = create_plugin_manager([("permissions", dsh_permissions)], load_entry_points=False)
    for arguments, expected in (('{"path": "src/a.py"}', "allow"), ('{"path": ".env"}', "deny")):
        options = {"permissions": {"deny": ["peek(.env)"]}}
        agent = FakeAgent(layout.ws, registry, pm.relay, options)
        call = ToolCall(id="c1", name="peek", arguments=arguments)
        await pm.relay.tools_execute(agent, call, 1, 1)
        assert [d["decision"] for d in decisions(agent)] == [expected]


async def test_arguments_that_cannot_be_read_are_denied_as_an_arguments_problem(layout):
    call = ToolCall(id="c1", name="read", arguments='{"path": "a.txt", "type": "string"}')
    result, agent, ran = await execute(layout, call)

    assert ran == [] and result is not None and result.is_error
    assert result.content.startswith("'read' was not run: the arguments do not fit the tool")
    assert "Permission denied" not in result.content  # the model should fix them, not give up
    assert [d["decision"] for d in decisions(agent)] == ["deny"]
