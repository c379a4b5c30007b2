"""What the contract suite's test modules share: how they name a session and its log."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dsh import AssistantMessage, Message, ToolResultMessage
from dsh.session import SessionEvent
from dsh_persistence._backend import SessionBackend, SessionInfo
from dsh_persistence.testing._logs import LogBuilder

__all__ = ["Opener", "dicts", "info", "two_turns", "unanswered_calls"]

Opener = Callable[[], SessionBackend]


def info(session_id: str = "s1", **meta: Any) -> SessionInfo:
    return SessionInfo(session_id, 1_700_000_000.0, dict(meta), "/work", "hello")


def dicts(events: list[SessionEvent]) -> list[dict[str, Any]]:
    return [event.to_dict() for event in events]


def unanswered_calls(history: Sequence[Message]) -> set[str]:
    """Ids of tool calls in the history that no tool result answers (a provider
    refuses such a request)."""
    calls = {c.id for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls}
    return calls - {m.call_id for m in history if isinstance(m, ToolResultMessage)}


def two_turns() -> LogBuilder:
    log = LogBuilder()
    log.turn("what is 1+2?")
    log.turn("thanks", calls=())
    return log
