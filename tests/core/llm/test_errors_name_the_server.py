"""An error status, an unreadable chunk, an error inside the stream, an answer that is
no event stream and a stream that ends early name the server that sent it (scheme, host
and port: never base_url's path or query, where a key may be written), as a timeout's
message does (found by a review of the providers: they named the model alone, and with
several models behind gateways the user could not tell which server failed)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import Reply, WireServer, error, openai_chunk, sse
from test_llm_http import KEY, anthropic, fails, openai

from dsh.llm._http import HttpModel

QUERY_KEY = "sk-query-SECRET-987654321"


def _at(server: WireServer) -> str:
    return " from the server at " + server.url.removesuffix("/v1")


def _data(chunk: Any) -> bytes:
    return b"data: %s\n\n" % (chunk if isinstance(chunk, bytes) else json.dumps(chunk).encode())


async def _fails(reply: Reply, adapter: Any = openai) -> tuple[str, str, str]:
    """(the error's code, its message, where the server is named in it)."""
    async with WireServer([reply]) as server:
        at = _at(server)
        model: HttpModel = adapter(f"{server.url}?api-key={QUERY_KEY}", max_retries=0)
        err = await fails(model)
    assert QUERY_KEY not in err.message and "/v1" not in err.message
    assert KEY not in err.message
    return err.code, err.message, at


async def test_an_error_status_names_the_server() -> None:
    code, message, at = await _fails(error(500, {"error": {"message": "it broke"}}))
    assert code == "SERVER"
    assert message == f"model 'wire': HTTP 500{at}: it broke"


async def test_an_unreadable_chunk_names_the_server() -> None:
    code, message, at = await _fails(sse(_data(b'{"choices": [')))
    assert code == "MALFORMED_RESPONSE"
    assert message.startswith("model 'wire': unreadable chunk '{\"choices\": ['" + at + " (")


async def test_an_error_in_an_openai_stream_names_the_server() -> None:
    body = _data(openai_chunk({"content": "Hi"})) + _data({"error": {"message": "gone away"}})
    code, message, at = await _fails(sse(body))
    assert code == "SERVER"
    assert message == f"model 'wire': error in the stream{at}: gone away"


async def test_an_error_event_in_an_anthropic_stream_names_the_server() -> None:
    event = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = b"event: error\n" + _data(event)
    code, message, at = await _fails(sse(body), anthropic)
    assert code == "SERVER"
    assert message == f"model 'wire': error in the stream{at}: overloaded_error: Overloaded"


@pytest.mark.parametrize(
    ("payload", "content_type", "said"),
    [
        (b'{"error": {"message": "no"}}', "application/json", "HTTP 200{at} (application/json, "),
        (b"<html>login</html>", "text/html", "expected a text/event-stream answer{at}, got "),
        (b"#login", "text/plain", "expected a text/event-stream answer{at}, got "),
    ],
)
async def test_an_answer_that_is_no_event_stream_names_the_server(
    payload: bytes, content_type: str, said: str
) -> None:
    _, message, at = await _fails(Reply(200, payload, {"content-type": content_type}))
    assert said.format(at=at) in message


async def test_a_stream_that_ends_early_names_the_server() -> None:
    code, message, at = await _fails(sse(_data(openai_chunk({"content": "Hi"}))))
    assert code == "STREAM_CLOSED"
    assert message == f"model 'wire': the stream{at} ended before [DONE]"
