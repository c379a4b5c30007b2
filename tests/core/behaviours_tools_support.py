"""Log shapes, the scripted model's name and the tool plugins shared by the conformance tests
of behaviours 12-21 (a step's answer and its tool calls).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import anyio
import anyio.lowlevel

from dsh import AssistantMessage, hookimpl
from dsh.session import SessionEvent
from dsh.tools import Tool, tool

MODEL = {"model": "scripted"}


def shape(events: Iterable[SessionEvent]) -> list[tuple[Any, ...]]:
    """The core events without chunks, as short tuples that read like the log (tool
    results without their content: see ``results``)."""
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
            out.append((kind, data["call_id"], data["is_error"]))
    return out


def of_type(events: Iterable[SessionEvent], kind: str) -> list[SessionEvent]:
    return [e for e in events if e.type == kind]


def start(number: int, *prompts: str) -> list[tuple[Any, ...]]:
    return [("turn/start", number), *(("user/message", p) for p in prompts)]


def step(number: int, answer: str, *after: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """A step that answered ``answer``; ``after``: what it logged after the answer."""
    return [("step/start", number), ("assistant/message", answer), *after, ("step/end", number)]


def end(number: int, reason: str = "completed") -> list[tuple[Any, ...]]:
    return [("turn/end", number, reason)]


def ran(*calls: tuple[str, str, bool]) -> list[tuple[Any, ...]]:
    """tool/call then tool/result for each (call id, tool name, is_error)."""
    return [row for i, n, e in calls for row in (("tool/call", i, n), ("tool/result", i, e))]


class Toolbox:
    """Registers ``add``, ``echo`` (async, yields once) and ``explode`` plus any extra
    tools; ``ran`` records every run of its own tools, in order."""

    def __init__(self, *extra: Tool) -> None:
        self.ran: list[str] = []
        self.extra = extra

    @hookimpl
    def register_tools(self, register: Any) -> None:
        ran = self.ran

        @tool
        def add(a: int, b: int) -> int:
            "Add two numbers."
            ran.append(f"add {a} {b}")
            return a + b

        @tool
        async def echo(text: str) -> str:
            "Say the text back."
            ran.append(f"echo {text}")
            await anyio.lowlevel.checkpoint()
            ran.append(f"echo {text} done")
            return text

        @tool
        def explode(why: str) -> str:
            "Always fails."
            ran.append("explode")
            raise ValueError(why)

        for each in (add, echo, explode, *self.extra):
            register(each)
