"""Each text split once per checked call, and a bound on what is split for it.

What ``eval`` runs is split again by the checks that look behind it (where the line
may move, ``_moved``; a trap that may move it, ``_traps``; its subjects, ``_commands``),
each from the start of its own ``eval`` chain: ``eval eval ... cat x`` had each level's
text split once for every level above it, so a 64 KB line took minutes and held the
event loop. Inside ``one_split`` (one checked call: all its lines, with everything
they run, ``_calls``; a line checked alone opens its own) each
distinct text is split once and its commands (or why it cannot be) are given again;
and at most ``MAX_SPLIT`` characters are split in all (each level of ``eval`` or
``sh -c`` runs a text of its own). Past that, ``split`` raises ``Unparseable`` and
``spent`` says why: the line is then asked about, never allowed (a check that got no
commands from a text it looks behind might otherwise take it for none).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final

from dsh_permissions._scoped import scoped
from dsh_permissions._shell import MAX_LENGTH, Command, Unparseable
from dsh_permissions._shell import split as split_line

__all__ = ["MAX_SPLIT", "one_split", "spent", "split"]

#: characters split per checked call, every text it runs included: what a line may
#: hold, and as much again for what it runs (eval, sh -c)
MAX_SPLIT: Final = 2 * MAX_LENGTH
_SPENT: Final = (
    f"it runs more than {MAX_SPLIT} characters of commands in all (eval, sh -c), "
    "more than can be checked"
)


@dataclass
class _Line:
    #: each text split, with its commands or why it cannot be split
    kept: dict[str, tuple[Command, ...] | str] = field(default_factory=dict)
    left: int = MAX_SPLIT
    spent: bool = False


_LINE: ContextVar[_Line | None] = ContextVar("dsh_permissions_splits", default=None)


def one_split() -> AbstractContextManager[None]:
    """Inside, ``split`` splits each text once. Nested: the outer scope's are kept."""
    return scoped(_LINE, _Line)


def split(line: str) -> list[Command]:
    """``_shell.split(line)``, once per ``one_split`` and within its ``MAX_SPLIT``."""
    scope = _LINE.get()
    if scope is None:
        return split_line(line)
    found = scope.kept.get(line)
    if found is None:
        scope.left -= len(line)
        if scope.left < 0:
            scope.spent = True
            raise Unparseable(_SPENT)
        try:
            found = tuple(split_line(line))
        except Unparseable as exc:
            found = str(exc)
        scope.kept[line] = found
    if isinstance(found, str):
        raise Unparseable(found)
    return list(found)


def spent() -> str | None:
    """Why the line being checked cannot be: more was split for it than ``MAX_SPLIT``."""
    scope = _LINE.get()
    return _SPENT if scope is not None and scope.spent else None
