"""The body iterators dsh stops reading early are closed there and then, not left to the
garbage collector: asyncio closes such a generator in a task of its own, later, without a
word; trio warns (``ResourceWarning: Async generator ... was garbage collected``). Two
places stop early: an error's body read up to a limit (``HttpModel._failed``), and an
answer's stream abandoned mid-way (``_event_data``: abort, cancel, a stalled server)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from dsh.config import ModelConfig
from dsh.llm._not_streamed import ERROR_BODY_LIMIT as _ERROR_BODY_LIMIT
from dsh.llm._sse import event_data as _event_data
from dsh.llm.openai import OpenAICompatibleModel


class Response:
    """What dsh reads of an ``httpx.Response``, with a body that notes when it closes."""

    def __init__(self, status: int, piece: bytes) -> None:
        self.status_code = status
        self.headers = httpx.Headers({"content-type": "text/event-stream"})
        self.piece = piece
        self.closed = False

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        try:
            while True:  # endless: only the reader stops it
                yield self.piece
        finally:
            self.closed = True

    async def aclose(self) -> None:
        pass


async def test_an_error_body_read_up_to_the_limit_is_closed_before_the_error_returns() -> None:
    model = OpenAICompatibleModel(
        "m", ModelConfig(provider="openai-compatible", model="m", base_url="http://127.0.0.1:9/v1")
    )
    response = Response(500, b"x" * (_ERROR_BODY_LIMIT // 4))
    error, _ = await model._failed(response, None, "/chat/completions")  # type: ignore[arg-type]
    assert response.closed
    assert error.code == "SERVER"


async def test_an_answer_stream_abandoned_mid_way_closes_the_body_with_it() -> None:
    response = Response(200, b'data: {"a": 1}\n\n')
    events = _event_data(response)  # type: ignore[arg-type]
    assert await anext(events) == '{"a": 1}'
    await events.aclose()
    assert response.closed
