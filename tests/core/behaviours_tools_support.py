"""The log shapes of behaviours_steps_support.py (tool results without their content)
and the tool plugins shared by the conformance tests of behaviours 12-21 (a step's
answer and its tool calls).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import anyio
import anyio.lowlevel
from behaviours_steps_support import shape as steps_shape

from dsh import hookimpl
from dsh.session import SessionEvent
from dsh.tools import Tool, tool


def shape(events: Iterable[SessionEvent]) -> list[tuple[Any, ...]]:
    """The core events without chunks, as short tuples that read like the log (tool
    results without their content: see ``results``)."""
    return steps_shape(events, contents=False)


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
