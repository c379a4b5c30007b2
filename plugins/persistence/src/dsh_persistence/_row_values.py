"""Values read from a database's rows, checked for the type their column holds.

SQLite stores any value in any column (its types are affinities): a hand edit or
another program can leave a blob where an event's JSON text belongs, text in
``next_seq`` or ``created``. That is damage (load rule 3), said as such: ``count`` and
``number`` raise ``SessionCorruptError`` naming the database, the session and the
field; ``header_of`` makes a session's row a ``SessionHeader``, one with a field of the
wrong type listed with an ``error`` saying which (the other sessions listed as before).
The checks are a type comparison each, made once per value read, never per event (an
event row's type is checked by ``read_log``, where the rows are joined anyway).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from dsh.persistence import SessionHeader
from dsh_persistence._errors import SessionCorruptError

__all__ = ["count", "header_of", "number", "stored", "text"]

_STORED = {str: "text", bytes: "a blob", int: "an integer", float: "a real number"}
_CORRUPT = "The session is corrupt and was left as it is."


def stored(value: object) -> str:
    """How ``value`` read from a row is stored: ``text``, ``a blob``, ``an integer``..."""
    return _STORED.get(type(value), "NULL" if value is None else type(value).__name__)


def _refuse(location: str, session_id: str, field: str, value: object, wanted: str) -> None:
    raise SessionCorruptError(
        f"{location}: session {session_id!r}: its sessions row's {field} is "
        f"{stored(value)}, not {wanted}. {_CORRUPT}"
    )


def count(value: object, location: str, session_id: str) -> int:
    """The session row's ``next_seq``: an integer, else ``SessionCorruptError``."""
    if type(value) is not int:
        _refuse(location, session_id, "next_seq (how many events are stored)", value, "an integer")
    return value  # type: ignore[return-value]


def number(value: object, location: str, session_id: str, field: str) -> float:
    """A time of the session's row (``created``): a number, else ``SessionCorruptError``."""
    if type(value) is not float and type(value) is not int:
        _refuse(location, session_id, field, value, "a number")
    return float(value)  # type: ignore[arg-type]


def text(value: object, location: str, session_id: str, field: str) -> str:
    """A text field of the session's row (``meta``): text, else ``SessionCorruptError``."""
    if type(value) is not str:
        _refuse(location, session_id, field, value, "JSON text" if field == "meta" else "text")
    return value  # type: ignore[return-value]


def header_of(row: Sequence[object], location: str) -> SessionHeader:
    """The header of a session's row (id, created, updated, turns, title, workspace).
    A field holding another type is left at 0 or "" and named in the header's
    ``error``; an id that is not text is shown decoded (no id given reaches it)."""
    session, created, updated, turns, title, workspace = row
    if (
        type(session) is str
        and type(created) is float
        and type(updated) is float
        and type(turns) is int
        and type(title) is str
        and type(workspace) is str
    ):
        return SessionHeader(session, created, updated, turns, title, workspace)
    said: list[str] = []

    def wrong(field: str, value: object, wanted: str) -> None:
        said.append(f"{field} is {stored(value)}, not {wanted}")

    def time(field: str, value: object) -> float:
        if type(value) is float or type(value) is int:
            return float(value)
        wrong(field, value, "a number")
        return 0.0

    def whole(field: str, value: object) -> int:
        if type(value) is int:
            return value
        wrong(field, value, "an integer")
        return 0

    def line(field: str, value: object) -> str:
        if type(value) is str:
            return value
        wrong(field, value, "text")
        return ""

    name = line("id", session)
    if type(session) is bytes:
        name = session.decode("utf-8", "backslashreplace")
    header = SessionHeader(
        name,
        time("created", created),
        time("updated", updated),
        whole("turns", turns),
        line("title", title),
        line("workspace", workspace),
    )
    if not said:  # an integer time (a REAL column stores it as a real number)
        return header
    problems = ", ".join(said)
    error = f"{location}: session {name!r}: its sessions row's {problems}: the row is damaged"
    return replace(header, error=error)
