"""One entry of a session's log, ``SessionEvent``: ``{type, seq, time, data}`` and its
JSON forms; and the core's event types. ``dsh.session`` re-exports both."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, final

from dsh._json import encode
from dsh.errors import EventTypeError

__all__ = ["EVENT_TYPES", "SessionEvent", "check_plugin_type"]


#: The core's event types. Plugins add their own (``compact/*``, ``permission/*``).
EVENT_TYPES: Final = (
    "turn/start",
    "turn/end",
    "step/start",
    "step/end",
    "step/retry",
    "user/message",
    "steering/message",
    "assistant/chunk",
    "assistant/message",
    "tool/call",
    "tool/result",
)

_CORE_TYPES: Final = frozenset(EVENT_TYPES)
#: ``name/what``: a name, a slash and what happened, with no whitespace.
_PLUGIN_TYPE: Final = re.compile(r"[^/\s]+/\S+")


def check_plugin_type(event_type: object) -> None:
    """Raise ``EventTypeError`` unless ``event_type`` is a type a plugin may log: a
    ``str`` of the shape ``name/what`` that is none of the core's types (a plugin's
    ``turn/end`` would break the log's invariants: its session could not be resumed)."""
    if not isinstance(event_type, str):
        reason = f"is a {type(event_type).__name__}, not a str"
        raise EventTypeError(repr(event_type), reason)
    if event_type in _CORE_TYPES:
        reason = (
            "is one of the core's event types, which only the core logs; "
            "log a type of your own, 'yourplugin/what'"
        )
        raise EventTypeError(event_type, reason)
    if _PLUGIN_TYPE.fullmatch(event_type) is None:
        reason = "is not 'name/what' (a plugin's name, a slash and what happened, no spaces)"
        raise EventTypeError(event_type, reason)


@final
class SessionEvent:
    """One log entry. Treat as immutable (``value`` aside: the session drops it once
    the event is folded, see ``Session.append``)."""

    __slots__ = ("data", "seq", "time", "type", "value")
    __module__ = "dsh.session"  # where users import it; pickles name it there

    def __init__(
        self, type: str, seq: int, time: float, data: dict[str, Any], value: object = None
    ) -> None:
        self.type = type
        self.seq = seq
        self.time = time
        self.data = data
        #: The live object ``data`` was dumped from (a message), if any; not serialised.
        #: Only the history reducers get it: a session sets it to None once the event is
        #: folded, so the log keeps ``data`` alone and the object lives only as long as
        #: the history shows it (after a compaction, thousands of old messages would
        #: otherwise be held twice, as data and as objects).
        self.value = value

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "seq": self.seq, "time": self.time, "data": self.data}

    def to_json(self, session: str | None = None) -> str:
        """The event as one line of JSON, for people and scripts: the characters some
        readers take for line ends (U+2028, U+2029, U+0085) are written escaped, and so
        are those the text output escapes (bidi controls, tag characters: ``visible``),
        which a terminal would reorder or hide. With ``session``, the line names its
        session first (``dsh run --json``)."""
        from dsh._visible import json_visible  # its tables cost ~2 ms to import

        raw = self.to_dict() if session is None else {"session": session, **self.to_dict()}
        return json_visible(encode(raw).decode())

    def to_json_bytes(self) -> bytes:
        """The event as compact UTF-8 JSON, for writers: ``to_json()`` without its
        escaping of Unicode line ends (a file is split on ``\\n``)."""
        return encode(self.to_dict())

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> SessionEvent:
        return cls(raw["type"], raw["seq"], raw["time"], raw["data"])

    def __repr__(self) -> str:
        try:
            data = repr(self.data)
        except ValueError:  # an int of more digits than repr writes (check_json refuses it)
            data = "<not printable>"
        return f"SessionEvent({self.type!r}, seq={self.seq}, data={data})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionEvent):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]
