"""``run_turn(agent, prompt, timeout=...)`` bounds a turn (from a third-party plugin
author's review: a test whose model ``hang()``s, or whose plugin never lets the turn
end, waited forever). A turn still running when the time is up is aborted, then
``TimeoutError`` is raised; the agent is idle again, so the harness closes.

The timeout stops run_turn's own prompt only, and nothing waits unbounded (from a
re-review): it waited for the agent to be idle after the abort with no bound (forever
for a step that shields itself from cancellation), and it aborted whatever turn was
running (another caller's, with run_turn's own prompt still queued, which then ran: a
``hang()`` entry never returned)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable

import anyio
import anyio.lowlevel
import pytest

from dsh.agent import AgentHandle
from dsh.llm.base import Chunk
from dsh.messages import ModelRequest
from dsh.session import SessionEvent
from dsh.testing import ScriptedModel, check_invariants, hang, run_turn, scripted_harness

#: Bounds a test only while run_turn does not return (the bug): never reached otherwise.
NEVER = 20
#: run_turn's timeout where it runs out.
TIMEOUT = 0.5


async def run_turn_from(
    ready: Callable[[], bool], monkeypatch: pytest.MonkeyPatch, agent: AgentHandle, prompt: str
) -> list[SessionEvent]:
    """``run_turn(agent, prompt, timeout=TIMEOUT)``, its time counted from when ``ready()``
    holds (the turns are where the test wants them when the time is up), not from the
    call: on a loaded machine they may take longer than that to get there. A wait
    run_turn begins once ``ready()`` holds is counted from its start, as always."""
    move_on_after = anyio.move_on_after
    waiting: list[tuple[anyio.CancelScope, float]] = []

    def from_ready(delay: float, shield: bool = False) -> anyio.CancelScope:
        caller = sys._getframe(1)
        if caller.f_code is not run_turn.__code__ or ready():
            return move_on_after(delay, shield=shield)
        scope = anyio.CancelScope(shield=shield)
        waiting.append((scope, delay))
        return scope

    async def start_the_clock() -> None:
        while not ready():  # noqa: ASYNC110 - a state of the turns, no event tells it
            await anyio.sleep(0.01)
        for scope, delay in waiting:
            scope.deadline = anyio.current_time() + delay

    outcome: list[list[SessionEvent] | TimeoutError] = []

    async def run() -> None:
        try:
            outcome.append(await run_turn(agent, prompt, timeout=TIMEOUT))
        except TimeoutError as late:
            outcome.append(late)
        tg.cancel_scope.cancel()

    monkeypatch.setattr(anyio, "move_on_after", from_ready)
    async with anyio.create_task_group() as tg:
        tg.start_soon(start_the_clock)
        tg.start_soon(run)
    if isinstance(outcome[0], TimeoutError):
        raise outcome[0]
    return outcome[0]


class Stubborn(ScriptedModel):
    """A model whose stream does not heed cancellation until ``release`` is set."""

    def __init__(self) -> None:
        super().__init__([])
        self.release = anyio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.requests.append(request)
        with anyio.CancelScope(shield=True):
            await self.release.wait()
        return
        yield  # an async generator


async def test_a_turn_that_does_not_end_in_time_is_aborted_and_raises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = ScriptedModel([hang("partial"), "later"])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with pytest.raises(TimeoutError) as late:
            await run_turn_from(lambda: bool(model.requests), monkeypatch, agent, "hi")
        assert str(late.value) == "run_turn: the turn did not end within 0.5 s; it was aborted"
        events = agent.session.events
        assert events[-1].type == "turn/end" and events[-1].data["reason"] == "aborted"
        assert model.aborted == 1
        again = await run_turn(agent, "again", timeout=60)  # the agent serves on
        assert again[-1].data["reason"] == "completed"
        assert check_invariants(agent.session.events) == []
    model.assert_complete()


async def test_without_a_timeout_run_turn_waits_for_the_turn() -> None:
    model = ScriptedModel(["ok"])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi", timeout=None)
    assert events[-1].data["reason"] == "completed"


async def test_a_turn_that_ignores_the_abort_is_waited_for_once_more_then_raises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = Stubborn()
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        try:
            with pytest.raises(TimeoutError) as late, anyio.fail_after(NEVER):
                # its stream is shielded when the time starts
                await run_turn_from(lambda: bool(model.requests), monkeypatch, agent, "hi")
            assert str(late.value) == (
                "run_turn: the turn did not end within 0.5 s; it was aborted, and had not "
                "ended 0.5 s later: the agent is still busy"
            )
            assert agent.status == "running"
        finally:
            model.release.set()
        await agent.when_idle()
        assert agent.session.events[-1].data["reason"] == "aborted"
        assert check_invariants(agent.session.events) == []


async def test_a_prompt_still_queued_is_taken_back_and_the_running_turn_left_alone() -> None:
    model = ScriptedModel([hang("first"), "mine"])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        agent.send("first")  # another caller's turn, running when run_turn is called
        while not model.requests:
            await anyio.lowlevel.checkpoint()
        with pytest.raises(TimeoutError) as late, anyio.fail_after(NEVER):
            await run_turn(agent, "second", timeout=0.05)
        assert str(late.value) == (
            "run_turn: the prompt did not start within 0.05 s: the agent was busy with "
            "another turn, left running; the prompt was taken back and will not run"
        )
        assert (agent.status, model.aborted) == ("running", 0)
        agent.abort()
        await agent.when_idle()
        events = agent.session.events
        assert [e.type for e in events].count("turn/start") == 1
        assert len(model.requests) == 1  # "second" never ran


async def test_a_later_turn_running_at_the_timeout_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def answer_and_queue(request: ModelRequest) -> str:
        agent.send("later")  # another prompt, queued while run_turn's turn runs
        return "mine"

    model = ScriptedModel([answer_and_queue, hang("later")])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with pytest.raises(TimeoutError) as late, anyio.fail_after(NEVER):
            # its turn has ended, the later one is running when the time starts
            await run_turn_from(lambda: len(model.requests) == 2, monkeypatch, agent, "hi")
        assert str(late.value) == (
            "run_turn: the agent was not idle within 0.5 s: the prompt's turn ended, a "
            "later turn is still running, left running"
        )
        assert (agent.status, model.aborted) == ("running", 0)
        agent.abort()
        await agent.when_idle()
        reasons = [e.data["reason"] for e in agent.session.events if e.type == "turn/end"]
        assert reasons == ["completed", "aborted"]
    model.assert_complete()
