"""``AgentHandle.prompt()`` returns once the turn that took its prompt has ended, not
when the agent is next idle: on an agent others keep sending to, a caller gets its
answer when it is there (a time limit around ``prompt()`` no longer runs out on an
answer that is ready)."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest
from loop_support import LIMIT, Seen, agent_on, ends

from dsh import hookimpl
from dsh.errors import DshError
from dsh.session import SessionEvent
from dsh.testing import ScriptedModel, hang, text


class Started:
    """``started[n]`` is an event set once turn ``n`` has started."""

    def __init__(self) -> None:
        self._turns: dict[int, anyio.Event] = {}

    def __getitem__(self, turn: int) -> anyio.Event:
        return self._turns.setdefault(turn, anyio.Event())

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:
        if event.type == "turn/start":
            self[event.data["turn"]].set()


async def test_prompt_returns_when_its_turn_ends_while_a_later_turn_runs() -> None:
    seen = Seen()
    model = ScriptedModel([hang("theirs"), text("mine, answered"), hang("theirs again")])
    async with agent_on(model, ("seen", seen), queue_mode="one-at-a-time") as (_, agent):
        agent.send("theirs")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()

        async def others_keep_sending() -> None:
            await anyio.lowlevel.checkpoint()  # mine is queued first
            agent.send("theirs again")
            agent.abort()  # the first turn ends; mine runs, then theirs hangs

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(others_keep_sending)
                result = await agent.prompt("mine")
        assert (result.turn, result.reason, result.text) == (2, "completed", "mine, answered")
        assert agent.status == "running"  # theirs goes on, and was not waited for
        agent.cancel()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert ends(agent.session.events) == [(1, "aborted"), (2, "completed"), (3, "aborted")]


async def test_a_batched_prompt_returns_with_its_batch_not_the_turns_after_it() -> None:
    seen, started = Seen(), Started()
    model = ScriptedModel([hang("first"), hang("both, in part"), hang("later")])
    async with agent_on(model, ("seen", seen), ("started", started)) as (_, agent):
        agent.send("first")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()

        async def theirs_batched_then_more() -> None:
            await anyio.lowlevel.checkpoint()
            agent.send("theirs, batched with mine")
            agent.abort()
            await started[2].wait()  # mine and theirs are taken
            agent.send("later")  # a turn of its own after mine
            agent.abort()

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(theirs_batched_then_more)
                result = await agent.prompt("mine")
        assert (result.turn, result.reason) == (2, "aborted")
        assert result.prompts == ["mine", "theirs, batched with mine"]
        assert agent.agent.turns == 3  # later's turn runs, and was not waited for
        agent.cancel()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()


async def test_a_prompt_dropped_by_cancel_says_so_while_the_next_turn_runs() -> None:
    """``cancel(); send("something else")``, as a chat front end does when its user
    interrupts: a ``prompt()`` waiting behind the cancelled turn is told at once that
    its prompt was dropped, and the new turn, which never took it, goes on."""
    seen, started = Seen(), Started()
    model = ScriptedModel([hang("first"), hang("the next one")])
    async with agent_on(model, ("seen", seen), ("started", started)) as (_, agent):
        agent.send("first")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()

        async def interrupt() -> None:
            await anyio.lowlevel.checkpoint()  # mine is queued
            agent.cancel()  # drops mine, aborts the first turn
            agent.send("next")

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(interrupt)
                with pytest.raises(DshError, match="dropped before a turn took it"):
                    await agent.prompt("mine")
        assert ends(agent.session.events) == [(1, "aborted")]
        with anyio.fail_after(LIMIT):
            await started[2].wait()  # the next turn starts and goes on
        assert agent.status == "running"
        agent.cancel()
