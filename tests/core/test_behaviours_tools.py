"""Conformance: behaviours 12-21 of BEHAVIOURS.md: what a step's answer leads to
(rewrites, errors, max-tokens, empty answers) and its tool calls.

Every test is named after the behaviour it checks (``test_bNN_...``). The tests hold
under any set of installed plugins: logs are compared on the core's event types only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterable, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from dsh import AssistantMessage, Message, ModelRequest, TextBlock, ToolCall, ToolResult, hookimpl
from dsh._relay import HookRelay
from dsh.errors import ModelError
from dsh.invariants import check_invariants
from dsh.llm import Chunk, Finish, ModelInfo, TextDelta, ToolCallDelta
from dsh.plugins import create_plugin_manager
from dsh.session import Session, SessionEvent
from dsh.testing import (
    Reply,
    ScriptedModel,
    fail,
    max_tokens,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)
from dsh.tools import Tool, tool

MODEL = {"model": "scripted"}


def shape(events: Iterable[SessionEvent]) -> list[tuple[Any, ...]]:
    """The core events without chunks, as short tuples that read like the log (tool
    results without their content: see ``results``)."""
    out: list[tuple[Any, ...]] = []
    for event in events:
        kind, data = event.type, event.data
        if kind in ("turn/start", "step/start", "step/end"):
            out.append((kind, data.get("step", data["turn"])))
        elif kind == "turn/end":
            out.append((kind, data["turn"], data["reason"]))
        elif kind in ("user/message", "steering/message"):
            out.append((kind, data["content"]))
        elif kind == "assistant/message":
            out.append((kind, AssistantMessage.model_validate(data["message"]).text))
        elif kind == "tool/call":
            out.append((kind, data["id"], data["name"]))
        elif kind == "tool/result":
            out.append((kind, data["call_id"], data["is_error"]))
    return out


def results(events: Iterable[SessionEvent]) -> dict[str, str]:
    """Tool result content by call id."""
    return {e.data["call_id"]: e.data["content"] for e in events if e.type == "tool/result"}


def said(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """(role, text) of each message of a history or request."""
    return [(m.role, m.text if isinstance(m, AssistantMessage) else m.content) for m in messages]


def of_type(events: Iterable[SessionEvent], kind: str) -> list[SessionEvent]:
    return [e for e in events if e.type == kind]


def start(number: int, *prompts: str) -> list[tuple[Any, ...]]:
    return [("turn/start", number), *(("user/message", p) for p in prompts)]


def step(number: int, answer: str, *after: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """A step that answered ``answer``; ``after``: what it logged after the answer."""
    return [("step/start", number), ("assistant/message", answer), *after, ("step/end", number)]


def end(number: int, reason: str = "completed") -> list[tuple[Any, ...]]:
    return [("turn/end", number, reason)]


def ran(*calls: tuple[str, str, bool]) -> list[tuple[Any, ...]]:
    """tool/call then tool/result for each (call id, tool name, is_error)."""
    return [row for i, n, e in calls for row in (("tool/call", i, n), ("tool/result", i, e))]


def simple_turn(number: int, prompt: str, answer: str, reason: str = "completed") -> list[Any]:
    return [*start(number, prompt), *step(1, answer), *end(number, reason)]


FAILED_STEP = [("step/start", 1), ("step/end", 1)]


class Toolbox:
    """Registers ``add``, ``echo`` (async, yields once) and ``explode`` plus any extra
    tools; ``ran`` records every run of its own tools, in order."""

    def __init__(self, *extra: Tool) -> None:
        self.ran: list[str] = []
        self.extra = extra

    @hookimpl
    def register_tools(self, register: Any) -> None:
        ran = self.ran

        @tool
        def add(a: int, b: int) -> int:
            "Add two numbers."
            ran.append(f"add {a} {b}")
            return a + b

        @tool
        async def echo(text: str) -> str:
            "Say the text back."
            ran.append(f"echo {text}")
            await anyio.lowlevel.checkpoint()
            ran.append(f"echo {text} done")
            return text

        @tool
        def explode(why: str) -> str:
            "Always fails."
            ran.append("explode")
            raise ValueError(why)

        for each in (add, echo, explode, *self.extra):
            register(each)


class On:
    """Calls ``action(event)`` for every event logged (a ``session_event`` observer)."""

    def __init__(self, action: Any) -> None:
        self.action = action

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:
        self.action(event)


# -- 12-15: what a step's answer leads to -----------------------------------------------


async def test_b12_step_result_rewrite_is_what_log_request_and_tools_see() -> None:
    seen: list[tuple[int, int, str]] = []
    rewritten = ToolCall(id="rw", name="add", arguments='{"a": 10, "b": 20}')

    class Rewrite:
        @hookimpl
        def agent_step_result(
            self, agent: Any, message: AssistantMessage, step: int
        ) -> AssistantMessage | None:
            logged = len(of_type(agent.session.events, "assistant/message"))
            seen.append((step, logged, message.text))
            if step != 1:
                return None
            return message.model_copy(update={"content": (TextBlock(text="new"), rewritten)})

    box = Toolbox()
    model = ScriptedModel([tool_calls(("add#orig", {"a": 1, "b": 2}), say="old"), text("30")])
    async with scripted_harness(model, plugins=[box, Rewrite()]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "1+2?")
        assert seen == [(1, 0, "old"), (2, 1, "30")]  # each before its assistant/message
        steps = [*step(1, "new", *ran(("rw", "add", False))), *step(2, "30")]
        assert shape(events) == [*start(1, "1+2?"), *steps, *end(1)]
        assert box.ran == ["add 10 20"]
        assert of_type(events, "tool/call")[0].data["arguments"] == rewritten.arguments
        step_two = model.requests[1].messages
        assert said(step_two) == [("user", "1+2?"), ("assistant", "new"), ("tool", "30")]
        assert isinstance(step_two[1], AssistantMessage)
        assert step_two[1].tool_calls == [rewritten]


async def test_b12_step_result_dropping_the_calls_runs_no_tool() -> None:
    class NoTools:
        @hookimpl
        def agent_step_result(self, message: AssistantMessage) -> AssistantMessage:
            return message.model_copy(update={"content": (TextBlock(text="I will not"),)})

    box = Toolbox()
    model = ScriptedModel([tool_calls(("add", {"a": 1, "b": 2}))])
    async with scripted_harness(model, plugins=[box, NoTools()]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "1+2?")
        assert shape(events) == simple_turn(1, "1+2?", "I will not")
        assert box.ran == []
        model.assert_complete()


async def test_b13_provider_error_ends_the_turn_with_its_code_and_message() -> None:
    model = ScriptedModel([fail("RATE_LIMIT", "slow down, please"), text("ok")])
    async with scripted_harness(model) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "hi")
            assert shape(events) == [*start(1, "hi"), *FAILED_STEP, *end(1, "error")]
            error = {"code": "RATE_LIMIT", "message": "slow down, please"}
            assert events[-1].data["error"] == error
            assert shape(await run_turn(agent, "again")) == simple_turn(2, "again", "ok")


class BrokenStream:
    """Streams a text and a tool call, then raises ``error`` (None: just stops, with no
    Finish chunk)."""

    info = ModelInfo("broken", "test")
    chunks = (
        TextDelta("let me"),
        ToolCallDelta(0, id="c1", name="add"),
        ToolCallDelta(0, arguments='{"a": 1, "b": 2}'),
    )

    def __init__(self, error: Exception | None) -> None:
        self.error = error

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        for chunk in self.chunks:
            yield chunk
        if self.error is not None:
            raise self.error


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (ModelError("SERVER", "connection reset"), "SERVER", "connection reset"),
        (RuntimeError("kaput"), "UNKNOWN", "kaput"),
        (None, "STREAM_CLOSED", "finish"),
    ],
)
async def test_b13_stream_error_after_a_tool_call_runs_no_tool(
    error: Exception | None, code: str, message: str
) -> None:
    box = Toolbox()
    async with scripted_harness(BrokenStream(error), plugins=[box]) as h:  # type: ignore[arg-type]
        agent = await h.agents.create("a", options={"model": "broken"})
        with anyio.fail_after(5):
            events = await run_turn(agent, "1+2?")
        logged = [e.data for e in of_type(events, "assistant/chunk")]
        assert logged == [c.to_data() for c in BrokenStream.chunks]
        # the text streamed before the failure is kept, its half-sent tool call is not
        assert shape(events) == [*start(1, "1+2?"), *step(1, "let me"), *end(1, "error")]
        kept = of_type(events, "assistant/message")[0].data["message"]
        assert (kept["stop_reason"], kept["content"]) == (
            "error",
            [{"type": "text", "text": "let me"}],
        )
        assert [m.role for m in agent.session.history] == ["user", "assistant"]
        assert box.ran == []
        assert events[-1].data["error"]["code"] == code
        assert message in events[-1].data["error"]["message"]


async def test_b14_max_tokens_keeps_the_text_and_runs_no_tool_call() -> None:
    box = Toolbox()
    model = ScriptedModel([max_tokens("Let me add", ("add", {"a": 1, "b": 2})), text("fresh")])
    async with scripted_harness(model, plugins=[box]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            await run_turn(agent, "1+2?")
            await run_turn(agent, "again")
        events = agent.session.events
        assert shape(events) == [
            *simple_turn(1, "1+2?", "Let me add", "max-tokens"),
            *simple_turn(2, "again", "fresh"),
        ]
        assert box.ran == []
        cut = AssistantMessage.model_validate(
            of_type(events, "assistant/message")[0].data["message"]
        )
        assert (cut.stop_reason, cut.tool_calls) == ("max_tokens", [])
        history = [("user", "1+2?"), ("assistant", "Let me add"), ("user", "again")]
        assert said(model.requests[1].messages) == history


async def test_b14_a_later_step_does_not_undo_max_tokens() -> None:
    handle: list[Any] = []

    def steer_then_cut(request: ModelRequest) -> Reply:
        handle[0].steer("go on")  # steering makes the turn take another step
        return max_tokens("par")

    model = ScriptedModel([steer_then_cut, text("tial"), text("next")])
    async with scripted_harness(model) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            await run_turn(agent, "write")
            await run_turn(agent, "more")
        steps = [*step(1, "par", ("steering/message", "go on")), *step(2, "tial")]
        first = [*start(1, "write"), *steps, *end(1, "max-tokens")]
        assert shape(agent.session.events) == [*first, *simple_turn(2, "more", "next")]


async def test_b15_an_empty_assistant_message_never_enters_history() -> None:
    nothing = Reply((Finish("stop"),))
    model = ScriptedModel([text(""), nothing, max_tokens("", ("add", {"a": 1, "b": 2})), "ok"])
    async with scripted_harness(model, plugins=[Toolbox()]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            for prompt in "abcd":
                await run_turn(agent, prompt)
        events = agent.session.events
        assert len(of_type(events, "assistant/message")) == 4  # logged, but not shown again
        assert said(model.requests[3].messages) == [("user", p) for p in "abcd"]
        assert said(agent.session.history) == [*[("user", p) for p in "abcd"], ("assistant", "ok")]
        replayed = Session("replay", [SessionEvent.from_dict(e.to_dict()) for e in events])
        assert replayed.history == agent.session.history


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

    class Gatekeeper:
        tools_execute = hookimpl(tryfirst=True)(broken_async if is_async is True else broken)

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


class ClosingModel:
    """Streams a text chunk, then a malformed one; ``closed_at`` is the number of
    events logged when its generator was closed (None: not closed)."""

    info = ModelInfo("closing", "test")

    def __init__(self) -> None:
        self.session: Session | None = None
        self.closed_at: int | None = None

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        try:
            yield TextDelta("fine so far")
            yield TextDelta(123)  # type: ignore[arg-type]
            yield TextDelta("never asked for")
        finally:
            assert self.session is not None
            self.closed_at = len(self.session.events)


async def test_b13_a_stream_that_fails_mid_way_is_closed_before_the_turn_ends() -> None:
    model = ClosingModel()
    async with scripted_harness(model) as h:  # type: ignore[arg-type]
        agent = await h.agents.create("a", options={"model": "closing"})
        model.session = agent.session
        with anyio.fail_after(5):
            events = await run_turn(agent, "hi")
        assert events[-1].data["error"]["code"] == "MALFORMED_RESPONSE"
        turn_end = of_type(events, "turn/end")[0]
        assert model.closed_at is not None
        assert model.closed_at <= turn_end.seq
