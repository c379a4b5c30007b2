"""Mistral's reasoning models stream their reasoning as list ``thinking`` parts, which
dsh reads as reasoning; with ``send_reasoning`` on (the default but for ``provider:
openai``) the next request of a tool-using turn sent it back as ``reasoning_content``,
which Mistral's API refuses (HTTP 422 ``extra_forbidden``): every tool-using turn
failed on its second step.

Now a model whose base_url is on mistral.ai sends none by default (its setting still
wins), and a 4xx that names ``reasoning_content`` after dsh sent it says which
setting to change."""

from __future__ import annotations

import pytest
from llm_wire import Reply, WireServer, collect, error, sse
from test_providers_study_openai import DONE, chunk

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm._origin import Origin
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, ToolResultMessage, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
#: Mistral's answer to an assistant message with reasoning_content (crush#1590).
REFUSED = {
    "object": "error",
    "message": {
        "detail": [
            {
                "type": "extra_forbidden",
                "loc": ["body", "messages", 1, "assistant", "reasoning_content"],
                "msg": "Extra inputs are not permitted",
                "input": "Let me think",
            }
        ]
    },
    "type": "invalid_request_message_error",
    "param": None,
    "code": None,
}
THINKING = {
    "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me think"}]}]
}
CALL = {
    "tool_calls": [
        {
            "index": 0,
            "id": "abcdefghi",
            "type": "function",
            "function": {"name": "f", "arguments": "{}"},
        }
    ]
}


def model(base_url: str, **settings: object) -> OpenAICompatibleModel:
    config = ModelConfig(
        provider="openai-compatible", model="magistral", base_url=base_url, **settings
    )
    return OpenAICompatibleModel("mag", config)


@pytest.mark.parametrize(
    ("base_url", "sent"),
    [
        ("https://api.mistral.ai/v1", False),
        ("https://API.Mistral.AI:443/v1", False),
        ("https://codestral.mistral.ai/v1", False),
        ("https://api.deepseek.com", True),
        ("https://notmistral.ai/v1", True),
        ("http://127.0.0.1:8000/v1", True),
    ],
)
def test_send_reasoning_is_off_by_default_for_mistrals_api(base_url: str, sent: bool) -> None:
    assert model(base_url).send_reasoning is sent


def test_a_send_reasoning_setting_still_wins_on_mistrals_api() -> None:
    assert model("https://api.mistral.ai/v1", send_reasoning=True).send_reasoning is True


async def second_step(
    opening: dict[str, object], refusal: Reply, *, entry: bool = True
) -> tuple[ModelError, list[dict[str, object]]]:
    """The error of the second step of a tool-using turn whose first answer began with
    the delta ``opening``, the server answering the second with ``refusal``; and the
    assistant messages that request sent."""
    first = chunk(opening) + chunk(CALL) + chunk({}, "tool_calls") + DONE
    async with WireServer([sse(first), refusal]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        wire = OpenAICompatibleModel("wire", config, origin=Origin(entry=entry))
        _, message = await collect(wire, ASK, keep_open=True)
        result = ToolResultMessage(call_id="abcdefghi", name="f", content="ok")
        follow = ModelRequest(messages=(UserMessage(content="hi"), message, result))
        with pytest.raises(ModelError) as caught:
            await collect(wire, follow)
        sent = [m for m in server.requests[1].json()["messages"] if m["role"] == "assistant"]
    return caught.value, sent


async def refused(*, entry: bool = True) -> tuple[ModelError, list[dict[str, object]]]:
    """The error of the second step of a tool-using turn whose first came with
    reasoning, the server refusing it as Mistral does."""
    found, sent = await second_step(THINKING, error(422, REFUSED), entry=entry)
    assert found.code == "INVALID_REQUEST"
    return found, sent


async def test_a_4xx_naming_reasoning_content_says_to_set_send_reasoning_false() -> None:
    found, sent = await refused()
    assert sent[0]["reasoning_content"] == "Let me think"
    assert "HTTP 422" in found.message
    assert "set send_reasoning: false for this model (models.wire.send_reasoning)" in found.message


async def test_the_hint_without_a_models_entry_says_where_to_set_it() -> None:
    found, _ = await refused(entry=False)
    assert "set send_reasoning: false for this model" in found.message
    assert "models: entry" in found.message


async def test_deepseeks_refusal_of_a_missing_reasoning_content_gets_no_such_hint() -> None:
    missing = {
        "error": {
            "message": "The reasoning_content in the thinking mode must be passed back to the API.",
            "type": "invalid_request_error",
        }
    }
    found, _ = await second_step(THINKING, error(400, missing))
    assert "send_reasoning" not in found.message


async def test_no_hint_when_no_reasoning_content_was_sent() -> None:
    found, _ = await second_step({"content": "ok"}, error(422, REFUSED))
    assert "send_reasoning" not in found.message
