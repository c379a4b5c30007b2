"""A key the server writes into an error object's ``code`` or ``type`` (a gateway that
names the refused credential there): the ``ModelError``'s message shows it as ``***``.

Before: the message was cleared of the keys, then the error's kind was put before it
(``model 'x': HTTP 401: sk-...: invalid key``), so a program calling ``model.stream()``
and a plugin's ``agent_request_error`` were given the key whole (the turn's own events
were cleared again by the harness). Now the whole message is built, then cleared."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import Reply, WireServer, error, sse, unserved

from dsh import hookimpl
from dsh._secrets import redact
from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage
from dsh.testing import run_turn

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
KEY = "sk-kindKEY0123456789abcdefABCDEF"


def shows(text: str) -> bool:
    return redact(text, (KEY,)) != text


def model(url: str) -> OpenAICompatibleModel:
    config = ModelConfig(
        provider="openai-compatible", model="m", base_url=url, api_key_env="K", max_retries=0
    )
    return OpenAICompatibleModel("x", config, env={"K": KEY})


async def failure(reply: Reply) -> ModelError:
    async with WireServer([reply]) as server, model(server.url) as m:
        with pytest.raises(ModelError) as caught:
            async for _ in m.stream(ASK):
                pass
    return caught.value


def stream_error(inner: dict[str, Any]) -> Reply:
    return sse(b"data: " + json.dumps({"error": inner}).encode() + b"\n\n")


REPLIES = {
    "status code": lambda key: error(401, {"error": {"message": "invalid key", "code": key}}),
    "status type": lambda key: error(401, {"error": {"message": "invalid key", "type": key}}),
    "stream type": lambda key: stream_error({"message": "bad", "type": key}),
    "stream code": lambda key: stream_error({"message": "bad", "code": key}),
}


@pytest.mark.parametrize("where", list(REPLIES))
@pytest.mark.parametrize("echoed", [KEY, KEY[:20]], ids=["whole", "cut short"])
async def test_a_key_in_the_error_kind_is_hidden_from_the_model_error(
    where: str, echoed: str
) -> None:
    message = (await failure(REPLIES[where](echoed))).message
    assert not shows(message), message
    assert "***" in message


async def test_an_ordinary_kind_is_still_named() -> None:
    reply = error(401, {"error": {"message": "no such key", "code": "invalid_api_key"}})
    err = await failure(reply)
    assert (
        unserved(err.message)
        == "model 'x': HTTP 401: invalid_api_key: no such key (the key from K)"
    )


class Seen:
    def __init__(self) -> None:
        self.errors: list[str] = []

    @hookimpl
    def agent_request_error(self, error: ModelError) -> None:
        self.errors.append(error.message)


async def test_agent_request_error_is_given_the_kind_hidden() -> None:
    seen = Seen()
    async with WireServer([REPLIES["status code"](KEY)]) as server:
        config = (
            f"models:\n  kind: {{provider: openai-compatible, model: m, base_url: '{server.url}',"
            " api_key_env: K, max_retries: 0}\nagents:\n  - id: main\n    model: kind\n"
        )
        async with Harness(
            config_text=config, plugins=[("seen", seen)], load_entry_points=False, env={"K": KEY}
        ) as harness:
            agent = harness.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hi")
    assert events[-1].data["reason"] == "error"
    [message] = seen.errors
    assert unserved(message) == "model 'kind': HTTP 401: ***: invalid key (the key from K)"


async def test_a_key_in_a_wrong_content_type_is_hidden() -> None:
    """The error for an answer that is no event stream quotes its content type."""
    # a body that does not start as an event stream does (one that does is read as one)
    reply = sse(b"<html></html>", headers={"content-type": f"text/plain; k={KEY}"})
    err = await failure(reply)
    assert err.code == "MALFORMED_RESPONSE"
    assert "got 'text/plain; k=***'" in err.message
