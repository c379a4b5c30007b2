"""Blocks the Anthropic Messages API refuses are not sent: a text block of whitespace
only ("messages: text content blocks must contain non-whitespace text") is left out, and
a tool result marked ``is_error`` with no content ("content cannot be empty if is_error
is true") gets placeholder text. Otherwise one such answer or result, kept in the
history, made every later request of the session fail with HTTP 400.

Before: ``anthropic._assistant`` left out only empty text, ``_messages`` sent user text
and error results as they were."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse

from dsh.config import ModelConfig
from dsh.llm.anthropic import EMPTY_ERROR, EMPTY_PROMPT, AnthropicModel
from dsh.messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

TOOL_USE = {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}


def model(url: str = "http://127.0.0.1:1/v1") -> AnthropicModel:
    config = ModelConfig(provider="anthropic", model="claude-x", base_url=url)
    return AnthropicModel("claude", config, env={}, backoff=0.01)


def wire(*history: Message) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = model().request_body(ModelRequest(messages=history))[
        "messages"
    ]
    return messages


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


@pytest.mark.parametrize("blank", ["\n\n", " ", "\t \r\n"])
def test_an_answer_of_whitespace_only_is_left_out_and_its_neighbours_merge(blank: str) -> None:
    """The assistant message is left with no block: it is not sent, and the user
    messages around it become one (the API wants the roles to alternate)."""
    answer = AssistantMessage(content=(TextBlock(text=blank),), stop_reason="stop")
    sent = wire(UserMessage(content="hi"), answer, UserMessage(content="again"))
    assert sent == [{"role": "user", "content": [text("hi"), text("again")]}]


def test_whitespace_beside_a_tool_call_is_left_out_and_the_call_kept() -> None:
    answer = AssistantMessage(
        content=(TextBlock(text="\n"), ToolCall(id="t1", name="ls", arguments="{}")),
        stop_reason="tool_calls",
    )
    sent = wire(UserMessage(content="list"), answer)
    assert sent[1] == {"role": "assistant", "content": [TOOL_USE]}


def test_text_around_whitespace_keeps_its_own_spaces() -> None:
    answer = AssistantMessage(
        content=(TextBlock(text=" a\n"), TextBlock(text="  ")), stop_reason="stop"
    )
    assert wire(UserMessage(content="hi"), answer)[1]["content"] == [text(" a\n")]


def test_a_user_message_of_whitespace_only_is_left_out() -> None:
    sent = wire(UserMessage(content="hi"), UserMessage(content=" \n"))
    assert sent == [{"role": "user", "content": [text("hi")]}]


@pytest.mark.parametrize("empty", ["", "  \n"])
def test_an_error_result_without_content_gets_placeholder_text(empty: str) -> None:
    call = AssistantMessage(
        content=(ToolCall(id="t1", name="ls", arguments="{}"),), stop_reason="tool_calls"
    )
    result = ToolResultMessage(call_id="t1", name="ls", content=empty, is_error=True)
    sent = wire(UserMessage(content="list"), call, result)
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": EMPTY_ERROR, "is_error": True}
    ]
    assert EMPTY_ERROR.strip()


def test_an_empty_result_that_is_no_error_is_sent_as_it_is() -> None:
    call = AssistantMessage(
        content=(ToolCall(id="t1", name="ls", arguments="{}"),), stop_reason="tool_calls"
    )
    result = ToolResultMessage(call_id="t1", name="ls", content="")
    sent = wire(UserMessage(content="list"), call, result)
    assert sent[2]["content"] == [{"type": "tool_result", "tool_use_id": "t1", "content": ""}]


async def test_a_streamed_whitespace_answer_is_not_sent_back() -> None:
    """The reviewer's repro: the answer streams as "\\n\\n"; the next request of the
    session leaves it out."""
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 3}}},
        {"type": "content_block_start", "index": 0, "content_block": text("")},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "\n\n"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ]
    body = b"".join(b"data: %s\n\n" % json.dumps(e).encode() for e in events)
    async with WireServer([sse(body), sse(body)]) as server:
        _, answer = await collect(
            model(server.url), ModelRequest(messages=(UserMessage(content="hi"),))
        )
        assert answer.content == (TextBlock(text="\n\n"),)  # kept as it came
        again = (UserMessage(content="hi"), answer, UserMessage(content="again"))
        await collect(model(server.url), ModelRequest(messages=again))
    assert server.requests[1].json()["messages"] == [
        {"role": "user", "content": [text("hi"), text("again")]}
    ]


@pytest.mark.parametrize("blank", ["", " \n"])
def test_a_blank_last_prompt_is_sent_as_placeholder_text(blank: str) -> None:
    """Left out, it made the request end with the answer before it, which the API
    takes as an answer to continue (prefill); alone, it left no message at all."""
    answer = AssistantMessage(content=(TextBlock(text="done"),), stop_reason="stop")
    sent = wire(UserMessage(content="hi"), answer, UserMessage(content=blank))
    assert sent[-1] == {"role": "user", "content": [text(EMPTY_PROMPT)]}
    assert wire(UserMessage(content=blank)) == [{"role": "user", "content": [text(EMPTY_PROMPT)]}]
