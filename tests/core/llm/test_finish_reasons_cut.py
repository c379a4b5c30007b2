"""An answer the server did not finish never runs its tool calls (stop reason ``error``,
the turn ends ``REFUSED`` naming the server's reason), whatever word it used for that.

vLLM ends an answer with ``finish_reason`` ``stop``, ``length``, ``abort`` (the server
aborted the request), ``error`` or ``repetition`` (it stopped output that repeated
itself; vllm-project/vllm, ``vllm/v1/engine/__init__.py`` ``FINISH_REASON_STRINGS``).
dsh read ``abort`` and ``repetition``, as any reason it did not know, as ``stop``, and a
``stop`` after tool-call pieces as ``tool_calls``: the half-streamed calls ran (a
``{"command": "rm -rf build`` cut in the middle), and a text-only ``abort`` ended the
turn as a whole answer. Now an ``abort`` or ``repetition``, and a reason dsh does not
know after a cut tool call, is ``error`` with the server's reason as the finish's
``detail``: the text is kept, no call runs. A server's own words for the model's
natural end (Together's ``eos``, text-generation-inference's ``eos_token`` and
``stop_sequence``) are ``stop``, and Mistral's ``model_length`` is ``max_tokens``.

A stream that ends with ``[DONE]`` and no ``finish_reason`` at all is whole (some
servers never send one): its calls run when each call's arguments are a whole JSON
text; one cut in the middle makes it ``STREAM_CLOSED`` (the stream ended before the
answer did), no call run.

A word dsh does not know after whole calls (``STOP`` from Gemini through a proxy, a
gateway's ``tool_use``) is the model's end: its calls run. The Anthropic adapter reads
a ``stop_reason`` it does not know as ``end_turn``: each ``tool_use`` block ends with
its own event.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm import Finish
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage
from dsh.testing import run_turn

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
DONE = b"data: [DONE]\n\n"
CUT = '{"command": "rm -rf build'  # a bash call's arguments, cut in the middle


def data(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def chunk(delta: dict[str, Any], finish: Any = None) -> bytes:
    return data({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def call(index: int, arguments: str, name: str | None = None) -> bytes:
    piece: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if name is not None:
        piece.update(id=f"call_{index}", type="function")
        piece["function"]["name"] = name
    return chunk({"tool_calls": [piece]})


TWO_CALLS = [call(0, '{"path": "a.txt"}', "read"), call(1, CUT, "bash")]


def openai(url: str) -> OpenAICompatibleModel:
    config = ModelConfig(provider="openai-compatible", model="m", base_url=url)
    return OpenAICompatibleModel("wire", config)


async def answer(body: list[bytes]) -> tuple[list[Any], Any]:
    async with WireServer([sse(body)]) as server:
        return await collect(openai(server.url), ASK)


@pytest.mark.parametrize("reason", ["abort", "repetition", "some_new_reason"])
async def test_an_unfinished_answers_tool_calls_are_an_error_stop(reason: str) -> None:
    body = [chunk({"content": "Cleaning"}), *TWO_CALLS, chunk({}, reason), DONE]
    chunks, message = await answer(body)
    assert chunks[-1] == Finish("error", detail=reason)
    assert (message.text, message.stop_reason) == ("Cleaning", "error")


@pytest.mark.parametrize("reason", ["abort", "repetition"])
async def test_an_unfinished_text_answer_is_an_error_stop_its_text_kept(reason: str) -> None:
    chunks, message = await answer([chunk({"content": "The answer is"}), chunk({}, reason), DONE])
    assert chunks[-1] == Finish("error", detail=reason)
    assert (message.text, message.stop_reason) == ("The answer is", "error")


async def test_a_reason_dsh_does_not_know_ends_a_text_answer() -> None:
    """Only after tool calls is an unknown reason an error stop: a server with its own
    word for an end does not fail every turn."""
    chunks, message = await answer([chunk({"content": "Done."}), chunk({}, "finished"), DONE])
    assert chunks[-1] == Finish("stop")
    assert (message.text, message.stop_reason) == ("Done.", "stop")


@pytest.mark.parametrize(
    ("reason", "stop"),
    [
        ("eos", "stop"),
        ("eos_token", "stop"),
        ("stop_sequence", "stop"),
        ("model_length", "max_tokens"),
    ],
)
async def test_servers_own_words_for_an_end_are_known(reason: str, stop: str) -> None:
    chunks, message = await answer([chunk({"content": "Hi"}), chunk({}, reason), DONE])
    assert chunks[-1] == Finish(stop)  # type: ignore[arg-type]
    assert (message.text, message.stop_reason) == ("Hi", stop)


@pytest.mark.parametrize("reason", ["STOP", "tool_use", "tool_call", "end_turn", "finished"])
async def test_another_word_for_an_end_after_whole_calls_runs_them(reason: str) -> None:
    """Gemini through a proxy (``STOP``), gateways passing Anthropic's words on, older
    mlx_lm.server (``tool_call``), a word dsh does not know: the calls are whole, so
    they are the answer's calls, as before."""
    body = [call(0, '{"path": "a.txt"}', "read"), chunk({}, reason), DONE]
    chunks, message = await answer(body)
    assert chunks[-1] == Finish("tool_calls")
    assert [c.arguments for c in message.tool_calls] == ['{"path": "a.txt"}']


@pytest.mark.parametrize("reason", [7, ["stop"], {"type": "stop"}])
async def test_a_finish_reason_that_is_not_text_is_malformed(reason: Any) -> None:
    async with WireServer([sse([chunk({"content": "Hi"}), chunk({}, reason), DONE])]) as server:
        with pytest.raises(ModelError) as caught:
            await collect(openai(server.url), ASK)
    assert caught.value.code == "MALFORMED_RESPONSE"


async def test_without_a_finish_reason_whole_calls_are_tool_calls() -> None:
    # a server that never sends a finish_reason (the end is [DONE]) still calls tools
    whole = [call(0, '{"path": "a.txt"}', "read"), call(1, '{"n": [1, "}"]}', "count"), DONE]
    chunks, message = await answer(whole)
    assert chunks[-1] == Finish("tool_calls")
    assert [c.arguments for c in message.tool_calls] == ['{"path": "a.txt"}', '{"n": [1, "}"]}']
    _, message = await answer([call(0, "", "now"), DONE])  # a call without arguments
    assert (message.stop_reason, len(message.tool_calls)) == ("tool_calls", 1)


async def test_without_a_finish_reason_a_cut_call_is_stream_closed() -> None:
    async with WireServer([sse([chunk({"content": "Cleaning"}), *TWO_CALLS, DONE])]) as server:
        with pytest.raises(ModelError) as caught:
            await collect(openai(server.url), ASK)
    assert caught.value.code == "STREAM_CLOSED"
    assert caught.value.message == (
        "model 'wire': the stream ended ([DONE]) without a finish_reason, in the middle "
        "of a tool call's arguments"
    )


CONFIG = (
    "models:\n  wire:\n    provider: openai-compatible\n    model: m\n"
    "    base_url: {url}\nagents:\n  - id: main\n    model: wire\n"
)


async def test_an_aborted_answers_calls_never_run_and_the_turn_names_abort() -> None:
    body = [chunk({"content": "Cleaning"}), *TWO_CALLS, chunk({}, "abort"), DONE]
    async with WireServer([sse(body)]) as server:
        text = CONFIG.format(url=server.url)
        async with Harness(config_text=text, load_entry_points=False) as harness:
            agent = harness.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "clean up")
    assert not [e for e in events if e.type.startswith("tool/")]
    (logged,) = [e.data["message"] for e in events if e.type == "assistant/message"]
    assert logged["stop_reason"] == "error"
    assert logged["content"] == [{"type": "text", "text": "Cleaning"}]
    error = events[-1].data["error"]
    assert error["code"] == "REFUSED"
    assert "its reason: 'abort'" in error["message"]


def anthropic_body(reason: str) -> bytes:
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"command": "ls"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {}},
        {"type": "message_stop"},
    ]
    return b"".join(data(e) for e in events)


@pytest.mark.parametrize("reason", ["some_new_reason", "TOOL_USE", "tool_calls"])
async def test_an_anthropic_stop_reason_dsh_does_not_know_ends_the_answer(reason: str) -> None:
    """Each ``tool_use`` block ended with its own event: its call is whole."""
    async with WireServer([sse(anthropic_body(reason))]) as server:
        config = ModelConfig(provider="anthropic", model="c", base_url=server.url)
        chunks, message = await collect(AnthropicModel("wire", config), ASK)
    assert chunks[-1].reason in ("stop", "tool_calls")
    assert [c.arguments for c in message.tool_calls] == ['{"command": "ls"}']


async def test_an_anthropic_tool_use_is_still_tool_calls() -> None:
    async with WireServer([sse(anthropic_body("tool_use"))]) as server:
        config = ModelConfig(provider="anthropic", model="c", base_url=server.url)
        chunks, message = await collect(AnthropicModel("wire", config), ASK)
    assert chunks[-1] == Finish("tool_calls")
    assert [c.arguments for c in message.tool_calls] == ['{"command": "ls"}']
