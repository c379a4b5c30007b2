"""A cut-off answer's usage, beyond test_cut_off_answers.py (found by a mutation review):
the tokens a model reported before its stream was cut off (Anthropic reports the input
tokens first) stay on the kept message and count in the turn's usage."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
from loop_support import LIMIT, Models

from dsh import ModelRequest, Usage
from dsh.llm import Chunk, ModelInfo, TextDelta, UsageChunk
from dsh.testing import ScriptedModel, scripted_harness

EARLY = Usage(input_tokens=40, output_tokens=2, cache_read_tokens=7)


class UsageFirstThenHang:
    info = ModelInfo("early-usage", "test")

    def __init__(self) -> None:
        self.waiting = anyio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        yield UsageChunk(EARLY)
        yield TextDelta("Half an")
        self.waiting.set()
        await anyio.sleep_forever()


async def test_the_usage_reported_before_the_cut_is_kept_and_counted() -> None:
    model = UsageFirstThenHang()
    async with scripted_harness(ScriptedModel([]), plugins=[("m", Models(model))]) as h:
        agent = await h.agents.create("a", options={"model": "early-usage"})
        agent.send("hi")
        with anyio.fail_after(LIMIT):
            await model.waiting.wait()
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        events = list(agent.session.events)
    (message,) = [e.data["message"] for e in events if e.type == "assistant/message"]
    assert message["stop_reason"] == "aborted"
    assert message["usage"] == EARLY.to_data()
    assert events[-1].type == "turn/end"
    assert events[-1].data["usage"] == EARLY.to_data()
