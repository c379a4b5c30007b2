"""A whole answer sent as JSON to a streamed request: the events it stands for.

A proxy or server that ignores ``stream: true`` answers with the whole completion, as
``application/json``. Its events, read as a stream's are (the same checks, the same
chunks): OpenAI's ``chat.completion`` (``choices[].message``) is one chunk whose
choices' deltas are their messages, with their ``finish_reason``\\s and the usage, then
``[DONE]``; Anthropic's ``message`` (its ``content`` blocks) is ``message_start`` (the
usage), each block's start (its text, thinking or tool input whole) and stop,
``message_delta`` (the ``stop_reason``) and ``message_stop``. A payload of neither
shape, or of the other protocol's, stands for no events.
"""

from __future__ import annotations

from collections.abc import Mapping
from json import dumps
from typing import Any, Final

__all__ = ["EXPECTED", "answer_events"]

#: The whole answer each protocol reads, as a message names it.
EXPECTED: Final = {
    "openai": "a whole JSON chat.completion (choices[].message)",
    "anthropic": "a whole JSON message (content blocks)",
}


def answer_events(protocol: str | None, payload: object) -> bytes | None:
    """The event stream (``data:`` lines) ``payload``, a decoded JSON body, stands for
    in ``protocol``; None when it is no whole answer of that protocol."""
    if not isinstance(payload, Mapping):
        return None
    if protocol == "openai":
        events = _openai(payload)
    elif protocol == "anthropic":
        events = _anthropic(payload)
    else:
        return None
    if events is None:
        return None
    return b"".join(b"data: %s\n\n" % event.encode() for event in events)


def _openai(payload: Mapping[str, Any]) -> list[str] | None:
    choices = payload.get("choices")
    if not (isinstance(choices, list) and choices):
        return None
    if not all(isinstance(c, Mapping) and isinstance(c.get("message"), Mapping) for c in choices):
        return None
    deltas = [
        {key: value for key, value in choice.items() if key != "message"}
        | {"delta": choice["message"]}
        for choice in choices
    ]
    chunk: dict[str, Any] = {"choices": deltas}
    if payload.get("usage") is not None:
        chunk["usage"] = payload["usage"]
    return [dumps(chunk), "[DONE]"]


def _anthropic(payload: Mapping[str, Any]) -> list[str] | None:
    content = payload.get("content")
    if payload.get("type") != "message" or not isinstance(content, list):
        return None
    start = {key: value for key, value in payload.items() if key != "content"}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {**start, "content": []}}]
    for index, block in enumerate(content):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    reason = {"stop_reason": payload.get("stop_reason")}
    events.append({"type": "message_delta", "delta": reason})
    events.append({"type": "message_stop"})
    return [dumps(event) for event in events]
