"""Finished turns read from a session log: what a program embedding dsh wants to know
once a prompt has been answered.

::

    result = await agent.prompt("What does src/app.py do?")
    result.raise_for_error()  # a TurnError if the turn ended ``error``
    print(result.text)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from dsh.errors import TurnError
from dsh.messages import Usage
from dsh.session import SessionEvent

__all__ = ["TurnResult", "turns"]

_NO_USAGE: Final = Usage()


@dataclass(frozen=True, slots=True)
class TurnResult:
    """One finished turn: its events from ``turn/start`` to ``turn/end`` and what they say.

    ``reason`` is how it ended: ``completed``, ``max-tokens``, ``error``, ``aborted``,
    ``disposed`` (or ``interrupted``, in a log repaired after a crash). ``error`` is the
    ``turn/end`` event's error (``code``, ``message``, ``plugin``/``hook`` when a plugin
    failed, ``retry_after`` when a server said how long to wait), None unless the turn
    ended ``error``. Model and tool failures end a turn
    ``error`` rather than raise: check ``reason``, or call ``raise_for_error()``.
    """

    turn: int
    reason: str
    error: dict[str, Any] | None
    usage: Usage
    events: tuple[SessionEvent, ...]
    #: Why the session could not be saved after this turn (a persistence plugin's
    #: ``session_flush`` failed), as ``prompt()`` saw it; None when it was saved, or
    #: nothing saves sessions.
    save_error: str | None = None

    @property
    def stopped(self) -> str | None:
        """The reason a plugin gave when it stopped the turn (an ``agent_turn_continuation``
        stop with a ``reason``, such as a budget guard's); None otherwise."""
        end = self.events[-1] if self.events else None
        if end is None or end.type != "turn/end":
            return None
        stopped = end.data.get("stopped")
        return stopped if isinstance(stopped, str) else None

    @property
    def prompts(self) -> list[str]:
        """The prompts the turn took (several when queued prompts were batched)."""
        return [e.data["content"] for e in self.events if e.type == "user/message"]

    @property
    def text(self) -> str:
        """The text of the turn's last assistant message: the answer, for a turn that
        completed (for one cut off, the text it had streamed); ``""`` if it has none."""
        for event in reversed(self.events):
            if event.type == "assistant/message":
                content = event.data["message"]["content"]
                return "".join(b["text"] for b in content if b.get("type") == "text")
        return ""

    def raise_for_error(self) -> None:
        """Raise ``TurnError`` if the turn ended ``error``, or could not be saved (code
        ``NOT_SAVED``); otherwise do nothing."""
        if self.reason != "error" and self.save_error is not None:
            raise TurnError(self.turn, "NOT_SAVED", self.save_error)
        if self.reason == "error":
            error = self.error or {}
            raise TurnError(
                self.turn,
                str(error.get("code", "UNKNOWN")),
                str(error.get("message", "")),
                error.get("plugin"),
                error.get("hook"),
                error.get("retry_after"),
            )


def turns(events: Iterable[SessionEvent]) -> list[TurnResult]:
    """The finished turns among ``events``, in order; a turn whose ``turn/start`` or
    ``turn/end`` is not among them (one still running, or begun before) is left out."""
    out: list[TurnResult] = []
    current: list[SessionEvent] | None = None
    for event in events:
        if event.type == "turn/start":
            current = [event]
        elif current is not None:
            current.append(event)
            if event.type == "turn/end":
                data = event.data
                usage = data.get("usage")
                out.append(
                    TurnResult(
                        turn=int(data["turn"]),
                        reason=str(data["reason"]),
                        error=data.get("error"),
                        usage=Usage.model_validate(usage) if usage else _NO_USAGE,
                        events=tuple(current),
                    )
                )
                current = None
    return out
