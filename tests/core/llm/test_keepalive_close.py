"""A request sent on a pooled connection the server had just closed is sent again at
once on a new connection, silently and without counting against ``max_retries``: past
each stale pooled connection, only when nothing of the response had arrived and the
failure came at once (found by a review of
the providers: llama-server says ``Keep-Alive`` but closes the connection right after
each streamed answer; the next step's request went out on it and failed, ``closed the
connection before answering (RemoteProtocolError); retrying``, or failed the turn with
``max_retries: 0``)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio
import pytest
from llm_wire import Reply, WireServer, by_event, collect, sse
from test_llm_http import ASK, TEXT, fails, openai

from dsh.llm.openai import OpenAICompatibleModel

# what llama-server sends with each streamed answer, before it closes the connection
LLAMA_HEADERS = {
    "content-type": "text/event-stream",
    "connection": "keep-alive",
    "keep-alive": "timeout=5, max=100",
}
GONE = Reply(0, then="drop")  # the request is read, then the connection closed


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@asynccontextmanager
async def pooled(
    replies: list[Reply], max_retries: int = 0
) -> AsyncIterator[tuple[WireServer, OpenAICompatibleModel]]:
    """A server that answers once, then gives ``replies``, and a model that has had
    that answer: its connection is in the pool for the next request."""
    async with (
        WireServer([sse(TEXT), *replies]) as server,
        openai(server.url, max_retries=max_retries) as model,
    ):
        await collect(model, ASK, keep_open=True)
        yield server, model


async def test_a_server_that_closes_after_each_answer_is_answered_every_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the close comes just after the next request went out: it is reset, unread
    answers = [sse(TEXT, headers=LLAMA_HEADERS, close_after=0.2) for _ in range(3)]
    async with WireServer(answers) as server, openai(server.url, max_retries=0) as model:
        for _ in range(3):
            _, message = await collect(model, ASK, keep_open=True)
            assert message.content
    assert server.connections == 3  # each later request: lost on one, sent on the next
    assert len(server.requests) == 3
    assert _warnings(caplog) == []


async def test_a_request_the_closed_connection_lost_is_resent_silently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with pooled([GONE, sse(TEXT)]) as (server, model):
        _, message = await collect(model, ASK, keep_open=True)
    assert message.content
    assert len(server.requests) == 3
    assert server.connections == 2
    assert _warnings(caplog) == []


async def test_the_silent_resend_does_not_use_up_a_retry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with pooled([GONE, GONE, sse(TEXT)], max_retries=1) as (server, model):
        _, message = await collect(model, ASK, keep_open=True)
    assert message.content
    assert len(server.requests) == 4
    assert len(_warnings(caplog)) == 1  # the fresh connection's failure: said


async def test_a_resent_request_lost_on_a_new_connection_is_not_resent_again() -> None:
    async with pooled([GONE, GONE, sse(TEXT)]) as (server, model):
        err = await fails(model)
        assert len(server.requests) == 3
    assert err.code == "TRANSPORT"
    assert "closed the connection before answering" in err.message


async def test_a_new_connection_closed_before_an_answer_is_transport() -> None:
    async with WireServer([GONE, sse(TEXT)]) as server:
        err = await fails(openai(server.url, max_retries=0))
        assert len(server.requests) == 1
    assert err.code == "TRANSPORT"


async def test_an_answer_begun_on_a_reused_connection_is_never_resent() -> None:
    cut = sse(by_event(TEXT)[:2], then="drop")
    async with pooled([cut, sse(TEXT)], max_retries=3) as (server, model):
        err = await fails(model)
        assert len(server.requests) == 2
    assert err.code == "STREAM_CLOSED"


async def test_a_head_cut_on_a_reused_connection_is_not_resent_silently() -> None:
    # the server answered (a status line), then closed: it may have done the work
    head_only = Reply(200, b"", then="drop")
    async with pooled([head_only, sse(TEXT)]) as (server, model):
        err = await fails(model)
        assert len(server.requests) == 2
    assert err.code == "STREAM_CLOSED"


async def test_a_reused_connection_closed_after_working_on_the_request_is_a_retry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the server read the request and worked on it for a second before closing: it may
    # have done the work (and billed it), so it is not resent silently
    worked = Reply(0, then="drop", pause=1.0)
    async with pooled([worked, sse(TEXT)]) as (server, model):
        err = await fails(model)
        assert len(server.requests) == 2
    assert err.code == "TRANSPORT"


async def test_every_stale_pooled_connection_is_passed_over_silently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # two answers at once leave two pooled connections; the server closes both: the
    # request is resent past each, then answered on a new one
    slow = [sse(by_event(TEXT), pause=0.1) for _ in range(2)]
    async with (
        WireServer([*slow, GONE, GONE, sse(TEXT)]) as server,
        openai(server.url, max_retries=0) as model,
    ):
        async with anyio.create_task_group() as both:  # on asyncio and trio alike
            for _ in range(2):
                both.start_soon(partial(collect, model, ASK, keep_open=True))
        assert server.connections == 2
        _, message = await collect(model, ASK, keep_open=True)
    assert message.content
    assert len(server.requests) == 5
    assert server.connections == 3
    assert _warnings(caplog) == []
