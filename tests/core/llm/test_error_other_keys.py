"""An error of one model that quotes another model's key (a proxy in front of both
echoing the other's address, a server quoting a header it was sent): behaviour 13, the
turn ends ``error`` with the provider's message, which goes into turn/end, step/retry,
the session file, and to the plugins of ``agent_request_error``.

Before: ``HttpModel.error_secrets`` hid only the model's own keys (its API key, its
``base_url`` query's), so the ``ModelError`` itself quoted the other model's key whole:
turn/end and step/retry were cleared of it by the harness (``dsh._steps``), but not the
error a plugin's ``agent_request_error`` was given, nor the one a program calling the
model itself sees. Now an error is cleared of every key dsh has read, as the answer is
(``HttpModel.stream``)."""

from __future__ import annotations

from typing import Any

import pytest
from llm_wire import WireServer, error

from dsh import hookimpl
from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage
from dsh.testing import run_turn

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
OTHER_QUERY_KEY = "qs-OTHERMODEL-5f2a9c1e7b3d"
OTHER_API_KEY = "sk-other-Zq8Xw6Vu4Ts2Rp0Nm9Lk"


def said(*keys: str) -> str:
    return "upstream refused: " + " and ".join(f"[{key}]" for key in keys)


def shows(text: str, *keys: str) -> bool:
    return any(part in text for key in keys for part in (key, key[:14], key[-14:]))


async def test_an_error_quoting_another_models_query_key_hides_it() -> None:
    config = ModelConfig(
        provider="openai-compatible", model="m", base_url="http://127.0.0.1:1/v1", max_retries=0
    )
    other = ModelConfig(
        provider="openai-compatible",
        model="o",
        base_url=f"http://127.0.0.1:1/v1?api-key={OTHER_QUERY_KEY}",
    )
    OpenAICompatibleModel("other", other)  # built, as a harness builds each model
    reply = error(400, {"error": {"message": said(OTHER_QUERY_KEY), "type": "invalid"}})
    async with WireServer([reply]) as server:
        model = OpenAICompatibleModel("one", config.model_copy(update={"base_url": server.url}))
        async with model:
            with pytest.raises(ModelError) as caught:
                async for _ in model.stream(ASK):
                    pass
    assert "upstream refused: [***]" in caught.value.message
    assert not shows(caught.value.message, OTHER_QUERY_KEY)


class Seen:
    def __init__(self) -> None:
        self.errors: list[str] = []

    @hookimpl
    def agent_request_error(self, error: ModelError) -> None:
        self.errors.append(error.message)


async def test_a_turns_error_quoting_another_models_keys_hides_them_everywhere() -> None:
    keys = (OTHER_QUERY_KEY, OTHER_API_KEY)
    reply = error(400, {"error": {"message": said(*keys), "type": "invalid"}})
    seen = Seen()
    async with WireServer([reply]) as server:
        config = (
            "models:\n"
            f"  one: {{provider: openai-compatible, model: m, base_url: '{server.url}',"
            " max_retries: 0}\n"
            "  other: {provider: openai-compatible, model: o, api_key_env: OTHER_KEY,"
            f" base_url: 'http://127.0.0.1:1/v1?api-key={OTHER_QUERY_KEY}'}}\n"
            "agents:\n  - id: main\n    model: one\n"
        )
        async with Harness(
            config_text=config,
            plugins=[("seen", seen)],
            load_entry_points=False,
            env={"OTHER_KEY": OTHER_API_KEY},
        ) as harness:
            agent = harness.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hi")
    end: Any = events[-1]
    assert end.type == "turn/end" and end.data["reason"] == "error"
    assert "upstream refused: [***] and [***]" in end.data["error"]["message"]
    [message] = seen.errors  # what the plugin was given
    assert "upstream refused: [***] and [***]" in message
    assert not shows(message, *keys)
    assert not shows(repr([e.data for e in events]), *keys)
