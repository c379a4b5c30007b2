"""Anthropic's ``message_start`` counts stay with an answer cut off before its
``message_delta``, however the stream ends: the body ending without ``message_stop``,
the connection dropped or reset mid-body, or an error event.

Before: they were reported only when the body ended cleanly; a drop or a reset (raised
while reading, as STREAM_CLOSED) or an error event skipped them, so the cut answer and
the turn's usage counted 0 tokens of a prompt the provider had read (and billed).
"""

from __future__ import annotations

from contextlib import aclosing

import pytest
from llm_wire import WireServer, sse
from test_llm_stream_error_events import ANTHROPIC_START

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm import Chunk, UsageChunk
from dsh.llm.anthropic import AnthropicModel
from dsh.messages import ModelRequest, Usage, UserMessage
from dsh.testing import check_invariants, run_turn

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
ERROR_EVENT = (
    b"event: error\n"
    b'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
)
#: how the stream ends: its last pieces, how the server leaves, the error's code
ENDINGS = {
    "end": ([], "end", "STREAM_CLOSED"),
    "drop": ([], "drop", "STREAM_CLOSED"),
    "reset": ([], "reset", "STREAM_CLOSED"),
    "error event": ([ERROR_EVENT], "end", "SERVER"),
}


async def read(model: AnthropicModel, got: list[Chunk]) -> None:
    """The model's chunks for ``ASK`` into ``got``, until it raises."""
    async with aclosing(model.stream(ASK)) as stream:
        async for chunk in stream:
            got.append(chunk)


@pytest.mark.parametrize("ending", list(ENDINGS))
async def test_message_start_counts_come_before_the_error(ending: str) -> None:
    more, then, code = ENDINGS[ending]
    async with WireServer([sse([ANTHROPIC_START, *more], then=then)]) as server:
        model = AnthropicModel(
            "wire", ModelConfig(provider="anthropic", model="c", base_url=server.url)
        )
        got: list[Chunk] = []
        with pytest.raises(ModelError) as caught:
            await read(model, got)
        await model.aclose()
    assert caught.value.code == code
    assert got[-1] == UsageChunk(Usage(input_tokens=3))
    assert [c for c in got if isinstance(c, UsageChunk)] == [got[-1]]


@pytest.mark.parametrize("ending", ["reset", "error event"])
async def test_the_turn_counts_the_cut_answer_s_prompt(ending: str) -> None:
    more, then, code = ENDINGS[ending]
    config = (
        "models:\n  wire:\n    provider: anthropic\n    model: m\n    base_url: URL\n"
        "agents:\n  - id: main\n    model: wire\n"
    )
    async with WireServer([sse([ANTHROPIC_START, *more], then=then)]) as server:
        text = config.replace("URL", server.url)
        async with Harness(config_text=text, load_entry_points=False) as harness:
            agent = harness.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hi")
            check_invariants(agent.session.events)
    (cut,) = [e.data["message"] for e in events if e.type == "assistant/message"]
    assert cut["content"] == [{"type": "text", "text": "Su"}]
    assert cut["usage"]["input_tokens"] == 3
    end = events[-1]
    assert (end.type, end.data["error"]["code"]) == ("turn/end", code)
    assert end.data["usage"]["input_tokens"] == 3
