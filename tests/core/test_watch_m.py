"""``AgentHandle.events()`` (``dsh._watch``), beyond test_agent_events.py (found by a
mutation review): a reader that closes its stream before it leaves the block is dropped
at the next event, and the other readers go on receiving."""

from __future__ import annotations

import anyio
from loop_support import LIMIT, agent_on

from dsh._watch import NAME, EventWatch
from dsh.testing import ScriptedModel, text


async def test_a_reader_that_closed_its_stream_is_dropped_at_the_next_event() -> None:
    model = ScriptedModel([text("one")])
    async with agent_on(model) as (harness, agent):
        async with agent.events() as gone, agent.events() as staying:
            watch = harness.pm.get_plugin(NAME)
            assert isinstance(watch, EventWatch)
            assert len(watch.readers[agent.session.id]) == 2
            await gone.aclose()  # this reader has had enough, still inside its block
            with anyio.fail_after(LIMIT):
                result = await agent.prompt("hi")
            assert len(watch.readers[agent.session.id]) == 1  # dropped, not kept to the end
            got = []
            while len(got) < len(result.events):
                got.append(staying.receive_nowait())
            assert tuple(got) == result.events
        assert watch.readers == {}
