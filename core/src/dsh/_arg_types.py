"""Arguments of the wrong type given to a public call, refused at the call: a
``TypeError`` naming the call, the parameter and the type given
(``agents.create(session_id=...) takes a str or None, not an int``), instead of an
internal error from deep inside it (an ``AttributeError`` from the id check). An id
of a subclass of ``str`` (an ``enum.StrEnum`` member) is taken, as plain text
(``plain``): what stores it sees a ``str``."""

from __future__ import annotations

import os
from typing import Any, overload

from dsh.persistence import StoredSession

__all__ = ["a_kind", "check_args", "plain"]

_NONE = type(None)

#: parameter -> (the types it takes, how the message says so)
_TAKES: dict[str, tuple[tuple[type, ...], str]] = {
    "agent_id": ((str,), "a str"),
    "resume_session_id": ((str,), "a str"),
    "session_id": ((str, _NONE), "a str or None"),
    "new_session_id": ((str, _NONE), "a str or None"),
    "meta": ((dict, _NONE), "a dict or None"),
    "options": ((dict, _NONE), "a dict or None"),
    "workspace": ((str, os.PathLike, _NONE), "a str, a path or None"),
    "turns": ((int,), "an int"),
    "stored": ((StoredSession,), "a StoredSession"),
}


def a_kind(value: object) -> str:
    """``value``'s type with its article: ``"an int"``, ``"a dict"``; ``"None"``."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def check_args(call: str, *, required: tuple[str, ...] = (), **values: Any) -> None:
    """Raise ``TypeError`` for the first of ``values`` (parameter name -> value) that is
    not of a type its parameter takes (``_TAKES``); ``call`` names the call
    (``"agents.create"``), ``required`` the parameters that take no None there. A
    ``bool`` is not taken for an ``int`` (``turns=True`` is a mistake, not turn 1)."""
    for name, value in values.items():
        types, wanted = _TAKES[name]
        if name in required:
            types, wanted = types[:-1], wanted.removesuffix(" or None")
        if not isinstance(value, types) or (type(value) is bool and bool not in types):
            raise TypeError(f"{call}({name}=...) takes {wanted}, not {a_kind(value)}")


@overload
def plain(value: str) -> str: ...
@overload
def plain(value: str | None) -> str | None: ...
def plain(value: str | None) -> str | None:
    """``value`` as a plain ``str`` (the text of a ``StrEnum`` member, not its
    ``__str__``), or None: an id that the session, its meta and the stores keep."""
    return value if value is None or type(value) is str else str.__str__(value)
