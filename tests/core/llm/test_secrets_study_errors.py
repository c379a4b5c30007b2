"""Where a model API key can leak from the HTTP adapters (a study): failures whose text
quotes the key, the logs written while retrying, and an answer that carries the key.
Each test follows one path; tests marked xfail show a leak that exists today (see
reason). A key "shows" when ``dsh._secrets.redact`` would hide something: the whole key
or a run of at least half of it."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from llm_wire import Reply, WireServer, collect, error, sse

from dsh._secrets import redact
from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage
from dsh.testing import run_turn

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"  # sk-test- and 40 more
DONE = sse(b"data: [DONE]\n\n")


def shows(text: str) -> bool:
    return redact(text, (KEY,)) != text


def openai(url: str, key: str = KEY, **settings: Any) -> OpenAICompatibleModel:
    config = ModelConfig(
        provider="openai-compatible", model="m", base_url=url, api_key_env="K", **settings
    )
    return OpenAICompatibleModel("wire", config, env={"K": key}, backoff=0.01)


def anthropic(url: str, key: str = KEY, **settings: Any) -> AnthropicModel:
    config = ModelConfig(provider="anthropic", model="c", base_url=url, api_key_env="K", **settings)
    return AnthropicModel("wire", config, env={"K": key}, backoff=0.01)


async def failure(model: Any) -> ModelError:
    with pytest.raises(ModelError) as caught:
        await collect(model, ASK)
    return caught.value


# -- leaks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("adapter", [openai, anthropic])
@pytest.mark.parametrize("end", ["\r", "\n", "\r\n"])
async def test_a_key_with_a_line_end_is_sent_without_it(adapter: Any, end: str) -> None:
    """A key exported from a file with CRLF line ends keeps its line end: the HTTP client
    refused the header and quoted it, key and all, in a TRANSPORT error (the terminal,
    --json, the session file). The key is sent without the whitespace around it."""
    async with WireServer([sse(b"")]) as server:
        with pytest.raises(ModelError) as caught:  # an empty stream: the request was sent
            await collect(adapter(server.url, KEY + end, max_retries=0), ASK)
    assert caught.value.code == "STREAM_CLOSED"
    sent = server.requests[0].headers
    assert (sent.get("authorization"), sent.get("x-api-key")) in (
        (f"Bearer {KEY}", None),
        (None, KEY),
    )


async def test_a_refused_response_header_echoing_the_key_is_not_quoted() -> None:
    """Leak path: the key echoed in a malformed response header -> the TRANSPORT
    error's message."""
    echoed = {"content-type": "application/json", f"authorization : Bearer {KEY}": "x"}
    async with WireServer([Reply(401, b"{}", echoed)]) as server:
        err = await failure(openai(server.url, max_retries=0))
    assert err.code == "TRANSPORT"
    assert not shows(err.message)
    # dsh -v prints the cause: the client's exception, which quotes the line whole
    assert err.__cause__ is None and err.__suppress_context__


@pytest.mark.parametrize("where", ["status", "stream"])
async def test_an_error_object_without_a_message_is_not_cut_through_the_key(
    where: str,
) -> None:
    """Leak path: an error body with no ``message`` that echoes the key near its
    300th character (HTTP 401, or an error event inside the stream) -> the message."""
    inner = {"type": "invalid_api_key", "pad": "", "key": KEY}
    inner["pad"] = "x" * (300 - 30 - json.dumps(inner).index(KEY))  # 30 before the cut
    body = {"error": inner}
    event = b"data: " + json.dumps(body).encode() + b"\n\n"
    reply = error(401, body) if where == "status" else sse(event)
    async with WireServer([reply]) as server:
        err = await failure(openai(server.url, max_retries=0))
    assert json.dumps(inner)[:300].endswith(KEY[:30])  # the cut falls inside the key
    assert not shows(err.message)


async def test_a_key_the_server_quotes_cut_short_is_hidden() -> None:
    """Leak path: a 401 message quoting the first 30 of the key's 48 characters -> the
    AUTH error's message."""
    payload = {"error": {"message": f"Incorrect API key provided: {KEY[:30]}..."}}
    async with WireServer([error(401, payload)]) as server:
        err = await failure(openai(server.url))
    assert err.code == "AUTH"
    assert not shows(err.message)


async def test_a_key_in_the_streamed_answer_stays_out_of_the_session() -> None:
    """Leak path: the server echoes the key in the answer's text -> the session's
    events (the session file, --json, the terminal)."""
    chunk = {"choices": [{"index": 0, "delta": {"content": f"key: {KEY}"}}]}
    stop = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    body = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in (chunk, stop)]
    config = (
        "models:\n  wire:\n    provider: openai-compatible\n    model: m\n"
        "    base_url: {url}\n    api_key_env: K\nagents:\n  - id: main\n    model: wire\n"
    )
    async with WireServer([sse([*body, b"data: [DONE]\n\n"])]) as server:
        text = config.format(url=server.url)
        async with Harness(config_text=text, load_entry_points=False, env={"K": KEY}) as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hi")
    assert events[-1].data["reason"] == "completed"
    assert not shows(json.dumps([e.data for e in agent.session.events]))


# -- safe paths ----------------------------------------------------------------------------


async def test_a_redirect_to_an_address_holding_the_key_shows_it_hidden() -> None:
    """Path: a 3xx whose Location carries the key in its query -> the message names
    the target with the key hidden (redirects are not followed, so no header goes
    there either)."""
    moved = Reply(307, b"", {"location": f"https://elsewhere.example/v1?key={KEY}"})
    async with WireServer([moved]) as server:
        err = await failure(openai(server.url))
        assert len(server.requests) == 1
    assert "redirects to https://elsewhere.example/v1?key=***;" in err.message
    assert not shows(err.message)


async def test_no_log_record_holds_the_key_even_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    """Path: python logging, every logger at DEBUG (httpx and httpcore included), over a
    500 page that echoes the key (retried: dsh warns) then a 401 that echoes it."""
    page = f"<html>bad gateway for Bearer {KEY}</html>".encode()
    replies = [
        Reply(500, page, {"content-type": "text/html"}),
        error(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}}),
    ]
    with caplog.at_level(logging.DEBUG):
        async with WireServer(replies) as server:
            err = await failure(openai(server.url, max_retries=1))
    assert err.code == "AUTH"
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "bad gateway for Bearer ***" in warned[0]
    assert any(r.name.startswith("httpcore") for r in caplog.records)  # DEBUG was on
    for record in caplog.records:
        assert not shows(record.getMessage()), record.name
