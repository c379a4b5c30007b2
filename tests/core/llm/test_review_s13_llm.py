"""Review of the key-hiding and redacted-thinking changes (session 13): tests that kill
the hand mutants the existing tests let through, and one xfail for a bug found."""

from __future__ import annotations

import json
import warnings
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from llm_wire import WireServer, collect, error

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm import Assembler, Finish, ReasoningDelta
from dsh.llm._errors import error_from_transport
from dsh.llm.choose import choose_model
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import AssistantMessage, ModelRequest, ReasoningBlock, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"  # 48 characters


def openai(url: str, key: str = KEY, **settings: Any) -> OpenAICompatibleModel:
    config = ModelConfig(
        provider="openai-compatible", model="m", base_url=url, api_key_env="K", **settings
    )
    return OpenAICompatibleModel("wire", config, env={"K": key}, backoff=0.01)


# -- an error object without a message: the key is hidden before the cut ----------------


async def test_a_cut_leaving_less_than_half_of_the_key_shows_none_of_it() -> None:
    """_errors._details used to cut a message-less error object at 300 characters before
    the key was hidden: a cut leaving less than half of the key left that piece, which
    partial hiding (half or more) does not catch. Hidden first, nothing of it shows."""
    inner = {"type": "invalid_api_key", "pad": "", "key": KEY}
    inner["pad"] = "x" * (300 - 12 - json.dumps(inner).index(KEY))  # 12 before the cut
    assert json.dumps(inner)[:300].endswith(KEY[:12])
    async with WireServer([error(401, {"error": inner})]) as server:
        with pytest.raises(ModelError) as caught:
            await collect(openai(server.url, max_retries=0), ASK)
    assert caught.value.code == "AUTH"
    assert KEY[:12] not in caught.value.message
    assert "***" in caught.value.message


# -- transport errors ----------------------------------------------------------------------


def test_a_transport_error_quoting_half_the_key_keeps_no_cause() -> None:
    """The cause is dropped when the client's text shows the key whole or half of it."""
    exc = httpx.LocalProtocolError(f"Illegal header value b'Bearer {KEY[:30]}'")
    err = error_from_transport("m", exc, streaming=False, secret=KEY)
    assert KEY[:24] not in err.message
    assert err.__cause__ is None and err.__suppress_context__


def test_a_transport_error_without_the_key_keeps_its_cause() -> None:
    exc = httpx.ConnectError("connection refused")
    err = error_from_transport("m", exc, streaming=True, secret=KEY)
    assert err.code == "STREAM_CLOSED" and "connection refused" in err.message
    assert err.__cause__ is exc and err.__suppress_context__


class _Breaks(httpx.AsyncByteStream):
    """A streamed answer that sends one event, then fails with the key in its text."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b'data: {"choices": [{"index": 0, "delta": {"content": "hi"}}]}\n\n'
        raise httpx.ReadError(f"peer sent a bad line: Bearer {KEY}")

    async def aclose(self) -> None:
        pass


async def test_a_stream_cut_off_by_an_error_quoting_the_key_hides_it_and_its_cause() -> None:
    """_http.events (the response had begun): the key is hidden in the STREAM_CLOSED
    message and the client's exception is not raised as the cause."""

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_Breaks())

    model = openai("http://wire.invalid/v1", max_retries=0)
    model._client = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    model._loop = anyio.lowlevel.current_token()
    try:
        with pytest.raises(ModelError) as caught:
            await collect(model, ASK)
    finally:
        await model.aclose()
    err = caught.value
    assert err.code == "STREAM_CLOSED"
    assert KEY not in err.message and "Bearer ***" in err.message
    assert err.__cause__ is None and err.__suppress_context__


# -- a key that is only whitespace ----------------------------------------------------------


async def test_a_key_of_whitespace_only_is_no_key_when_choosing_the_model() -> None:
    """A CRLF .env's empty ``ANTHROPIC_API_KEY=`` leaves a lone CR: no key (it chose
    Anthropic, whose request then said the key was not set)."""
    env = {"ANTHROPIC_API_KEY": "\r", "OPENAI_API_KEY": "k-openai"}
    async with Harness(load_entry_points=False) as harness:
        choice = choose_model(harness, None, env)
        assert (choice.name, choice.why) == ("openai:gpt-4.1-mini", "OPENAI_API_KEY is set")


# -- redacted reasoning ----------------------------------------------------------------------


def test_a_redacted_delta_keeps_the_signature_it_came_with() -> None:
    """A third-party model's chunk may carry both: the assembler keeps both."""
    assembler = Assembler()
    for chunk in (ReasoningDelta("", signature="sig", redacted="opaque"), Finish("stop")):
        assembler.add(chunk)
    assert assembler.message().content == (
        ReasoningBlock(text="", signature="sig", redacted="opaque"),
    )


def test_a_redacted_value_of_another_type_is_dumped_by_pydantic() -> None:
    """to_data's fast path takes only a str (or None) ``redacted``: a value a model_copy
    put in unchecked goes through pydantic's serializer, as for the other fields."""
    block = ReasoningBlock(text="", redacted="opaque").model_copy(update={"redacted": b"opaque"})
    message = AssistantMessage(content=(block,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns of the unexpected bytes
        assert message.to_data() == message.model_dump(mode="json")
        assert message.to_data()["content"][0]["redacted"] == "opaque"
