"""Log shapes and the scripted model's name shared by the conformance tests of
behaviours 1-21 (inbox; steps, requests, streaming; behaviours_tools_support.py adds the
tools of 12-21).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dsh import AssistantMessage, Message
from dsh.session import SessionEvent

MODEL = {"model": "scripted"}


def shape(events: Iterable[SessionEvent], contents: bool = True) -> list[tuple[Any, ...]]:
    """The core events without chunks, as short tuples that read like the log (tool
    results without their content unless ``contents``)."""
    out: list[tuple[Any, ...]] = []
    for event in events:
        kind, data = event.type, event.data
        if kind in ("turn/start", "step/start", "step/end"):
            out.append((kind, data.get("step", data["turn"])))
        elif kind == "turn/end":
            out.append((kind, data["turn"], data["reason"]))
        elif kind in ("user/message", "steering/message"):
            out.append((kind, data["content"]))
        elif kind == "assistant/message":
            out.append((kind, AssistantMessage.model_validate(data["message"]).text))
        elif kind == "tool/call":
            out.append((kind, data["id"], data["name"]))
        elif kind == "tool/result":
            content = (data["content"],) if contents else ()
            out.append((kind, data["call_id"], *content, data["is_error"]))
    return out


def said(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """(role, text) of each message of a history or request."""
    return [(m.role, m.text if isinstance(m, AssistantMessage) else m.content) for m in messages]


def of_type(events: Iterable[SessionEvent], kind: str) -> list[SessionEvent]:
    return [e for e in events if e.type == kind]


def start(number: int, *prompts: str) -> list[tuple[Any, ...]]:
    return [("turn/start", number), *(("user/message", p) for p in prompts)]


def step(number: int, answer: str, *after: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """A step that answered ``answer``; ``after``: what it logged after the answer."""
    return [("step/start", number), ("assistant/message", answer), *after, ("step/end", number)]


def end(number: int, reason: str = "completed") -> list[tuple[Any, ...]]:
    return [("turn/end", number, reason)]


FAILED_STEP = [("step/start", 1), ("step/end", 1)]
