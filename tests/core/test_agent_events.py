"""``AgentHandle.events()``: a program streams one agent's events to its UI without a
plugin of its own (the second embedding study wrote 30 lines for it: a session_event
plugin routing by session id, which leaked every stream it opened)."""

from __future__ import annotations

import logging

import anyio
import pytest
from loop_support import LIMIT, agent_on

from dsh._watch import NAME, EventWatch
from dsh.session import SessionEvent
from dsh.testing import ScriptedModel, hang, text


async def read_turn(events: anyio.abc.ObjectReceiveStream[SessionEvent]) -> list[SessionEvent]:
    got = []
    async for event in events:
        got.append(event)
        if event.type == "turn/end":
            return got
    return got


async def test_an_agents_events_arrive_as_they_are_logged_and_only_its_own() -> None:
    model = ScriptedModel([text("Hello there"), text("other")])
    async with agent_on(model) as (harness, agent):
        other = await harness.agents.create("b", options={"model": "scripted"})
        async with agent.events() as events, other.events() as others:
            agent.send("hi")
            with anyio.fail_after(LIMIT):
                mine = await read_turn(events)
            other.send("hello")
            with anyio.fail_after(LIMIT):
                theirs = await read_turn(others)
        assert mine == list(agent.session.events)  # every event, in order
        assert [e.seq for e in theirs] == [e.seq for e in other.session.events]
        assert {e.type for e in mine} >= {"turn/start", "assistant/chunk", "turn/end"}


async def test_several_readers_see_every_event_and_leaving_stops_the_watch(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel([text("one"), text("two")])
    async with agent_on(model) as (harness, agent):
        async with agent.events() as first, agent.events() as second:
            agent.send("hi")
            with anyio.fail_after(LIMIT):
                a, b = await read_turn(first), await read_turn(second)
            assert a == b and a
        watch = harness.pm.get_plugin(NAME)
        assert isinstance(watch, EventWatch) and watch.readers == {}
        with caplog.at_level(logging.WARNING):
            with anyio.fail_after(LIMIT):
                await agent.prompt("again")  # nobody watches: nothing delivered, no error
        assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_a_reader_that_stops_reading_does_not_hold_the_agent_up() -> None:
    model = ScriptedModel([hang("a", "b", "c")])
    async with agent_on(model) as (_, agent):
        async with agent.events() as events:
            agent.send("hi")
            with anyio.fail_after(LIMIT):
                async for event in events:
                    if event.type == "assistant/chunk":
                        break  # the agent streams on; its events wait in the stream
            agent.abort()
            with anyio.fail_after(LIMIT):
                await agent.when_idle()
                rest = await read_turn(events)
        assert rest[-1].type == "turn/end" and rest[-1].data["reason"] == "aborted"
