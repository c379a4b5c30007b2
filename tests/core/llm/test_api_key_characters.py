"""An API key that cannot travel in an HTTP header (a character beyond ASCII, a line
break in its middle, a tab, a space, a control character) fails the request at once with
one AUTH line naming the key's variable and the character's place, never the key
(behaviour 13: the turn ends ``error`` with that code and message).

Before: a character beyond ASCII was a UnicodeEncodeError (an UNKNOWN crash naming
neither key nor variable); a line break mid-key was a TRANSPORT error, retried, whose
message quoted the HTTP client's repr of the header (a literal backslash-n, so the key's
halves no longer matched it and were not hidden): the whole key went into the message,
the warning log and turn/end."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from llm_wire import WireServer, collect, sse
from pydantic import ValidationError

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm._errors import error_from_transport
from dsh.llm._http import HttpModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.llm.providers import build_model
from dsh.messages import ModelRequest, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
HEAD = "sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA"  # 32 characters
TAIL = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
DONE = sse(b"data: [DONE]\n\n")


def openai(url: str, key: str) -> OpenAICompatibleModel:
    config = ModelConfig(
        provider="openai-compatible", model="m", base_url=url, api_key_env="MY_KEY"
    )
    return OpenAICompatibleModel("wire", config, env={"MY_KEY": key}, backoff=0.01)


def anthropic(url: str, key: str) -> HttpModel:
    """The provider's own variable, which no entry names (``build_model`` fills it in)."""
    config = ModelConfig(provider="anthropic", model="c", base_url=url)
    return build_model("wire", config, env={"ANTHROPIC_API_KEY": key})


async def refused(adapter: Any, key: str) -> tuple[ModelError, int]:
    """The error, and how many requests reached the server."""
    async with WireServer([DONE, DONE, DONE]) as server:
        with pytest.raises(ModelError) as caught:
            await collect(adapter(server.url, key), ASK)
    return caught.value, len(server.requests)


def shows(text: str, key: str) -> bool:
    return any(part in text for part in (key, HEAD[:16], TAIL[-16:], HEAD, TAIL))


@pytest.mark.parametrize(
    ("middle", "what"),
    [
        ("\n", "a line break"),
        ("\r\n", "a line break"),
        ("\t", "a tab"),
        (" ", "a space"),
        ("\x7f", "a control character (U+007F)"),
        ("\x00", "a control character (U+0000)"),
        ("\u200b", "U+200B ZERO WIDTH SPACE, which is not ASCII"),
        ("\u2026", "U+2026 HORIZONTAL ELLIPSIS, which is not ASCII"),
    ],
)
async def test_a_key_holding_an_unsendable_character_is_one_auth_line(
    middle: str, what: str, caplog: pytest.LogCaptureFixture
) -> None:
    key = HEAD + middle + TAIL
    with caplog.at_level(logging.DEBUG):
        error, sent = await refused(openai, key)
    assert (error.code, sent) == ("AUTH", 0)  # not sent, not retried
    assert error.message == (
        "model 'wire': the API key in the environment variable MY_KEY "
        f"(models.wire.api_key_env) cannot be sent: its character 33 (of {len(key)}) is "
        f"{what}; an HTTP header holds printable ASCII only (a key pasted across lines?)"
    )
    assert "\n" not in error.message
    assert not shows(error.message, key)
    assert not any(shows(record.getMessage(), key) for record in caplog.records)


async def test_a_providers_own_variable_is_named() -> None:
    error, _ = await refused(anthropic, "\u00e9" + TAIL)
    assert error.code == "AUTH"
    assert "the API key in the environment variable ANTHROPIC_API_KEY cannot be sent" in (
        error.message
    )
    assert "its character 1 (of 33) is U+00E9 LATIN SMALL LETTER E WITH ACUTE" in error.message


async def test_a_key_of_printable_ascii_is_sent() -> None:
    key = HEAD + "-_.~+/=" + TAIL
    async with WireServer([DONE]) as server:
        await collect(openai(server.url, key), ASK)
    assert server.requests[0].headers["authorization"] == f"Bearer {key}"


def test_a_refused_header_is_never_quoted() -> None:
    """The HTTP client's LocalProtocolError quotes the header it refused (its repr: a
    line break as backslash-n, which the key's redaction does not match): its text is
    not used, nor kept as the cause, and the request is not worth another try."""
    key = HEAD + "\n" + TAIL
    exc = httpx.LocalProtocolError(f"Illegal header value {('Bearer ' + key).encode()!r}")
    error = error_from_transport("m", exc, streaming=False, secret=key)
    assert error.code == "INVALID_REQUEST"
    assert "LocalProtocolError" in error.message and not shows(error.message, key)
    assert "Illegal header value" not in error.message
    assert error.__cause__ is None


async def test_a_header_value_with_a_line_break_is_not_retried() -> None:
    # dsh.yml refuses such a value when it is read; a config changed in code is not
    config = ModelConfig(provider="openai-compatible", model="m", base_url="http://x/v1")
    async with WireServer([DONE, DONE, DONE]) as server:
        update = {"base_url": server.url, "headers": {"x-a": "a\nb"}}
        model = OpenAICompatibleModel("wire", config.model_copy(update=update))
        with pytest.raises(ModelError) as caught:
            await collect(model, ASK)
    assert caught.value.code == "INVALID_REQUEST"
    assert "a\\nb" not in caught.value.message


async def test_a_header_value_beyond_ascii_is_refused_when_the_settings_are_read() -> None:
    async def use() -> None:
        config = ModelConfig(
            provider="openai-compatible", model="m", base_url="http://x/v1", headers={"x": "é"}
        )
        async with WireServer([DONE]) as server:
            url = {"base_url": server.url}
            await collect(OpenAICompatibleModel("wire", config.model_copy(update=url)), ASK)

    with pytest.raises((ValidationError, ModelError)) as caught:
        await use()
    assert "headers" in str(caught.value)
