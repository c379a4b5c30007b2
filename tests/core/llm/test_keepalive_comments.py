"""A gateway (OpenRouter) sends SSE keep-alive comments (``: OPENROUTER PROCESSING``)
while a slow upstream, a reasoning model, has not produced its first token. They are
bytes the server sends, so they count as activity for ``read_timeout`` (as for httpx
and the OpenAI SDK): the answer that comes after them, later than ``read_timeout``
from the request, is read. Was: comments were no activity, and such a request failed
with TIMEOUT after ``read_timeout`` (60 s by default) though the server was working."""

from __future__ import annotations

import pytest
from llm_wire import WireServer, by_event, collect, sse
from test_llm_http import ASK, TEXT
from test_model_error_places import entry

from dsh.messages import TextBlock

KEEP_ALIVES = {
    "comment": b": OPENROUTER PROCESSING\n\n",
    "comment-crlf": b": ping\r\n\r\n",
    "blank": b"\n",
}


@pytest.mark.parametrize("keep_alive", list(KEEP_ALIVES.values()), ids=list(KEEP_ALIVES))
async def test_a_slow_first_event_behind_keep_alives_answers(keep_alive: bytes) -> None:
    pieces = [*[keep_alive] * 12, *by_event(TEXT)]  # 1.2 s of them, one every 0.1 s
    async with WireServer([sse(pieces, pause=0.1)]) as server:
        _, message = await collect(entry("slow", server.url, timeout=30, read_timeout=0.4), ASK)
        assert len(server.requests) == 1
    assert isinstance(message.content[0], TextBlock)
