"""Realistic session logs, built event by event, for backend tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dsh import AssistantMessage, TextBlock, ToolCall, Usage
from dsh.session import SessionEvent

__all__ = ["LogBuilder"]


class LogBuilder:
    """Appends the events the agent loop would log; ``events`` is the log so far.

    ``turn(...)`` adds a whole turn: the prompt, a step whose answer calls ``calls``
    (each answered by a ``tool/result``), then a step with the text ``answer``.
    """

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.events: list[SessionEvent] = []
        self.turns = 0
        self._clock = start

    def add(self, kind: str, data: dict[str, Any]) -> SessionEvent:
        self._clock += 0.001
        event = SessionEvent(kind, len(self.events), self._clock, data)
        self.events.append(event)
        return event

    def turn(
        self,
        prompt: str = "hello",
        *,
        calls: Sequence[tuple[str, dict[str, Any]]] = (("add", {"a": 1, "b": 2}),),
        answer: str = "done",
        reason: str = "completed",
    ) -> list[SessionEvent]:
        start = len(self.events)
        self.turns += 1
        turn = self.turns
        self.add("turn/start", {"turn": turn})
        self.add("user/message", {"content": prompt})
        step = 0
        if calls:
            step += 1
            blocks = [
                ToolCall(id=f"t{turn}-c{i}", name=name, arguments=json.dumps(args))
                for i, (name, args) in enumerate(calls)
            ]
            self.step(turn, step, "let me see", blocks)
            for block in blocks:
                call = {"id": block.id, "name": block.name, "arguments": block.arguments}
                self.add("tool/call", call)
                result = {"call_id": block.id, "name": block.name, "content": "3"}
                self.add("tool/result", {**result, "is_error": False})
            self.add("step/end", {"turn": turn, "step": step})
        step += 1
        self.step(turn, step, answer, [])
        self.add("step/end", {"turn": turn, "step": step})
        usage = Usage(input_tokens=10 * step, output_tokens=2 * step).model_dump()
        self.add("turn/end", {"turn": turn, "reason": reason, "usage": usage})
        return self.events[start:]

    def step(self, turn: int, step: int, text: str, calls: list[ToolCall]) -> None:
        """``step/start``, the streamed text, and the ``assistant/message`` (no end)."""
        self.add("step/start", {"turn": turn, "step": step})
        for part in (text[: len(text) // 2], text[len(text) // 2 :]):
            self.add("assistant/chunk", {"kind": "text", "text": part})
        message = AssistantMessage(
            content=(TextBlock(text=text), *calls),
            stop_reason="tool_calls" if calls else "stop",
            usage=Usage(input_tokens=10, output_tokens=2),
            model="scripted",
        )
        self.add("assistant/message", {"message": message.model_dump(mode="json")})
