"""A whole answer sent as JSON to a streamed request: the events it stands for.

A proxy or server that ignores ``stream: true`` answers with the whole completion, as
``application/json``. Its events, read as a stream's are (the same checks, the same
chunks): OpenAI's ``chat.completion`` (``choices[].message``) is one chunk whose
choices' deltas are their messages, with their ``finish_reason``\\s and the usage, then
``[DONE]``; Anthropic's ``message`` (its ``content`` blocks) is ``message_start`` (the
usage), each block's start (its text, thinking or tool input whole) and stop,
``message_delta`` (the ``stop_reason``) and ``message_stop``. A payload of neither
shape, or of the other protocol's, stands for no events. Each event is kept with the
field of the answer it was made of, so that one dsh cannot read is quoted as the server
sent it (``WholeAnswer.fields``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from json import dumps
from typing import Any, Final

__all__ = ["EXPECTED", "WholeAnswer", "answer_events"]

#: The whole answer each protocol reads, as a message names it.
EXPECTED: Final = {
    "openai": "a whole JSON chat.completion (choices[].message)",
    "anthropic": "a whole JSON message (content blocks)",
}


#: An event made of a field of the answer: (its data, (the field's name, its value)).
_Event = tuple[str, tuple[str, object] | None]


@dataclass(frozen=True, slots=True)
class WholeAnswer:
    """``events``: the event stream (``data:`` lines) a whole answer stands for;
    ``fields``: the field of the answer each event's data was made of, by that data:
    its name (``choices[0]``, ``content[2]``) and its value as the server sent it."""

    events: bytes
    fields: Mapping[str, tuple[str, object]]


def answer_events(protocol: str | None, payload: object) -> WholeAnswer | None:
    """The events ``payload``, a decoded JSON body, stands for in ``protocol``; None
    when it is no whole answer of that protocol."""
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
    stream = b"".join(b"data: %s\n\n" % data.encode() for data, _ in events)
    return WholeAnswer(stream, {data: field for data, field in events if field is not None})


def _openai(payload: Mapping[str, Any]) -> list[_Event] | None:
    choices = payload.get("choices")
    if not (isinstance(choices, list) and choices):
        return None
    if not all(isinstance(c, Mapping) and isinstance(c.get("message"), Mapping) for c in choices):
        return None
    # a chunk a choice, then the usage's: each made of one field of the answer
    events: list[_Event] = [
        (dumps({"choices": [_delta(choice)]}), (f"choices[{at}]", choice))
        for at, choice in enumerate(choices)
    ]
    if payload.get("usage") is not None:
        usage = payload["usage"]
        events.append((dumps({"choices": [], "usage": usage}), ("usage", usage)))
    return [*events, ("[DONE]", None)]


def _delta(choice: Mapping[str, Any]) -> dict[str, Any]:
    """A choice of a streamed chunk: the message its delta."""
    return {key: value for key, value in choice.items() if key != "message"} | {
        "delta": choice["message"]
    }


def _anthropic(payload: Mapping[str, Any]) -> list[_Event] | None:
    content = payload.get("content")
    if payload.get("type") != "message" or not isinstance(content, list):
        return None
    start = {key: value for key, value in payload.items() if key != "content"}
    usage = ("usage", payload["usage"]) if "usage" in payload else None
    events: list[_Event] = [
        (dumps({"type": "message_start", "message": {**start, "content": []}}), usage)
    ]
    for index, block in enumerate(content):
        field = (f"content[{index}]", block)
        begun = {"type": "content_block_start", "index": index, "content_block": block}
        events.append((dumps(begun), field))
        events.append((dumps({"type": "content_block_stop", "index": index}), field))
    reason = payload.get("stop_reason")
    delta = {"type": "message_delta", "delta": {"stop_reason": reason}}
    events.append((dumps(delta), ("stop_reason", reason)))
    events.append((dumps({"type": "message_stop"}), None))
    return events
