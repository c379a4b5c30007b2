"""Conformance: a tool or a hook impl raising a ``BaseException`` that is not a
cancellation (``SystemExit`` from argparse or click, ``GeneratorExit``, a plugin's own
subclass) fails only what raised it, as pytest takes a test's ``SystemExit``: a tool's
is an error result the model reads (18), an interception hook's ends the turn ``error``
naming the plugin (34), an observer's is reported (37); the harness, its other agents
and the host code run on. Only ``KeyboardInterrupt`` and a real cancellation propagate,
and then the turn's end says what happened, never ``completed`` (35).

Each test names the numbered behaviour of shared/design/BEHAVIOURS.md it checks.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import pytest
from behaviours_durability_support import ok
from loop_support import LIMIT, ends

from dsh import hookimpl
from dsh.errors import HookError
from dsh.session import SessionEvent
from dsh.testing import (
    ErrorRecorder,
    ScriptedModel,
    check_invariants,
    hang,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)
from dsh.tools import tool


class Custom(BaseException):
    """A plugin's own BaseException."""


@tool
def cli(args: str) -> str:
    "Runs a small argparse command line."
    parser = argparse.ArgumentParser(prog="mini", add_help=False)
    parser.add_argument("--n", type=int)
    return str(parser.parse_args(args.split()))


@tool
async def custom() -> str:
    "Raises a BaseException of its own."
    raise Custom("tool raised it")


@tool
def closing() -> str:
    "Raises GeneratorExit."
    raise GeneratorExit


@tool
def interrupted() -> str:
    "Raises a group holding a KeyboardInterrupt."
    raise BaseExceptionGroup("g", [KeyboardInterrupt(), ValueError("boom")])


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        for each in (cli, custom, closing, interrupted):
            register(each)


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (("cli", {"args": "--n notanint"}), "tool 'cli' failed: SystemExit: 2"),
        (("custom", {}), "tool 'custom' failed: Custom: tool raised it"),
        (("closing", {}), "tool 'closing' failed: GeneratorExit"),
    ],
    ids=["SystemExit", "custom", "GeneratorExit"],
)
async def test_b18_a_tool_raising_a_base_exception_gives_an_error_result(
    call: tuple[str, dict[str, Any]], said: str
) -> None:
    """Behaviour 18: the model reads the failure; the turn and the other agent go on."""
    model = ScriptedModel([tool_calls(call), text("read it"), text("two")])
    other = ScriptedModel([hang("b is streaming")], name="other")
    async with scripted_harness(model, other, plugins=[("tools", Tools())]) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        b = await harness.agents.create("b", options={"model": "other"})
        b.send("wait")
        with anyio.fail_after(LIMIT):
            first = await run_turn(agent, "go")
            second = await run_turn(agent, "again")
            await anyio.lowlevel.checkpoint()  # cancelled here if the task group is
        assert b.status == "running"
        b.cancel()
    (result,) = [e.data for e in first if e.type == "tool/result"]
    assert result["is_error"] is True
    assert result["content"].startswith(said), result
    assert ends(first) == [(1, "completed")]  # the model read the error and answered
    assert ends(second) == [(2, "completed")]
    assert check_invariants(agent.session.events) == []


class Raises:
    """Raises ``exc`` from ``hook`` in the first turn."""

    def __init__(self, hook: str, exc: BaseException) -> None:
        self.hook = hook
        self.exc = exc
        self.raised = 0

    def _maybe(self, hook: str) -> None:
        if hook == self.hook and not self.raised:
            self.raised += 1
            raise self.exc

    @hookimpl
    def agent_request(self) -> None:  # waterfall
        self._maybe("agent_request")

    @hookimpl
    async def agent_turn_continuation(self) -> None:  # waterfall, async
        self._maybe("agent_turn_continuation")

    @hookimpl
    async def tools_execute(self) -> None:  # first_result
        self._maybe("tools_execute")

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:  # notify_inline
        if event.type == "assistant/message":
            self._maybe("session_event")

    @hookimpl
    async def agent_status(self, status: str) -> None:  # notify
        if status == "idle":
            self._maybe("agent_status")

    @hookimpl
    def session_flush(self) -> None:  # gather, one impl
        self._maybe("session_flush")


EXCEPTIONS = [SystemExit(3), GeneratorExit(), Custom("custom")]
NAMES = ["SystemExit", "GeneratorExit", "custom"]


@pytest.mark.parametrize("exc", EXCEPTIONS, ids=NAMES)
@pytest.mark.parametrize("hook", ["agent_request", "agent_turn_continuation"])
async def test_b34_an_interception_hook_raising_a_base_exception_ends_only_its_turn(
    hook: str, exc: BaseException
) -> None:
    """Behaviour 34: the turn ends ``error`` naming the plugin, the hook and what it
    raised; the agent serves the next prompt."""
    model = ScriptedModel([tool_calls(("cli", {"args": ""})), ok, ok])
    plugins = [("tools", Tools()), ("bad", Raises(hook, exc))]
    async with scripted_harness(model, plugins=plugins) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            first = await run_turn(agent, "one")
            second = await run_turn(agent, "two")
            await anyio.lowlevel.checkpoint()  # cancelled here if the task group is
    (end,) = [e.data for e in first if e.type == "turn/end"]
    assert (end["reason"], end["error"]["plugin"], end["error"]["hook"]) == ("error", "bad", hook)
    assert f"): {type(exc).__name__}" in end["error"]["message"]  # GeneratorExit: no ": "
    assert ends(second) == [(2, "completed")]
    assert check_invariants(agent.session.events) == []


@pytest.mark.parametrize("exc", EXCEPTIONS, ids=NAMES)
async def test_b20_a_tools_execute_impl_raising_a_base_exception_fails_closed(
    exc: BaseException,
) -> None:
    """Behaviour 20: the tool does not run; its error result names the plugin."""
    model = ScriptedModel([tool_calls(("custom", {})), text("read it")])
    plugins = [("tools", Tools()), ("bad", Raises("tools_execute", exc))]
    async with scripted_harness(model, plugins=plugins) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "one")
            await anyio.lowlevel.checkpoint()  # cancelled here if the task group is
    (result,) = [e.data for e in events if e.type == "tool/result"]
    assert result["is_error"] is True
    assert "plugin 'bad' failed in hook tools_execute" in result["content"]
    assert f"): {type(exc).__name__}" in result["content"]
    assert ends(events) == [(1, "completed")]


@pytest.mark.parametrize("exc", EXCEPTIONS, ids=NAMES)
@pytest.mark.parametrize("hook", ["session_event", "agent_status", "session_flush"])
async def test_b37_an_observer_raising_a_base_exception_is_reported(
    hook: str, exc: BaseException
) -> None:
    """Behaviours 36 and 37: an observer's (or a flush's) failure is reported, naming
    the plugin; the agent serves on."""
    errors = ErrorRecorder()
    model = ScriptedModel([text("one"), text("two")])
    async with scripted_harness(
        model, plugins=[("bad", Raises(hook, exc)), ("errors", errors)]
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "one")
            await agent.when_idle()
            second = await run_turn(agent, "two")
            await anyio.lowlevel.checkpoint()  # cancelled here if the task group is
    failures = [*errors.failures, *errors.errors]  # a flush's: an agent_error
    assert [(f.plugin, f.hook, type(f.cause)) for f in failures if isinstance(f, HookError)] == [
        ("bad", hook, type(exc))
    ]
    assert ends(second) == [(2, "completed")]


async def test_b35_a_keyboard_interrupt_propagates_and_the_turn_does_not_say_completed() -> None:
    """Behaviour 35: what still escapes a turn (a KeyboardInterrupt, here in a group)
    ends it ``error``, not ``completed``, before it propagates."""
    model = ScriptedModel([tool_calls(("interrupted", {})), text("never")])
    agents: list[Any] = []

    async def interrupted_turn() -> None:
        async with scripted_harness(model, plugins=[("tools", Tools())]) as harness:
            agents.append(await harness.agents.create("a", options={"model": "scripted"}))
            with anyio.fail_after(LIMIT):
                agents[0].send("go")
                await agents[0].when_idle()

    with pytest.raises(BaseExceptionGroup) as raised:
        await interrupted_turn()
    assert raised.value.subgroup(KeyboardInterrupt) is not None
    (agent,) = agents
    (end,) = [e.data for e in agent.session.events if e.type == "turn/end"]
    assert end["reason"] == "error"
    assert end["error"]["code"] == "INTERNAL"
    assert end["error"]["message"] == "BaseExceptionGroup: g (2 sub-exceptions)"
    assert check_invariants(agent.session.events) == []


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


class FailsTheTest:
    @hookimpl
    def agent_request(self, request: Any) -> Any:
        pytest.fail("checked inside the hook")


async def test_pytest_fail_in_a_hook_impl_reaches_the_test() -> None:
    """``pytest.fail`` (a ``BaseException``) in a hook impl under test is the test's
    outcome, not the plugin's failure: contained, it ended the turn ``error`` and the
    test that called it passed."""

    async def test_of_the_plugin() -> None:
        async with scripted_harness(ScriptedModel(["hi"]), plugins=[FailsTheTest()]) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            with anyio.fail_after(LIMIT):
                await run_turn(agent, "go")

    with pytest.raises(BaseException) as caught:  # noqa: PT011 - what it holds is checked
        await test_of_the_plugin()
    assert any(isinstance(leaf, pytest.fail.Exception) for leaf in _leaves(caught.value))
