"""The messages of an Anthropic Messages request: dsh's conversation in the API's
blocks, as ``dsh.llm.anthropic`` sends it."""

from __future__ import annotations

from collections.abc import Sequence
from json import loads
from typing import Any, Final

from dsh.messages import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage

__all__ = ["EMPTY_ERROR", "EMPTY_PROMPT", "PROVIDER", "messages"]

#: The ``provider`` of the ``ProviderBlock``s the Anthropic adapter makes and sends back.
PROVIDER: Final = "anthropic"

#: The content sent for a tool result marked ``is_error`` that has none: the API refuses
#: an empty one ("content cannot be empty if is_error is true").
EMPTY_ERROR: Final = "(the tool failed without a message)"
#: A blank prompt the request would end without: the API would take the answer before
#: it as one to continue (prefill), or refuse a request with no message.
EMPTY_PROMPT: Final = "(an empty message)"


def messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Wire messages; consecutive messages of one role are merged (tool results go in
    the user message after the calls, before any text). Text of whitespace only is left
    out (the API refuses such a block), and a message left with no block at all: the
    messages around it, of one role then, are merged; but a blank prompt the request
    would otherwise not end with is sent as placeholder text (``EMPTY_PROMPT``)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            role = "user"
            said = message.content
            blocks = [{"type": "text", "text": said}] if said and not said.isspace() else []
        elif isinstance(message, ToolResultMessage):
            role = "user"
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.call_id,
                "content": message.content,
            }
            if message.is_error:
                result["is_error"] = True
                if not message.content or message.content.isspace():
                    result["content"] = EMPTY_ERROR
            blocks = [result]
        else:
            role = "assistant"
            blocks = _assistant(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    if (
        messages
        and isinstance(messages[-1], UserMessage)
        and (not out or out[-1]["role"] != "user")
    ):
        out.append({"role": "user", "content": [{"type": "text", "text": EMPTY_PROMPT}]})
    for wire in out:
        content = wire["content"]
        if wire["role"] == "user" and len(content) > 1:
            content.sort(key=lambda block: block["type"] != "tool_result")
    return out


def _assistant(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if block.type == "text":
            if block.text and not block.text.isspace():  # the API refuses blank text
                blocks.append({"type": "text", "text": block.text})
        elif block.type == "reasoning":
            # in place: the API wants a turn's thinking back as it came, in order
            if block.redacted:
                blocks.append({"type": "redacted_thinking", "data": block.redacted})
            # unsigned reasoning came from another provider; the API would refuse it
            elif block.signature:
                blocks.append(
                    {"type": "thinking", "thinking": block.text, "signature": block.signature}
                )
        elif block.type == "tool_call":
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": _input(block)}
            )
        elif block.provider == PROVIDER:  # a server tool's block, say: back as it came
            blocks.append({**block.data})
    return blocks


def _input(call: ToolCall) -> dict[str, Any]:
    try:
        value = loads(call.arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
