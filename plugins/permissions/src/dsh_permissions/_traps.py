"""A trap's action runs later than where ``trap`` stands: on ``EXIT`` after the line's
last command, on ``DEBUG`` before each command, on ``ERR``, ``RETURN`` or a signal in
between. By then the line may have changed directory or set a variable that changes
what it reads (``trap 'cat passwd' EXIT; cd /etc`` reads ``/etc/passwd``; ``trap 'cat
~/x' EXIT; HOME=/etc``; ``trap 'head x -n .env' EXIT; export POSIXLY_CORRECT=1``).

So the action is checked where ``trap`` stands (``_commands._builtin``) and, when the
line may have moved or set a variable after it, once more at the end of the line
(``late``), as the line leaves things: every directory the shell may have been in
(``_moved.Places`` only grows) and every variable it may have set
(``_option_variables``, which only grows too), which covers each moment in between.
A trap set by a line the line runs (``eval``, ``sh -c``) is checked at the end of that
line and again at the end of each enclosing one: stricter for ``sh -c`` (whose
traps run in its own shell), never looser.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from dsh_permissions._evaluated import trap_action
from dsh_permissions._moved import Places
from dsh_permissions._option_variables import line_snapshot
from dsh_permissions._shell_words import Word

__all__ = ["Trap", "late", "line_traps", "pending"]


@dataclass(frozen=True)
class Trap:
    """An action set by ``trap``, and the line's state where it was set."""

    action: tuple[Word, ...]
    moved: bool
    dirs: tuple[str, ...]
    variables: frozenset[str]


_LINE: ContextVar[list[Trap] | None] = ContextVar("dsh_permissions_traps", default=None)


@contextmanager
def line_traps() -> Iterator[list[Trap]]:
    """The traps set while checking one line (each line its own; on leaving, an
    enclosing line's get them too)."""
    outer = _LINE.get()
    found: list[Trap] = []
    token = _LINE.set(found)
    try:
        yield found
    finally:
        _LINE.reset(token)
        if outer is not None:
            outer.extend(found)


def pending(args: tuple[Word, ...], moved: bool, places: Places) -> tuple[Word, ...]:
    """The action ``trap ARGS`` sets (``trap_action``), noted for ``late``."""
    action = trap_action(args)
    found = _LINE.get()
    if action and found is not None:
        found.append(Trap(action, moved, (*places.dirs, str(places.lost)), line_snapshot()))
    return action


def late(traps: list[Trap], moved: bool, places: Places) -> list[tuple[Word, ...]]:
    """The actions of ``traps`` to check again at the end of the line: those after
    which it may have moved (``moved``, ``places``: where it may be at its end) or set
    a variable."""
    dirs = (*places.dirs, str(places.lost))
    variables = line_snapshot()
    return [
        t.action
        for t in list(traps)
        if t.moved != moved or t.dirs != dirs or t.variables != variables
    ]
