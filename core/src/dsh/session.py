"""The session: an append-only event log, the history derived from it, and the store
(the event itself, ``SessionEvent``, is defined in ``dsh._event``; it is re-exported here
and names this module as its own, so pickles and reprs say ``dsh.session``).

The log is the source of truth. Every event is ``{type, seq, time, data}`` with ``seq``
equal to its index and ``data`` lossless JSON. What the model sees (the derived history)
is a pure function of the log, kept up to date incrementally by one reducer per event
type, so deriving costs O(1) per event rather than O(n) per step.
"""

from __future__ import annotations

import time
from collections.abc import (
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from itertools import islice
from typing import Any, Final, final, overload

from dsh._emitted import EmitNotAwaitedWarning, Emitted
from dsh._event import EVENT_TYPES, SessionEvent, check_plugin_type
from dsh._json import checked_copy
from dsh._ready import READY
from dsh.errors import DshError, EventDataError
from dsh.messages import AssistantMessage, Message, ToolResultMessage, UserMessage, trusted

_now: Final = time.time

__all__ = [
    "EVENT_TYPES",
    "EmitNotAwaitedWarning",
    "HistoryReducer",
    "HistoryView",
    "Session",
    "SessionEvent",
    "SessionStore",
]

#: Folds one event into the derived history. A reducer may only *append* to the list
#: it is given; to change earlier messages it returns a new list that replaces it. That
#: keeps every ``HistoryView`` handed out earlier a true snapshot.
HistoryReducer = Callable[[list[Message], SessionEvent], "list[Message] | None"]


_new_event: Final = object.__new__  # Session._record sets the slots itself


def _data(data: dict[str, Any], event_type: str) -> dict[str, Any]:
    """A copy of event ``data`` for the log; ``EventDataError`` unless it is a dict of
    lossless JSON."""
    if data.__class__ is not dict:
        reason = f"is a {data.__class__.__name__}, not a dict"
        raise EventDataError(event_type, "data", reason)
    copy: dict[str, Any] = checked_copy(data, event_type)
    return copy


@final
class HistoryView(Sequence[Message]):
    """An O(1) snapshot of the derived history: the first ``len`` messages of a list
    that is only ever appended to."""

    __slots__ = ("_items", "_len")

    def __init__(self, items: list[Message], length: int) -> None:
        self._items = items
        self._len = length

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._len)  # backwards, -1 is before the first:
            if step > 0:  # the list under the view would read it as its last item
                return self._items[start:stop:step]
            return [self._items[at] for at in range(start, stop, step)]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError("history index out of range")
        return self._items[index]

    def __iter__(self) -> Iterator[Message]:
        return islice(self._items, self._len)

    def continues(self, earlier: HistoryView) -> bool:
        """True when this view is ``earlier`` with messages appended: no reducer replaced
        the history between the two, so their first ``len(earlier)`` messages are the
        same objects. An O(1) check for whoever keeps something per message."""
        return self._items is earlier._items and self._len >= earlier._len

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == self._len and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HistoryView({list(self)!r})"


# The reducers also fold stored logs, so they check what they read; data of the right
# types (always, for a live session) skips pydantic's validation.
def _user(history: list[Message], event: SessionEvent) -> None:
    content = event.data["content"]
    if type(content) is str:
        history.append(trusted(UserMessage, {"role": "user", "content": content}))
    else:
        history.append(UserMessage(content=content))  # raises, naming the field


def _assistant(history: list[Message], event: SessionEvent) -> None:
    message = event.value
    if not isinstance(message, AssistantMessage):
        message = AssistantMessage.model_validate(event.data["message"])
    if not message.is_empty:
        history.append(message)


def _tool_result(history: list[Message], event: SessionEvent) -> None:
    data = event.data
    values = {
        "role": "tool",
        "call_id": data["call_id"],
        "name": data["name"],
        "content": data["content"],
        "is_error": data["is_error"],
    }
    if (
        type(values["call_id"]) is str
        and type(values["name"]) is str
        and type(values["content"]) is str
        and type(values["is_error"]) is bool
    ):
        history.append(trusted(ToolResultMessage, values))
    else:
        history.append(ToolResultMessage.model_validate(values))  # raises, naming the field


CORE_REDUCERS: Final[Mapping[str, HistoryReducer]] = {
    "user/message": _user,
    "steering/message": _user,
    "assistant/message": _assistant,
    "tool/result": _tool_result,
}

#: Told about every appended event; returns an awaitable only when it has async work.
Observer = Callable[["Session", SessionEvent], "Awaitable[None] | None"]


class Session:
    """An append-only log with its derived history.

    ``emit`` is a plugin's way in: it refuses the core's own event types (which the
    core logs with ``_record``) and data that is not a dict of lossless JSON, logs a
    copy of the data, numbers the event, folds it into the history and tells the
    observer (the ``session_event`` hook) about it. ``append`` does the same without
    telling the observer. Whoever reads an event (an observer, a reducer) must not
    change its ``data``: the log is what it holds.
    """

    __slots__ = ("_events", "_history", "_reducers", "created", "id", "meta", "observer")

    def __init__(
        self,
        id: str,
        events: Iterable[SessionEvent] = (),
        *,
        meta: dict[str, Any] | None = None,
        reducers: Mapping[str, HistoryReducer] = CORE_REDUCERS,
        observer: Observer | None = None,
        created: float | None = None,
    ) -> None:
        self.id = id
        self.meta = meta if meta is not None else {}
        self.created = time.time() if created is None else created
        self.observer = observer
        self._reducers = reducers
        self._events: list[SessionEvent] = []
        self._history: list[Message] = []
        for event in events:
            if event.seq != len(self._events):
                raise DshError(
                    f"session {id!r}: event {event.type!r} has seq {event.seq}, "
                    f"expected {len(self._events)}"
                )
            self._fold(event)

    @property
    def events(self) -> Sequence[SessionEvent]:
        return self._events

    @property
    def history(self) -> HistoryView:
        """What the model sees, derived from the log as it stands (an O(1) snapshot)."""
        return HistoryView(self._history, len(self._history))

    def _fold(self, event: SessionEvent) -> None:
        """Fold ``event`` into the history, then log it. A reducer that raises leaves
        neither: the history list is cut back to its length (a reducer only appends to
        the list it is given or returns a new one), and the event was never in the log,
        which a persistence plugin's worker thread may read meanwhile."""
        reducer = self._reducers.get(event.type)
        if reducer is not None:
            history = self._history
            kept = len(history)
            try:
                replaced = reducer(history, event)
            except BaseException:
                del history[kept:]
                raise
            if replaced is not None:
                self._history = replaced
        self._events.append(event)
        event.value = None  # folded: the history holds the object while it shows it

    def append(self, type: str, data: dict[str, Any], value: object = None) -> SessionEvent:
        """Log a plugin's own event without telling the observer; a plugin uses
        ``emit``, which does. ``value`` is the live object ``data`` was dumped from, if
        any, handed to the reducer of the event's type (which may put it in the history
        rather than rebuild it from ``data``) and then dropped from the event. Refused
        as ``emit`` refuses: one of the core's types (``EventTypeError``), ``data`` that
        is not a dict of lossless JSON (``EventDataError``). The log holds a copy of
        ``data``: changing it afterwards changes nothing logged."""
        check_plugin_type(type)
        return self._append(type, data, value)

    def _append(self, type: str, data: dict[str, Any], value: object = None) -> SessionEvent:
        """``append`` of any type, the core's too (tests build logs with it)."""
        event = SessionEvent(type, len(self._events), _now(), _data(data, type), value)
        self._fold(event)
        return event

    def emit(self, type: str, data: dict[str, Any], value: object = None) -> Awaitable[None]:
        """Log a plugin's own event, then tell the observer (the ``session_event``
        hook); await the result (dropped unawaited, it warns: ``EmitNotAwaitedWarning``,
        whether or not an async observer is installed). Refused before anything is
        logged: a ``type`` that is one of the core's or not ``name/what``
        (``EventTypeError``), ``data`` that is not a dict of lossless JSON
        (``EventDataError``). The log holds a copy of
        ``data``: changing it afterwards changes nothing logged. ``value``: as for
        ``append``. If the type's history reducer raises, the event is not logged and
        the history is left as it was (a plugin's reducer: ``HistoryReducerError``)."""
        check_plugin_type(type)
        data = _data(data, type)
        seq = len(self._events)
        if type in self._reducers:  # a plugin's reducer may raise: nothing is logged then
            event = SessionEvent(type, seq, _now(), data, value)
            self._fold(event)
            observer = self.observer
            pending = READY if observer is None else observer(self, event) or READY
        else:
            pending = self._record(type, data, value)
        return Emitted(pending, type, seq)

    def _record(
        self, type: str, data: dict[str, Any], value: object = None, *, at: float | None = None
    ) -> Awaitable[None]:
        """The core's own logging (the loop's events, a resume's seed and closers):
        ``emit`` without its checks, for events the core built from typed values or a
        stored log already holds; a plugin uses ``emit``. Sync observers run right
        here, so with no async observer the await is free. ``data`` is logged as it is,
        not copied: the core builds it fresh for the event. ``at``: the event's time,
        instead of now (a resume's closers keep the one ``close_turn`` gave them). The
        hot path of the loop: ``append`` and ``_fold`` are inlined."""
        events = self._events
        # SessionEvent(type, len(events), _now(), data, value) without its __init__ call
        event = _new_event(SessionEvent)
        event.type = type
        event.seq = len(events)
        event.time = _now() if at is None else at
        event.data = data
        event.value = value
        events.append(event)
        reducer = self._reducers.get(type)
        if reducer is not None:
            replaced = reducer(self._history, event)
            if replaced is not None:
                self._history = replaced
        if value is not None:
            event.value = None  # folded: as in ``_fold``
        observer = self.observer
        if observer is not None:
            pending = observer(self, event)
            if pending is not None:
                return pending
        return READY

    def __repr__(self) -> str:
        return f"<Session {self.id!r} events={len(self._events)}>"


class SessionStore:
    """The live sessions of a harness, by id.

    ``prepare`` builds a session that is not yet live; ``enter`` makes it live and
    refuses an id that already is, so a stale prepared session can neither overwrite a
    live one nor later remove it (``remove`` only removes the very object it is given).
    """

    __slots__ = ("_live", "_observer", "reducers")

    def __init__(
        self,
        *,
        observer: Observer | None = None,
        reducers: Mapping[str, HistoryReducer] = CORE_REDUCERS,
    ) -> None:
        self._live: dict[str, Session] = {}
        self._observer = observer
        self.reducers = reducers

    @property
    def observer(self) -> Observer | None:
        """Told about every event of every live session (None: nobody listens, and
        emitting costs nothing more). Setting it updates the live sessions too."""
        return self._observer

    @observer.setter
    def observer(self, observer: Observer | None) -> None:
        self._observer = observer
        for session in self._live.values():
            session.observer = observer

    def prepare(
        self,
        id: str,
        events: Iterable[SessionEvent] = (),
        *,
        meta: dict[str, Any] | None = None,
        created: float | None = None,
    ) -> Session:
        return Session(
            id,
            events,
            meta=meta,
            reducers=self.reducers,
            observer=self.observer,
            created=created,
        )

    def enter(self, session: Session) -> Session:
        if session.id in self._live:
            raise DshError(f"session {session.id!r} is already live; it cannot be entered twice")
        self._live[session.id] = session
        session.observer = self._observer
        return session

    def get(self, id: str) -> Session | None:
        return self._live.get(id)

    def list(self) -> list[Session]:
        return list(self._live.values())

    def remove(self, session: Session) -> bool:
        """Remove ``session`` if it is the live one under its id; True if removed."""
        if self._live.get(session.id) is session:
            del self._live[session.id]
            return True
        return False

    def fork(self, source: Session, new_id: str, turns: int) -> Session:
        """A prepared session seeded with ``source``'s log up to the end of turn ``turns``;
        its meta is ``source``'s (the agent and options that made it, so a resumed fork
        goes on as its source would) with ``parent`` and ``seed_length`` set."""
        cut = fork_cut(source.id, source.events, turns)
        meta = {**source.meta, "parent": source.id, "seed_length": cut}
        return self.prepare(new_id, source.events[:cut], meta=meta)


def fork_cut(session_id: str, events: Sequence[SessionEvent], turns: int) -> int:
    """How many of ``events`` (session ``session_id``'s log) a fork at the end of turn
    ``turns`` keeps; ``DshError`` if that turn did not finish."""
    cut, finished = 0, turns == 0
    for event in events:
        if event.type == "turn/end" and event.data["turn"] <= turns:
            cut = event.seq + 1
            finished = finished or event.data["turn"] == turns
    if not finished:
        raise DshError(f"session {session_id!r} has no finished turn {turns} to fork at")
    return cut
