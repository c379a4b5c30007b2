"""The embedding study (see test_embedding_study_users.py): streaming events to slow,
raising and disconnecting clients, and event streams of disposed agents. Every wait is
on an event the test can see; ``fail_after`` is only a guard against a hang.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.to_thread
from embedding_study_support import GUARD, Service, is_chunk, other_tasks

from dsh.agent import AgentHandle
from dsh.testing import (
    ScriptedModel,
    hang,
    scripted_harness,
    text,
    tool_calls,
)

# -- streaming events to a client --------------------------------------------------------


async def test_a_slow_reader_never_holds_the_agent_back_and_misses_nothing() -> None:
    model = ScriptedModel([text("a", "b", "c")])
    with anyio.fail_after(GUARD):
        async with scripted_harness(model, load_entry_points=False) as harness:
            agent = await harness.agents.create("u", options={"model": "scripted"})
            async with agent.events() as events:
                result = await agent.prompt("hi")  # nothing has read a single event
                assert result.reason == "completed"
                got = []
                async for event in events:
                    got.append(event)
                    if event.type == "turn/end":
                        break
            assert [e.seq for e in got] == [e.seq for e in agent.session.events]
    assert other_tasks() == set()


async def test_a_reader_that_raises_leaves_the_agent_working_and_is_unwatched() -> None:
    model = ScriptedModel([hang("part"), text("next")])
    with anyio.fail_after(GUARD):
        async with scripted_harness(model, load_entry_points=False) as harness:
            agent = await harness.agents.create("u", options={"model": "scripted"})
            left: BaseException | None = None
            try:
                async with agent.events() as events:
                    agent.send("hi")
                    async for event in events:
                        if is_chunk(event):
                            raise ConnectionResetError("client went away")
            except ConnectionResetError as exc:
                left = exc
            assert left is not None  # the reader's own error, as it raised it
            watch = harness.pm.get_plugin("dsh-events")
            assert not watch.readers  # the reader that left is no longer fed, at once
            assert agent.status == "running"  # the turn goes on without its reader
            agent.abort()
            result = await agent.prompt("again")
            assert (result.reason, result.text) == ("completed", "next")
    assert other_tasks() == set()


async def test_a_cancelled_reader_client_disconnect_leaves_the_turn_running() -> None:
    service = Service()
    model = ScriptedModel([tool_calls(("gate", {})), text("done")])
    with anyio.fail_after(GUARD):
        async with scripted_harness(
            model, plugins=[("service", service)], load_entry_points=False
        ) as harness:
            agent = await harness.agents.create("u", options={"model": "scripted"})
            reader_saw_call = anyio.Event()

            async def client() -> None:
                async with agent.events() as events:
                    async for event in events:
                        if event.type == "tool/call":
                            reader_saw_call.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(client)
                await anyio.wait_all_tasks_blocked()
                agent.send("work")
                await reader_saw_call.wait()
                tg.cancel_scope.cancel()  # the websocket closed
            service.gates["u"].set()
            await agent.when_idle()
            result = _turns(agent)[-1]
            assert (result.reason, result.text) == ("completed", "done")
    assert other_tasks() == set()


def _turns(agent: AgentHandle) -> list[Any]:
    from dsh.turns import turns

    return turns(agent.session.events)


async def test_an_event_stream_ends_when_its_agent_is_disposed() -> None:
    model = ScriptedModel([text("x")])
    async with scripted_harness(model, load_entry_points=False) as harness:
        agent = await harness.agents.create("u", options={"model": "scripted"})
        got: list[str] = []
        ended = anyio.Event()

        async def client() -> None:
            async with agent.events() as events:
                async for event in events:
                    got.append(event.type)
            ended.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(client)
            await anyio.wait_all_tasks_blocked()
            await agent.prompt("hi")
            await agent.dispose()
            await anyio.wait_all_tasks_blocked()  # a closed stream would have ended by now
            tg.cancel_scope.cancel()
        assert ended.is_set()
        assert got[-1] == "turn/end"


async def test_an_event_stream_of_an_agent_disposed_already_ends_at_once() -> None:
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        agent = await harness.agents.create("u", options={"model": "scripted"})
        await agent.dispose()
        with anyio.fail_after(GUARD):
            async with agent.events() as events:
                assert [event async for event in events] == []
