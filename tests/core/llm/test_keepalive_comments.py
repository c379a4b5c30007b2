"""A server that sends only SSE keep-alive comments (``: OPENROUTER PROCESSING``) or
blank lines held the turn for ever: ``read_timeout`` is the wait for the next bytes,
and those bytes came. Now pieces of comments and blank lines only are no activity:
once ``read_timeout`` seconds pass with no event, the stream fails with TIMEOUT naming
the setting, as a silent one does. Events between comments, and an event that comes
slowly in pieces, are activity."""

from __future__ import annotations

import time

import pytest
from llm_wire import WireServer, by_event, collect, every, sse
from test_llm_http import ASK, TEXT
from test_model_error_places import entry, fails

from dsh.messages import TextBlock

KEEP_ALIVES = {
    "comment": b": OPENROUTER PROCESSING\n\n",
    "comment-crlf": b": ping\r\n\r\n",
    "blank": b"\n",
}


@pytest.mark.parametrize("keep_alive", list(KEEP_ALIVES.values()), ids=list(KEEP_ALIVES))
async def test_keep_alives_alone_time_out_on_read_timeout(keep_alive: bytes) -> None:
    pieces = [by_event(TEXT)[0], *[keep_alive] * 30]  # 3 s of them, one every 0.1 s
    async with WireServer([sse(pieces, pause=0.1)]) as server:
        started = time.monotonic()
        err = await fails(entry("slow", server.url, timeout=30, read_timeout=0.4))
        took = time.monotonic() - started
    assert (err.code, err.message) == (
        "TIMEOUT",
        "model 'slow': no data within 0.4 s (models.slow.read_timeout; ReadTimeout)",
    )
    assert 0.4 <= took < 1.5


async def test_events_between_keep_alives_within_read_timeout_go_on() -> None:
    comment = KEEP_ALIVES["comment"]
    events = by_event(TEXT)
    # an event every 0.3 s for 0.9 s, two comments between each two
    pieces = [*(p for event in events[:3] for p in (event, comment, comment)), *events[3:]]
    async with WireServer([sse(pieces, pause=0.1)]) as server:
        _, message = await collect(entry("slow", server.url, timeout=30, read_timeout=0.4), ASK)
    assert isinstance(message.content[0], TextBlock)


async def test_an_event_coming_slowly_in_pieces_is_activity() -> None:
    first, *rest = by_event(TEXT)
    pieces = [*every(first, 30), *rest]  # one event over more than read_timeout
    assert len(every(first, 30)) * 0.15 > 0.6
    async with WireServer([sse(pieces, pause=0.15)]) as server:
        _, message = await collect(entry("slow", server.url, timeout=30, read_timeout=0.3), ASK)
    assert isinstance(message.content[0], TextBlock)
