"""A stream that ends in the middle of an event: an error object there is the server's
error, anything else is quoted (short, escaped) in the STREAM_CLOSED message (found by
a review of the providers: a 200 ``text/event-stream`` whose body was a bare JSON error,
``{"error": {"message": "You exceeded your current quota", ...}}`` with no ``data:``,
ended as ``the stream ended before [DONE]``, the server's message lost)."""

from __future__ import annotations

import json

import pytest
from llm_wire import WireServer, by_event, collect, sse, unserved
from test_llm_http import ASK, KEY, TEXT, anthropic, fails, openai

from dsh.llm._http import HttpModel

QUOTA = {
    "error": {"message": f"You exceeded your current quota {KEY}", "type": "insufficient_quota"}
}
ADAPTERS = [openai, anthropic]


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize("indent", [None, 2])
async def test_a_bare_json_error_is_the_servers_error(
    adapter: type[HttpModel], indent: int | None
) -> None:
    async with WireServer([sse(json.dumps(QUOTA, indent=indent).encode())]) as server:
        err = await fails(adapter(server.url))  # type: ignore[operator]
    assert err.code != "STREAM_CLOSED"
    assert "You exceeded your current quota" in err.message


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_an_error_data_line_cut_before_its_blank_line_is_the_servers_error(
    adapter: type[HttpModel],
) -> None:
    body = b"data: " + json.dumps(QUOTA).encode() + b"\n"
    async with WireServer([sse(body)]) as server:
        err = await fails(adapter(server.url))  # type: ignore[operator]
    assert "You exceeded your current quota" in err.message


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_other_leftovers_are_quoted_short_and_escaped(adapter: type[HttpModel]) -> None:
    junk = b"<html>upstream \x1b[31mfailed " + KEY.encode() + b" " + b"x" * 500
    async with WireServer([sse(junk)]) as server:
        err = await fails(adapter(server.url))  # type: ignore[operator]
    assert err.code == "STREAM_CLOSED"
    assert "'<html>upstream \\x1b[31mfailed " in err.message
    assert "x" * 200 not in err.message


async def test_a_stream_cut_at_an_event_boundary_quotes_nothing() -> None:
    cut = TEXT.split(b'"finish_reason":"stop"')[0].rsplit(b"data: ", 1)[0]
    async with WireServer([sse(cut)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "STREAM_CLOSED"
    assert unserved(err.message).endswith("the stream ended before [DONE]")


async def test_done_without_its_blank_line_after_a_finish_is_whole() -> None:
    events = by_event(TEXT)
    body = b"".join(events[:-1]) + b"data: [DONE]\n"
    async with WireServer([sse(body)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert message.content


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_an_error_field_cut_before_its_blank_line_is_the_servers_error(
    adapter: type[HttpModel],
) -> None:
    # llama.cpp's ``error: {...}`` as the stream's last line, without its blank line
    body = b"error: " + json.dumps(QUOTA["error"]).encode() + b"\n"
    async with WireServer([sse(body)]) as server:
        err = await fails(adapter(server.url))  # type: ignore[operator]
    assert "You exceeded your current quota" in err.message
    assert KEY not in err.message


def test_the_leftover_names_an_unfinished_events_error_field() -> None:
    from dsh.llm._sse import SSEParser

    parser = SSEParser()
    assert parser.feed(b"error: slot unavailable\n") == []
    assert "slot unavailable" in parser.leftover()
