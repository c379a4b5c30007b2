"""A placeholder API key of a local server (``none``, ``EMPTY``, ``1234``: fewer than
8 characters) is not hidden in an error message, as it is not in the answer's stream
(``dsh._secrets.MIN_LENGTH``): it was, and the server's words were garbled ('unknown
tool ***xistent', 'maximum context length is ***5 tokens'). A key of 8 characters or
more still is."""

from __future__ import annotations

from typing import Any

import pytest
from llm_wire import WireServer, error
from test_llm_http import fails

from dsh._secrets import MIN_LENGTH
from dsh.config import ModelConfig
from dsh.llm.openai import OpenAICompatibleModel


def local(url: str, key: str) -> OpenAICompatibleModel:
    config = ModelConfig(
        provider="openai-compatible", model="m", base_url=url, api_key_env="LOCAL_KEY"
    )
    return OpenAICompatibleModel("local", config, env={"LOCAL_KEY": key}, backoff=0.01)


def said(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("none", "none of the tools match: unknown tool 'nonexistent'"),
        ("1234", "maximum context length is 12345 tokens; request 123400"),
        ("EMPTY", "The model `EMPTY-7B` does not exist."),
        ("k" * (MIN_LENGTH - 1), "the key was " + "k" * (MIN_LENGTH - 1)),
    ],
)
async def test_a_short_key_is_not_hidden_in_an_error(key: str, message: str) -> None:
    async with WireServer([error(400, said(message))]) as server:
        err = await fails(local(server.url, key))
    assert message in err.message
    assert "***" not in err.message


async def test_a_key_of_min_length_is_hidden_in_an_error() -> None:
    key = "k" * MIN_LENGTH
    async with WireServer([error(400, said(f"the key was {key}"))]) as server:
        err = await fails(local(server.url, key))
    assert "the key was ***" in err.message and key not in err.message
