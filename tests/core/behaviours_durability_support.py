"""Helpers shared by the conformance tests of behaviours 34-43 (containment, durability,
persistence and resume).
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
from loop_support import LIMIT, agent_on

from dsh import hookimpl
from dsh.agent import AgentHandle
from dsh.session import SessionEvent
from dsh.testing import (
    ScriptedModel,
    fail,
    hang,
    max_tokens,
    run_turn,
    text,
    tool_calls,
)


def ok(request: Any) -> str:
    return "ok"


CALL_ADD = tool_calls(("add", {"a": 1, "b": 2}))


class HoldsFirstChunk:
    """While the first chunk is being notified, signals and waits for ``release``."""

    def __init__(self) -> None:
        self.holding = anyio.Event()
        self.release = anyio.Event()

    @hookimpl
    async def session_event(self, event: SessionEvent) -> None:
        if event.type == "assistant/chunk" and not self.holding.is_set():
            self.holding.set()
            await self.release.wait()


async def abort_while_first_chunk_is_notified(*plugins: tuple[str, object]) -> AgentHandle:
    """Run a turn whose step is aborted while an observer awaits the first chunk."""
    holds = HoldsFirstChunk()
    model = ScriptedModel([hang("a", "b")])
    # registered last, ``holds`` is notified first
    async with agent_on(model, *plugins, ("holds", holds)) as (_, agent):
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await holds.holding.wait()
            agent.abort()
            holds.release.set()
            await agent.when_idle()
            await agent.dispose()
    return agent


async def busy_session(agent: AgentHandle, model: ScriptedModel) -> None:
    """Turns with tool calls (good, bad JSON, unknown tool), steering, a max-tokens cut,
    a provider error, an empty answer and an abort."""
    hanging = anyio.Event()

    def answer_and_get_steered(request: Any) -> str:
        agent.steer("and in words?")
        return "three"

    def hang_until_aborted(request: Any) -> Any:
        hanging.set()
        return hang("thinking")

    model.extend(
        tool_calls(("add", {"a": 1, "b": 2}), ("add", "{not json"), ("nope", {})),
        answer_and_get_steered,
        text("three, in words"),
        max_tokens("cut off", ("add", {"a": 1, "b": 1})),
        fail("SERVER", "upstream down"),
        tool_calls(("add", {"a": 2, "b": 2})),
        text(""),
        hang_until_aborted,
    )
    with anyio.fail_after(LIMIT):
        await run_turn(agent, "what is 1+2?")
        await run_turn(agent, "and 1+1?")
        await run_turn(agent, "try again")
        await run_turn(agent, "2+2?")
        agent.send("one more")
        await hanging.wait()
        agent.abort()
        await agent.when_idle()
