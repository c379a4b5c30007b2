"""A refused answer's turn names the provider's own reason (behaviour 13: the provider's
code and message). An answer the provider stopped ends the turn ``REFUSED`` (stop
reason ``error``); ``Finish(reason, detail)`` carries the provider's word for it
(OpenAI-compatible ``finish_reason``: DeepSeek's ``insufficient_system_resource``,
``content_filter``, OpenRouter's ``error``; ``refusal`` for OpenAI's ``delta.refusal``
and Anthropic's ``stop_reason``), logged in the finish chunk and named in turn/end's
message, one line, the secrets hidden.

Before: every such turn said "stop reason 'error'", the provider's reason lost."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from llm_wire import WireServer, collect, sse

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm import Assembler, Finish, TextDelta
from dsh.llm._redact_answer import hidden
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage
from dsh.testing import Reply, ScriptedModel, run_turn, scripted_harness

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
KEY = "sk-live-SECRET-0123456789"


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


async def openai_answer(body: bytes) -> tuple[list[Any], Any]:
    async with WireServer([sse(body + b"data: [DONE]\n\n")]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        return await collect(OpenAICompatibleModel("wire", config), ASK)


@pytest.mark.parametrize("reason", ["insufficient_system_resource", "content_filter", "error"])
async def test_an_openai_finish_reason_mapped_to_error_is_the_finish_detail(reason: str) -> None:
    chunks, message = await openai_answer(chunk({"content": "The answer is"}) + chunk({}, reason))
    assert (message.text, message.stop_reason) == ("The answer is", "error")
    assert chunks[-1] == Finish("error", detail=reason)
    assert chunks[-1].to_data() == {"kind": "finish", "reason": "error", "detail": reason}


async def test_an_openai_refusal_is_detail_refusal_and_other_stops_have_none() -> None:
    chunks, _ = await openai_answer(chunk({"content": None, "refusal": "No."}) + chunk({}, "stop"))
    assert chunks[-1] == Finish("error", detail="refusal")
    chunks, _ = await openai_answer(chunk({"content": "hi"}) + chunk({}, "length"))
    assert chunks[-1] == Finish("max_tokens")
    assert chunks[-1].to_data() == {"kind": "finish", "reason": "max_tokens"}


async def test_an_anthropic_refusal_is_detail_refusal() -> None:
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "no"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "refusal"}, "usage": {}},
        {"type": "message_stop"},
    ]
    body = b"".join(b"data: %s\n\n" % json.dumps(e).encode() for e in events)
    async with WireServer([sse(body)]) as server:
        config = ModelConfig(provider="anthropic", model="c", base_url=server.url)
        chunks, message = await collect(AnthropicModel("wire", config), ASK)
    assert (message.text, message.stop_reason) == ("no", "error")
    assert chunks[-1] == Finish("error", detail="refusal")


async def test_the_turn_names_the_providers_reason() -> None:
    config = (
        "models:\n  wire:\n    provider: openai-compatible\n    model: m\n"
        "    base_url: {url}\nagents:\n  - id: main\n    model: wire\n"
    )
    body = chunk({"content": "The answer is"}) + chunk({}, "insufficient_system_resource")
    async with WireServer([sse(body + b"data: [DONE]\n\n")]) as server:
        text = config.format(url=server.url)
        async with Harness(config_text=text, load_entry_points=False) as harness:
            agent = harness.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hi")
    error = events[-1].data["error"]
    assert error["code"] == "REFUSED"
    assert error["message"] == (
        "model 'wire': the provider stopped the answer (its reason: "
        "'insufficient_system_resource'; stop reason 'error'); none of its tool calls ran"
    )
    (finish,) = [
        e.data for e in events if e.type == "assistant/chunk" and e.data["kind"] == "finish"
    ]
    assert finish["detail"] == "insufficient_system_resource"


async def turn_end(*replies: Reply, secret: str | None = None) -> dict[str, Any]:
    model = ScriptedModel(list(replies))
    async with scripted_harness(model) as h:
        if secret is not None:
            h.add_secrets([secret])
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(5):
            events = await run_turn(agent, "hi")
    return {"end": events[-1].data, "events": events}


async def test_a_plugin_models_detail_is_named_one_line_bounded_and_hidden() -> None:
    said = f"blocked\nby policy {KEY} " + "x" * 500
    seen = await turn_end(Reply((TextDelta("no"), Finish("error", detail=said))), secret=KEY)
    message = seen["end"]["error"]["message"]
    assert message.startswith("model 'scripted': the provider stopped the answer (its reason: ")
    assert "\n" not in message and KEY not in message and len(message) < 300
    logged = [e.data for e in seen["events"] if e.type == "assistant/chunk"][-1]
    assert logged["detail"].startswith("blocked\nby policy ") and KEY not in logged["detail"]


async def test_without_a_detail_the_message_is_as_before() -> None:
    seen = await turn_end(Reply((TextDelta("no"), Finish("error"))))
    assert seen["end"]["error"]["message"] == (
        "model 'scripted': the provider stopped the answer (a refusal, a content filter or "
        "an error inside the answer: stop reason 'error'); none of its tool calls ran"
    )


def test_the_assembler_refuses_a_detail_that_is_not_a_str() -> None:
    assembler = Assembler()
    with pytest.raises(ModelError, match="detail") as caught:
        assembler.add(Finish("error", detail=7))  # type: ignore[arg-type]
    assert caught.value.code == "MALFORMED_RESPONSE"


async def test_the_redactor_hides_a_secret_in_the_detail() -> None:
    async def answer() -> AsyncIterator[Any]:
        yield Finish("error", detail=f"said {KEY}")

    out = [c async for c in hidden(answer(), (KEY,))]
    assert len(out) == 1 and out[0].reason == "error" and KEY not in (out[0].detail or "")
