"""Property: random interleavings of the inbox and lifecycle calls keep the loop sound.

Hypothesis draws a reply plan for a scripted model (text, tool calls, a slow async tool,
a max-tokens cut, a provider error) and a sequence of operations on one agent: send,
steer, cancel, abort, when_idle, each followed by a few scheduler turns, plus perhaps a
dispose (awaited, or started and left running). Hook impls that checkpoint on every
event, status change, request, continuation and flush let the operations land anywhere
inside a turn. Whatever the interleaving (behaviours 2, 6, 26-31, 35, 39):

- the log always passes ``check_invariants`` once the agent is idle or disposed;
- a prompt that was accepted and not followed by ``cancel()`` or a dispose appears in
  the log, as a user/message or steering/message; no prompt appears twice;
- every observer sees every event of the log, in order, whatever lands while another
  observer is being notified (behaviour 37);
- ``when_idle()`` always resolves, and so does ``dispose()``.
"""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import anyio.lowlevel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh import hookimpl
from dsh.loop import AgentDisposedError
from dsh.session import SessionEvent
from dsh.testing import (
    ScriptedModel,
    check_invariants,
    fail,
    max_tokens,
    scripted_harness,
    text,
    tool_calls,
)
from dsh.tools import tool

LIMIT = 5  # seconds for any one wait; a hang fails the example instead of the run


@tool
def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b


@tool
async def nap() -> str:
    "Take a few scheduler turns."
    for _ in range(3):
        await anyio.lowlevel.checkpoint()
    return "rested"


class Interleaver:
    """Registers the tools and yields to the scheduler at every event, status change,
    request, continuation and flush, so the test's operations can land anywhere."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(add)
        register(nap)

    @hookimpl
    async def session_event(self, event: SessionEvent) -> None:
        await anyio.lowlevel.checkpoint()

    @hookimpl
    async def agent_status(self) -> None:
        await anyio.lowlevel.checkpoint()

    @hookimpl
    async def agent_request(self) -> None:
        await anyio.lowlevel.checkpoint()

    @hookimpl
    async def agent_turn_continuation(self) -> None:
        await anyio.lowlevel.checkpoint()

    @hookimpl
    async def session_flush(self) -> None:
        await anyio.lowlevel.checkpoint()


REPLIES = {
    "text": lambda: text("all ", "done"),
    "tool": lambda: tool_calls(("add", {"a": 1, "b": 2})),
    "slow tool": lambda: tool_calls(("nap", {}), ("add", {"a": 2, "b": 2})),
    "max tokens": lambda: max_tokens("cut", ("add", {"a": 1, "b": 1})),
    "error": lambda: fail("SERVER", "scripted outage"),
}

# (operation, scheduler turns to let pass after it); weighted by repetition. A dispose
# is drawn separately: it ends what can be checked.
OPERATIONS = st.tuples(
    st.sampled_from(["send", "send", "steer", "steer", "abort", "cancel", "idle"]),
    st.integers(min_value=0, max_value=8),
)
DISPOSALS = st.one_of(
    st.none(), st.tuples(st.integers(min_value=0), st.sampled_from(["dispose", "dispose later"]))
)


def prompts_in(events: list[SessionEvent]) -> list[str]:
    kinds = ("user/message", "steering/message")
    return [e.data["content"] for e in events if e.type in kinds and "source" not in e.data]


async def play(plan: list[str], operations: list[tuple[str, int]], queue_mode: str) -> None:
    replies = itertools.count()

    def answer(request: Any) -> Any:
        return REPLIES[plan[next(replies) % len(plan)]]()

    model = ScriptedModel([answer] * 1000)
    recorder = LateRecorder()
    accepted: list[str] = []
    protected_from = 0  # prompts from this index on were sent after the last cancel
    disposing = False
    options = {"model": "scripted", "max_steps": 4, "queue_mode": queue_mode}

    with anyio.fail_after(LIMIT):
        async with scripted_harness(model, plugins=plugins_for(recorder)) as harness:
            agent = await harness.agents.create("a", options=options)
            async with anyio.create_task_group() as background:
                for index, (op, pause) in enumerate(operations):
                    if op in ("send", "steer"):
                        prompt = f"prompt {index}"
                        try:
                            getattr(agent, op)(prompt)
                        except AgentDisposedError:
                            assert disposing, "refused a prompt although not disposed"
                        else:
                            accepted.append(prompt)
                    elif op == "cancel":
                        agent.cancel()
                        protected_from = len(accepted)
                    elif op == "abort":
                        agent.abort()
                    elif op == "idle":
                        await agent.when_idle()
                        assert check_invariants(agent.session.events) == []
                    elif op == "dispose":
                        disposing = True
                        await agent.dispose()
                    elif op == "dispose later":
                        disposing = True
                        background.start_soon(agent.dispose)
                    for _ in range(pause):
                        await anyio.lowlevel.checkpoint()
                    if disposing:
                        protected_from = len(accepted)

                await agent.when_idle()
                events = list(agent.session.events)
                assert check_invariants(events) == []
                logged = prompts_in(events)
                assert len(logged) == len(set(logged)), f"a prompt was logged twice: {logged}"
                lost = [p for p in accepted[protected_from:] if p not in logged]
                assert lost == [], f"prompts lost without a cancel: {lost}"
                assert recorder.seqs == [e.seq for e in events], "an observer missed an event"

                await agent.dispose()
                await agent.when_idle()
                assert agent.agent.status == "disposed"
                assert check_invariants(agent.session.events) == []
                assert recorder.seqs == [e.seq for e in agent.session.events]


class LateRecorder:
    """An observer that records each event only after yielding to the scheduler, where
    an abort, a cancel or a dispose can land: it must still record every one."""

    def __init__(self) -> None:
        self.seqs: list[int] = []

    @hookimpl
    async def session_event(self, event: SessionEvent) -> None:
        await anyio.lowlevel.checkpoint()
        self.seqs.append(event.seq)


def plugins_for(recorder: LateRecorder) -> list[tuple[str, object]]:
    # registered later, called first (pluggy's order): the recorder is told after the
    # interleaver's observer yielded to the scheduler too
    return [("recorder", recorder), ("interleaver", Interleaver())]


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    plan=st.lists(st.sampled_from(list(REPLIES)), min_size=1, max_size=6),
    operations=st.lists(OPERATIONS, min_size=1, max_size=30),
    disposal=DISPOSALS,
    queue_mode=st.sampled_from(["batch", "one-at-a-time"]),
)
def test_interleavings_keep_the_log_sound_and_lose_no_prompt(
    plan: list[str],
    operations: list[tuple[str, int]],
    disposal: tuple[int, str] | None,
    queue_mode: str,
) -> None:
    if disposal is not None:
        at, how = disposal
        operations.insert(min(at, len(operations)), (how, 0))
    anyio.run(play, plan, operations, queue_mode)
