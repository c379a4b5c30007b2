"""Conformance: behaviours 16-21 of BEHAVIOURS.md: a step's tool calls (order and call ids,
bad arguments, unknown or raising tools, ``tools_execute`` impls, one result per call).

Every test is named after the behaviour it checks (``test_bNN_...``). The tests hold
under any set of installed plugins: logs are compared on the core's event types only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from behaviours_steps_support import MODEL, end, of_type, start, step
from behaviours_tools_support import Toolbox, ran, shape

from dsh import ToolCall, ToolResult, hookimpl
from dsh._relay import HookRelay
from dsh.invariants import check_invariants
from dsh.plugins import create_plugin_manager
from dsh.session import Session, SessionEvent
from dsh.testing import (
    ScriptedModel,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)
from dsh.tools import tool


def results(events: Iterable[SessionEvent]) -> dict[str, str]:
    """Tool result content by call id."""
    return {e.data["call_id"]: e.data["content"] for e in events if e.type == "tool/result"}


class On:
    """Calls ``action(event)`` for every event logged (a ``session_event`` observer)."""

    def __init__(self, action: Any) -> None:
        self.action = action

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:
        self.action(event)


# -- 16-21: tools -----------------------------------------------------------------------


async def test_b16_calls_run_in_the_models_order_with_its_call_ids() -> None:
    box = Toolbox()
    calls = (("echo#zeta", {"text": "one"}), ("add#alpha", '{"b": 2,  "a": 1}'))
    model = ScriptedModel([tool_calls(*calls, ("echo#mid", {"text": "two"})), text("done")])
    async with scripted_harness(model, plugins=[box]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "go")
        answered = ran(("zeta", "echo", False), ("alpha", "add", False), ("mid", "echo", False))
        assert shape(events) == [
            *start(1, "go"),
            *step(1, "", *answered),
            *step(2, "done"),
            *end(1),
        ]
        # one at a time: the async echo finished before the next call started
        assert box.ran == ["echo one", "echo one done", "add 1 2", "echo two", "echo two done"]
        assert [e.data["arguments"] for e in of_type(events, "tool/call")] == [
            *('{"text": "one"}', '{"b": 2,  "a": 1}', '{"text": "two"}')  # as the model sent
        ]
        assert list(results(events).items()) == [("zeta", "one"), ("alpha", "3"), ("mid", "two")]
        tool_messages = model.requests[1].messages[-3:]
        assert [(m.role, getattr(m, "call_id", None)) for m in tool_messages] == [
            *[("tool", "zeta"), ("tool", "alpha"), ("tool", "mid")]
        ]


async def test_b17_bad_arguments_give_error_results_and_the_turn_continues() -> None:
    box = Toolbox()
    bad: dict[str, Any] = {
        "json": '{"a": 1,',
        "list": "[1, 2]",
        "type": {"a": "one", "b": 2},
        "missing": {"a": 1},
        "extra": {"a": 1, "b": 2, "c": 3},
    }
    calls = [(f"add#{key}", args) for key, args in bad.items()]
    model = ScriptedModel([tool_calls(*calls, ("add#ok", {"a": 1, "b": 2})), text("noted")])
    async with scripted_harness(model, plugins=[box]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "add")
        answered = ran(*[(key, "add", True) for key in bad], ("ok", "add", False))
        assert shape(events) == [
            *start(1, "add"),
            *step(1, "", *answered),
            *step(2, "noted"),
            *end(1),
        ]
        assert box.ran == ["add 1 2"]
        content = results(events)
        assert "JSON" in content["json"]
        assert "object" in content["list"]
        for key, argument in (("type", "a"), ("missing", "b"), ("extra", "c")):
            assert "'add'" in content[key]
            assert f"{argument}:" in content[key] or f"'{argument}'" in content[key], content[key]
        tool_messages = model.requests[1].messages[-6:]
        assert [(m.content, getattr(m, "is_error", None)) for m in tool_messages] == [
            *[(content[key], True) for key in bad],
            ("3", False),
        ]


async def test_b18_unknown_or_raising_tools_give_error_results() -> None:
    @tool
    async def fetch(url: str) -> str:
        "Fetch a page."
        await anyio.lowlevel.checkpoint()
        raise ConnectionError(f"cannot reach {url}")

    box = Toolbox(fetch)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("nope#u", {}),
        ("explode#x", {"why": "kaboom"}),
        ("fetch#f", {"url": "example.invalid"}),
        ("add#k", {"a": 2, "b": 2}),
    ]
    model = ScriptedModel([tool_calls(*calls), text("three failed")])
    async with scripted_harness(model, plugins=[box]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "try")
        answered = ran(("u", "nope", True), ("x", "explode", True), ("f", "fetch", True))
        answered += ran(("k", "add", False))
        expected = [*start(1, "try"), *step(1, "", *answered), *step(2, "three failed"), *end(1)]
        assert shape(events) == expected
        content = results(events)
        assert "'nope'" in content["u"]
        assert "kaboom" in content["x"]
        assert "explode" in content["x"]
        assert "cannot reach example.invalid" in content["f"]
        assert content["k"] == "4"
        assert box.ran == ["explode", "add 2 2"]


async def test_b19_first_tools_execute_answer_wins() -> None:
    seen: list[tuple[str, str]] = []

    class Answers:
        @hookimpl(tryfirst=True)
        def tools_execute(self, call: ToolCall) -> ToolResult | None:
            seen.append(("answers", call.id))
            if call.name == "add":
                return ToolResult(call_id=call.id, content="answered by a plugin")
            return None

    class Later:
        @hookimpl
        async def tools_execute(self, call: ToolCall) -> None:
            seen.append(("later", call.id))

    box = Toolbox()
    model = ScriptedModel(
        [tool_calls(("add#c1", {"a": 1, "b": 2}), ("echo#c2", {"text": "hi"})), "ok"]
    )
    async with scripted_harness(model, plugins=[box, Later(), Answers()]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "go")
        assert seen == [("answers", "c1"), ("answers", "c2"), ("later", "c2")]
        assert box.ran == ["echo hi", "echo hi done"]  # the core executor ran only c2
        assert list(results(events).items()) == [("c1", "answered by a plugin"), ("c2", "hi")]
        assert shape(events)[-1] == ("turn/end", 1, "completed")


@pytest.mark.parametrize("is_async", [False, True, "wrong type"])
async def test_b20_raising_tools_execute_fails_closed_naming_the_plugin(
    is_async: bool | str,
) -> None:
    later: list[str] = []

    def broken(call: ToolCall) -> object:
        if is_async == "wrong type":  # an answer that is not a ToolResult is a failure
            return "policy store unreachable"
        raise RuntimeError("policy store unreachable")

    async def broken_async(call: ToolCall) -> None:
        await anyio.lowlevel.checkpoint()
        broken(call)

    class Gatekeeper:  # a function put in a class is a method: staticmethod, or it gets self
        tools_execute = staticmethod(
            hookimpl(tryfirst=True)(broken_async if is_async is True else broken)
        )

    class Later:
        @hookimpl
        def tools_execute(self, call: ToolCall) -> None:
            later.append(call.id)

    box = Toolbox()
    model = ScriptedModel([tool_calls(("add#c1", {"a": 1, "b": 2})), text("denied")])
    plugins = [box, Later(), ("gatekeeper", Gatekeeper())]
    async with scripted_harness(model, plugins=plugins) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "go")
        answered = ran(("c1", "add", True))
        assert shape(events) == [
            *start(1, "go"),
            *step(1, "", *answered),
            *step(2, "denied"),
            *end(1),
        ]
        assert box.ran == later == []
        assert "'gatekeeper'" in results(events)["c1"]
        if is_async == "wrong type":
            assert "str where ToolResult is expected" in results(events)["c1"]
        else:
            assert "policy store unreachable" in results(events)["c1"]


@pytest.mark.parametrize(
    ("stop", "reason"), [("abort", "aborted"), ("cancel", "aborted"), ("dispose", "disposed")]
)
async def test_b21_stopped_during_a_tool_every_call_gets_one_result(stop: str, reason: str) -> None:
    started = anyio.Event()

    @tool
    async def wait() -> str:
        "Wait until the turn is stopped."
        started.set()
        await anyio.sleep_forever()
        return "never"

    box = Toolbox(wait)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("add#c0", {"a": 0, "b": 0}),
        ("wait#c1", {}),
        ("add#c2", {"a": 3, "b": 4}),
        ("echo#c3", {"text": "x"}),
    ]
    model = ScriptedModel([tool_calls(*calls)])
    async with scripted_harness(model, plugins=[box]) as h:
        agent = await h.agents.create("a", options=MODEL)
        agent.send("go")
        with anyio.fail_after(5):
            await started.wait()
            if stop == "dispose":
                await agent.dispose()
            else:
                getattr(agent, stop)()
                await agent.when_idle()
        events = agent.session.events
        answered = ran(
            ("c0", "add", False), ("c1", "wait", True), ("c2", "add", True), ("c3", "echo", True)
        )
        assert shape(events) == [*start(1, "go"), *step(1, "", *answered), *end(1, reason)]
        assert box.ran == ["add 0 0"]
        content = results(events)
        running = (
            f"interrupted: the turn was {reason} while this call was being handled; it may have run"
        )
        assert content["c1"] == running  # it had started
        assert content["c2"] == f"not run: the turn was {reason} before this call ran"
        assert "not run" in content["c3"]
        assert check_invariants(events) == []


@pytest.mark.parametrize(
    "trigger",
    [
        pytest.param(("tool/result", "call_id", "c1"), id="after-the-first-result"),
        pytest.param(("tool/call", "id", "c2"), id="as-the-second-call-is-logged"),
    ],
)
async def test_b21_aborted_between_calls_no_later_call_runs(trigger: tuple[str, str, str]) -> None:
    handle: list[Any] = []
    kind, key, call_id = trigger

    def abort_between(event: SessionEvent) -> None:
        if event.type == kind and event.data[key] == call_id:
            handle[0].abort()

    box = Toolbox()
    calls = (("add#c1", {"a": 1, "b": 2}), ("add#c2", {"a": 3, "b": 4}))
    model = ScriptedModel([tool_calls(*calls, ("echo#c3", {"text": "x"}))])
    async with scripted_harness(model, plugins=[box, On(abort_between)]) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            events = await run_turn(agent, "go")
        answered = ran(("c1", "add", False), ("c2", "add", True), ("c3", "echo", True))
        assert shape(events) == [*start(1, "go"), *step(1, "", *answered), *end(1, "aborted")]
        assert box.ran == ["add 1 2"]
        content = results(events)
        assert "not run" in content["c2"]
        assert "not run" in content["c3"]
        assert check_invariants(events) == []


async def test_b21_calls_left_by_a_failing_turn_get_a_not_run_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken_execute(*args: Any) -> ToolResult:
        raise RuntimeError("executor crashed")

    monkeypatch.setattr(HookRelay, "tools_execute", broken_execute)
    box = Toolbox()
    model = ScriptedModel([tool_calls(("add#c1", {"a": 1, "b": 2}), ("add#c2", {"a": 3, "b": 4}))])
    async with scripted_harness(model, plugins=[box]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "go")
        not_run = "not run: the turn ended before this call ran"
        running = "interrupted: the turn ended while this call was being handled; it may have run"
        answered = ran(("c1", "add", True), ("c2", "add", True))
        assert shape(events) == [*start(1, "go"), *step(1, "", *answered), *end(1, "error")]
        assert results(events) == {"c1": running, "c2": not_run}
        assert box.ran == []
        assert check_invariants(events) == []


async def test_b19_a_call_no_plugin_answers_gets_an_error_result() -> None:
    pm = create_plugin_manager(load_entry_points=False, select=["no:dsh.builtins"])
    box = Toolbox()
    model = ScriptedModel([tool_calls(("add#c1", {"a": 1, "b": 2})), text("no tool ran")])
    async with scripted_harness(model, plugins=[box], pm=pm) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "go")
        [result] = of_type(events, "tool/result")
        assert result.data["is_error"] is True
        assert result.data["content"] == (
            "tool 'add' was not run: no plugin answered tools_execute"
        )
        assert box.ran == []
        assert events[-1].data["reason"] == "completed"


async def test_b21_an_abort_while_a_result_is_observed_does_not_log_it_twice() -> None:
    box = Toolbox()
    model = ScriptedModel([tool_calls(("add#c1", {"a": 1, "b": 2}), ("add#c2", {"a": 3, "b": 4}))])
    async with scripted_harness(model, plugins=[box]) as h:
        agent = await h.agents.create("a", options=MODEL)
        inner = agent.session.observer

        async def abort_while_observing(before: Awaitable[None] | None) -> None:
            if before is not None:
                await before
            agent.abort()
            await anyio.lowlevel.checkpoint()  # the abort lands here, unshielded

        def observer(session: Session, event: SessionEvent) -> Awaitable[None] | None:
            before = None if inner is None else inner(session, event)
            if event.type == "tool/result" and event.data["call_id"] == "c1":
                return abort_while_observing(before)
            return before

        agent.session.observer = observer
        with anyio.fail_after(5):
            events = await run_turn(agent, "go")
        ids = [e.data["call_id"] for e in of_type(events, "tool/result")]
        assert ids == ["c1", "c2"]
        assert results(events)["c1"] == "3"
        assert box.ran == ["add 1 2"]
        assert events[-1].data["reason"] == "aborted"
        assert check_invariants(events) == []
