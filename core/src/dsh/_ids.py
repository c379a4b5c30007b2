"""The ids a program gives ``agents.create``: an agent's and its session's.

Either is shown and typed on the command line (``dsh sessions show ID``) and printed
in a table (``dsh sessions list``), so it may not be empty, start with ``-`` (taken for
an option) or hold a control character (a line break or an escape sequence breaks the
table, or the terminal) or a lone surrogate (no file, database or terminal can take
it). Any other text is an id: spaces, dashes, any script."""

from __future__ import annotations

import unicodedata

from dsh.errors import DshError

__all__ = ["check_id", "why_not"]

#: control characters (C0, DEL, C1) and the line and paragraph separators
_UNSHOWN = frozenset({"Cc", "Zl", "Zp"})


def check_id(what: str, value: str) -> None:
    """Refuse ``value`` as ``what`` (``"agent id"``, ``"session id"``), saying why."""
    why = why_not(value)
    if why is not None:
        raise DshError(f"{what} {value!r} {why}")


def why_not(value: str) -> str | None:
    """Why ``value`` cannot be an id (None: it can)."""
    if not value:
        return "may not be empty"
    if value.startswith("-"):
        return "may not start with '-' (the command line would take it for an option)"
    for char in value:
        if unicodedata.category(char) in _UNSHOWN:
            return f"may not hold a control character (U+{ord(char):04X})"
        if unicodedata.category(char) == "Cs":  # from bytes decoded with surrogateescape
            return f"may not hold a lone surrogate (U+{ord(char):04X}): it is not text"
    return None
