"""dsh-permissions through the real agent loop, with the scripted model (behaviours
47-49): a denied tool never runs, the model reads the reason in its next request, the
turn goes on, and every decision is in the session log.

The `dsh chat` permission prompt (the terminal front end, a ``tools_approval`` impl of
the core) is tested under a pseudo-terminal in tests/cli; these tests use front-end
plugins written for the purpose instead (test_permissions_core_front_ends.py: front ends
of the core's hook)."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from permissions_util import Asker, CorpusTools

import dsh_permissions
from dsh import ModelRequest, ToolCall, ToolResult, ToolResultMessage, hookimpl
from dsh.testing import (
    ErrorRecorder,
    ScriptedModel,
    check_invariants,
    run_turn,
    scripted_harness,
    text,
)
from dsh.testing import tool_calls as calls
from dsh_permissions import PermissionAnswer

pytestmark = pytest.mark.plugins("permissions")


def options(**permissions: Any) -> dict[str, Any]:
    return {"model": "scripted", "permissions": permissions}


def decisions(events: list[Any]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.type == "permission/decision"]


def results(events: list[Any]) -> dict[str, dict[str, Any]]:
    return {e.data["call_id"]: e.data for e in events if e.type == "tool/result"}


def last_tool_message(request: ModelRequest) -> ToolResultMessage:
    message = request.messages[-1]
    assert isinstance(message, ToolResultMessage)
    return message


async def run(
    script: list[Any], agent_options: dict[str, Any], *extra: object, prompt: str = "go"
) -> tuple[list[Any], ScriptedModel, CorpusTools]:
    model = ScriptedModel(script)
    tools = CorpusTools()
    plugins = [("permissions", dsh_permissions), ("tools", tools), *extra]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        agent = await harness.agents.create("a", options=agent_options)
        with anyio.fail_after(10):
            events = await run_turn(agent, prompt)
    assert check_invariants(events) == []
    return events, model, tools


async def test_b47_a_denied_tool_never_runs_and_the_model_reads_why():
    script = [calls(("write#w1", {"path": "/etc/passwd", "content": "x"})), text("understood")]

    events, model, tools = await run(script, options(deny=["write(/etc/**)"]))

    assert tools.ran == []
    seen = last_tool_message(model.requests[1])
    assert seen.is_error and seen.call_id == "w1"
    assert "Permission denied" in seen.content
    assert "deny: write(/etc/**)" in seen.content
    assert [e.data["reason"] for e in events if e.type == "turn/end"] == ["completed"]
    (decision,) = decisions(events)
    assert decision["tool"] == "write" and decision["call_id"] == "w1"
    assert decision["decision"] == "deny" and decision["mode"] == "default"
    assert decision["rule"] == "deny: write(/etc/**)"
    assert decision["front_end"] is None and decision["answer"] is None
    assert decision["parts"] == [
        {
            "kind": "path",
            "value": "/etc/passwd",
            "decision": "deny",
            "by": "rule",
            "rule": "deny: write(/etc/**)",
        }
    ]


async def test_b47_the_decision_is_logged_between_the_call_and_its_result():
    script = [calls(("read#r", {"path": "a.txt"}), ("write#w", {"path": "/etc/x"})), text("ok")]

    events, _, tools = await run(script, options(deny=["write(/etc/**)"]))

    assert tools.ran == ["read a.txt"]
    order = [(e.type, e.data.get("call_id", e.data.get("id"))) for e in events]
    kinds = [
        kind for kind in order if kind[0] in ("tool/call", "permission/decision", "tool/result")
    ]
    assert kinds == [
        ("tool/call", "r"),
        ("permission/decision", "r"),
        ("tool/result", "r"),
        ("tool/call", "w"),
        ("permission/decision", "w"),
        ("tool/result", "w"),
    ]
    assert [d["decision"] for d in decisions(events)] == ["allow", "deny"]
    assert results(events)["r"]["is_error"] is False


async def test_b47_the_turn_goes_on_after_a_denial():
    script = [
        calls(("bash#b1", {"command": "rm -rf /"})),
        calls(("bash#b2", {"command": "git status"})),
        text("done"),
    ]

    events, model, tools = await run(
        script, options(allow=["bash(git status*)"], deny=["bash(rm *)"])
    )

    assert tools.ran == ["bash git status"]
    assert len(model.requests) == 3
    assert results(events)["b1"]["is_error"] is True
    assert results(events)["b2"]["content"] == "ran"


async def test_b49_chaining_cannot_smuggle_a_denied_command_through_the_loop():
    script = [
        calls(("bash#b1", {"command": "git status; rm -rf /"})),
        calls(("bash#b2", {"command": "git status $(rm -rf ~)"})),
        calls(("bash#b3", {"command": "git status && git diff"})),
        text("done"),
    ]
    rules = options(allow=["bash(git status*)", "bash(git diff*)"], deny=["bash(rm *)"])

    events, _, tools = await run(script, rules)

    assert tools.ran == ["bash git status && git diff"]
    assert [(d["call_id"], d["decision"], d["rule"]) for d in decisions(events)] == [
        ("b1", "deny", "deny: bash(rm *)"),
        ("b2", "deny", "deny: bash(rm *)"),
        ("b3", "allow", "allow: bash(git status*)"),
    ]


async def test_b48_ask_with_no_front_end_is_a_deny():
    script = [calls(("write#w", {"path": "notes.txt"})), text("ok")]

    events, model, tools = await run(script, options())

    assert tools.ran == []
    seen = last_tool_message(model.requests[1]).content
    assert "needs a person's approval" in seen and "no front end" in seen
    (decision,) = decisions(events)
    assert decision["decision"] == "deny" and decision["front_end"] is None
    assert "no rule allows" in decision["asked"]


@pytest.mark.parametrize(
    ("front_end", "said"),
    [
        (Asker(error=RuntimeError("terminal gone")), "'asker' failed: RuntimeError: terminal gone"),
        (Asker(answer=None), "no front end answered"),
        (Asker(answer="yes"), "answered str, not a PermissionAnswer"),  # type: ignore[arg-type]
    ],
    ids=["raising", "passing", "wrong-type"],
)
async def test_b48_a_front_end_that_cannot_answer_denies(front_end, said):
    script = [calls(("write#w", {"path": "notes.txt"})), text("ok")]

    events, model, tools = await run(script, options(), ("asker", front_end))

    assert tools.ran == []
    assert len(front_end.requests) == 1
    assert said in last_tool_message(model.requests[1]).content
    (decision,) = decisions(events)
    assert decision["decision"] == "deny"


async def test_b48_a_front_end_answering_the_wrong_type_is_reported_too():
    """Was: only denied, where a ``tools_approval`` impl answering the wrong type (and a
    ``permission_ask`` impl raising) is reported too: ``relay.report``, a HookError
    naming the plugin and the hook."""
    script = [calls(("write#w", {"path": "notes.txt"})), text("ok")]
    errors = ErrorRecorder()
    front_end = Asker(answer="yes")  # type: ignore[arg-type]

    events, _, tools = await run(script, options(), ("asker", front_end), errors)

    assert tools.ran == []
    (decision,) = decisions(events)
    assert decision["decision"] == "deny"
    (failure,) = errors.failures
    assert failure.plugin == "asker" and failure.hook == "permission_ask"
    # the impl named as dsh names one that raised (relay.failure)
    assert failure.impl == "Asker.permission_ask(request)", failure.impl
    assert "returned str where PermissionAnswer is expected" in str(failure)


async def test_b48_no_answer_within_the_timeout_denies():
    class Slow:
        @hookimpl(optionalhook=True)
        async def permission_ask(self) -> PermissionAnswer:
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

    script = [calls(("write#w", {"path": "notes.txt"})), text("ok")]

    events, model, tools = await run(script, options(ask_timeout=0.05), ("slow", Slow()))

    assert tools.ran == []
    assert "no answer came within 0.05 seconds" in last_tool_message(model.requests[1]).content
    assert [e.data["reason"] for e in events if e.type == "turn/end"] == ["completed"]


async def test_an_abort_while_a_person_is_asked_logs_a_deny_and_runs_nothing():
    asked = anyio.Event()

    class Waiting:
        @hookimpl(optionalhook=True)
        async def permission_ask(self) -> PermissionAnswer:
            asked.set()
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

    model = ScriptedModel([calls(("write#w", {"path": "notes.txt"})), text("ok")])
    tools = CorpusTools()
    plugins = [("permissions", dsh_permissions), ("tools", tools), ("ui", Waiting())]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        agent = await harness.agents.create("a", options=options(ask_timeout=None))
        with anyio.fail_after(10):
            agent.send("go")
            await asked.wait()
            agent.abort()
            await agent.when_idle()
        events = list(agent.session.events)

    assert tools.ran == []
    assert check_invariants(events) == []
    (decision,) = decisions(events)
    assert decision["decision"] == "deny"
    assert "aborted before the call was decided" in decision["reason"]
    types = [e.type for e in events]
    assert types.index("tool/call") < types.index("permission/decision")
    assert types.index("permission/decision") < types.index("tool/result")
    assert [e.data["reason"] for e in events if e.type == "turn/end"] == ["aborted"]


async def test_a_denial_from_the_user_reaches_the_model_with_their_message():
    asker = Asker(PermissionAnswer.deny("use the staging branch"))
    script = [calls(("bash#b", {"command": "git push"})), text("ok")]

    events, model, tools = await run(script, options(), ("asker", asker))

    assert tools.ran == []
    assert "use the staging branch" in last_tool_message(model.requests[1]).content
    (request,) = asker.requests
    assert request.tool == "bash" and request.call_id == "b"
    assert request.subjects == (("command", "git push"),)
    assert request.remember == (("command", "git push"),)
    (decision,) = decisions(events)
    assert (decision["answer"], decision["front_end"]) == ("deny", "asker")


async def test_allow_once_runs_the_call_and_asks_again_next_time():
    asker = Asker(PermissionAnswer.once())
    script = [
        calls(("bash#b1", {"command": "make"})),
        calls(("bash#b2", {"command": "make"})),
        text("ok"),
    ]

    events, _, tools = await run(script, options(), ("asker", asker))

    assert tools.ran == ["bash make", "bash make"]
    assert len(asker.requests) == 2
    assert [(d["decision"], d["answer"]) for d in decisions(events)] == [
        ("allow", "once"),
        ("allow", "once"),
    ]


async def test_an_explicit_ask_rule_asks_every_time_even_after_always():
    asker = Asker(PermissionAnswer.always())
    script = [
        calls(("bash#b1", {"command": "git push"})),
        calls(("bash#b2", {"command": "git push"})),
        text("ok"),
    ]

    events, _, tools = await run(script, options(ask=["bash(git push*)"]), ("asker", asker))

    assert tools.ran == ["bash git push", "bash git push"]
    assert len(asker.requests) == 2
    assert asker.requests[0].rule == "ask: bash(git push*)"
    assert asker.requests[0].remember == ()
    assert [d["remember"] for d in decisions(events)] == [[], []]


async def test_the_plugin_runs_before_plain_tools_execute_impls():
    class Executor:
        """A plain impl that answers every call (a cache, a remote runner)."""

        def __init__(self) -> None:
            self.seen: list[str] = []

        @hookimpl
        def tools_execute(self, call: ToolCall) -> ToolResult:
            self.seen.append(call.id)
            return ToolResult(call_id=call.id, content="served")

    executor = Executor()
    script = [calls(("write#w", {"path": "/etc/x"}), ("read#r", {"path": "x"})), text("ok")]

    events, _, _ = await run(script, options(deny=["write(/etc/**)"]), ("executor", executor))

    assert executor.seen == ["r"]
    assert results(events)["r"]["content"] == "served"


async def test_plan_mode_tells_the_model_it_is_in_plan_mode():
    script = [calls(("edit#e", {"path": "src/a.py"}), ("read#r", {"path": "src/a.py"})), "ok"]

    events, _, tools = await run(script, options(mode="plan", allow=["edit"]))

    assert tools.ran == ["read src/a.py"]
    assert "plan mode" in results(events)["e"]["content"]
    assert [d["mode"] for d in decisions(events)] == ["plan", "plan"]


async def test_bypass_is_logged_as_bypass_and_deny_rules_still_hold(caplog):
    script = [
        calls(("bash#b", {"command": "make clean"}), ("bash#d", {"command": "rm -rf build"})),
        text("ok"),
    ]

    with caplog.at_level(logging.WARNING, logger="dsh_permissions"):
        events, _, tools = await run(script, options(mode="bypass", deny=["bash(rm *)"]))

    assert tools.ran == ["bash make clean"]  # nothing asked about; the denied call not run
    allowed, denied = decisions(events)
    assert (allowed["decision"], allowed["mode"]) == ("allow", "bypass")
    assert "bypass" in allowed["reason"]
    assert (denied["decision"], denied["rule"]) == ("deny", "deny: bash(rm *)")
    assert "deny rules hold in bypass mode" in results(events)["d"]["content"]
    assert any("bypass" in r.getMessage() for r in caplog.records)


async def test_invalid_settings_fail_closed_and_say_why():
    """Settings that turn bad on a live agent (given at creation, the core refuses
    them there: see test_permissions_settings)."""
    script = [calls(("read#r", {"path": "x"})), text("ok")]

    class Spoil:
        @hookimpl
        def agent_request(self, agent: Any) -> None:
            agent.options["permissions"] = {"mode": "yolo"}

    events, model, tools = await run(script, options(), ("spoil", Spoil()))

    assert tools.ran == []
    seen = last_tool_message(model.requests[1]).content
    assert "fails closed" in seen and "mode" in seen
    (decision,) = decisions(events)
    assert decision["decision"] == "deny"


@pytest.mark.parametrize("rule", ["Bash(rm *)", "BASH(rm *)", "Ba*(rm *)"])
async def test_a_rules_tool_name_ignores_case_so_a_deny_rule_never_misses_by_a_capital(rule):
    # written as other agents spell their tools: it must deny, not silently match nothing
    script = [calls(("bash#b1", {"command": "rm -f notes.txt"})), text("ok")]
    events, _, tools = await run(script, options(deny=[rule], allow=["bash"]))
    assert tools.ran == []
    assert results(events)["b1"]["is_error"]
    assert decisions(events)[0]["decision"] == "deny"
    assert rule in decisions(events)[0]["reason"]
