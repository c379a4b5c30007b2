"""A plugin's history reducer as the harness registers it (``register_history_reducers``):
refused at start-up when it could never run (not callable; an ``async def``, whose
coroutine nothing would await), and called so that whatever goes wrong is the plugin's
``HistoryReducerError``, naming it, the event and the reducer: what it raises, and what
it gives back that is no history (a tuple, a coroutine, a dict appended for a message),
which would otherwise become the history and fail every later turn in dsh's own
reducers, naming no plugin. The session cuts the history back when it raises."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, cast

from dsh.errors import DshError, HistoryReducerError
from dsh.messages import AssistantMessage, ToolResultMessage, UserMessage

if TYPE_CHECKING:
    from dsh._event import SessionEvent
    from dsh.messages import Message
    from dsh.session import HistoryReducer

__all__ = ["plugin_reducer"]

_MESSAGES = (UserMessage, AssistantMessage, ToolResultMessage)
_HOLDS = "a history holds messages (UserMessage, AssistantMessage, ToolResultMessage)"


def plugin_reducer(plugin: str, event_type: str, reducer: object) -> HistoryReducer:
    """``reducer``, checked, raising ``HistoryReducerError`` for what it does wrong;
    a ``DshError`` naming ``plugin`` when it cannot be a reducer at all."""
    said = f"plugin {plugin!r} registers a history reducer for {event_type!r}"
    if not callable(reducer):
        raise DshError(
            f"{said} that is {type(reducer).__name__}, not a function; register "
            "reducer(history, event)"
        )
    name = getattr(reducer, "__qualname__", None) or repr(reducer)
    if inspect.iscoroutinefunction(reducer) or inspect.iscoroutinefunction(inspect.unwrap(reducer)):
        raise DshError(
            f"{said} that is an async def ({name}), which nothing would await: a reducer "
            "runs as the event is logged; make it a plain def"
        )

    def reduce(history: list[Message], event: SessionEvent) -> list[Message] | None:
        kept = len(history)
        try:
            replaced: object = reducer(history, event)
            _check(history, kept, replaced)
        except Exception as error:
            raise HistoryReducerError(plugin, event_type, event.seq, name, error) from error
        return cast("list[Message] | None", replaced)  # _check passed it

    return reduce


def _check(history: list[Message], kept: int, replaced: object) -> None:
    """Raise ``TypeError`` for a result that is no history: ``replaced`` is neither None
    nor a list of messages, or what was appended to ``history`` (from ``kept`` on) holds
    something else."""
    if replaced is None:
        for index in range(kept, len(history)):
            if not isinstance(history[index], _MESSAGES):
                what = type(history[index]).__name__
                raise TypeError(f"appended {what} at index {index}; {_HOLDS}")
        return
    if not isinstance(replaced, list):
        close = getattr(replaced, "close", None)
        if inspect.iscoroutine(replaced) and close is not None:
            close()  # no "never awaited" warning pointing into dsh
        raise TypeError(
            f"returned {type(replaced).__name__}; a reducer appends to the history list "
            "it is given and returns None, or returns a new list of messages"
        )
    for index, message in enumerate(replaced):
        if not isinstance(message, _MESSAGES):
            what = type(message).__name__
            raise TypeError(f"returned a list holding {what} at index {index}; {_HOLDS}")
