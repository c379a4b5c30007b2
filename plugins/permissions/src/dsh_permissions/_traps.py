"""A trap's action runs later than where ``trap`` stands: on ``EXIT`` after the line's
last command, on ``DEBUG`` before each command, on ``ERR``, ``RETURN`` or a signal in
between. By then the line may have changed directory or set a variable that changes
what it reads (``trap 'cat passwd' EXIT; cd /etc`` reads ``/etc/passwd``; ``trap 'cat
~/x' EXIT; HOME=/etc``; ``trap 'head x -n .env' EXIT; export POSIXLY_CORRECT=1``).

So the action is checked where ``trap`` stands (``_runs._builtin``) and, when the
line may have moved or set a variable after it, once more at the end of the line
(``late``), as the line leaves things: every directory the shell may have been in
(``_moved.Places`` only grows) and every variable it may have set
(``_option_variables``, which only grows too), which covers each moment in between.
A trap set by a line the line runs (``eval``, ``sh -c``) is checked at the end of that
line and again at the end of each enclosing one: stricter for ``sh -c`` (whose
traps run in its own shell), never looser.

An action that may move the shell (``cd``, ``pushd``, ``popd``, ``source``, also behind
``eval`` or in a nested ``trap``; one only known when it runs) on anything but ``EXIT``
may run before any later command (``DEBUG`` before each, ``ERR``, ``RETURN``, a signal):
from that ``trap`` on (also behind ``eval``) the places are lost (``then``), and a
relative path is unknown as after ``cd "$D"``. What the action may set (``HOME``) counts
already: it is checked where ``trap`` stands, in the line's scope (``_line_vars``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Final

from dsh_permissions._evaluated import trap_action
from dsh_permissions._moved import MOVERS, Places, program_at
from dsh_permissions._option_variables import line_snapshot
from dsh_permissions._shell import MAX_DEPTH, Command, Unparseable
from dsh_permissions._shell_words import Word
from dsh_permissions._splits import split

__all__ = ["Trap", "late", "line_traps", "pending", "then"]

#: what a trap may be set on that runs after the line's last command
_EXIT: Final = frozenset({"EXIT", "SIGEXIT", "0"})
#: commands that may change the shell's directory (``source``: what the file does)
_MOVING: Final = MOVERS | {"source", ".", "trap"}


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


def then(places: Places, words: Sequence[Word], moved: bool) -> tuple[Places, bool]:
    """``places.then(words, moved)``; lost (and moved) when ``words`` sets a trap
    whose action may move the shell before a later command (see the module)."""
    after, moved = places.then(words, moved)
    if _moving_trap(words, 0):
        return replace(after, lost=True), True
    return after, moved


def _moving_trap(words: Sequence[Word], depth: int) -> bool:
    """Whether ``words`` (also behind ``eval``) sets a trap whose action may move the
    shell on anything but ``EXIT``."""
    texts = [w.text for w in words]
    index = program_at(texts)
    if index is None or texts[index] not in ("trap", "eval"):
        return False
    args = tuple(words[index + 1 :])
    if texts[index] == "eval":
        commands = _commands(args, depth)
        return commands is not None and any(_moving_trap(c.words, depth + 1) for c in commands)
    action = trap_action(args)
    signals = args[2:] if args and args[0].text == "--" else args[1:]
    if not action or all(s.text.upper() in _EXIT for s in signals):
        return False
    return _may_move(action, depth)


def _may_move(words: tuple[Word, ...], depth: int) -> bool:
    """Whether the script ``words`` (a trap's action, eval's words) may change the
    shell's directory: a ``cd``, ``source`` or ``trap`` in it; one not known."""
    commands = _commands(words, depth)
    if commands is None:
        return True
    for command in commands:
        texts = [w.text for w in command.words]
        index = program_at(texts)
        if index is None:
            continue
        name = os.path.basename(texts[index])
        if name in _MOVING or (name == "eval" and _may_move(command.words[index + 1 :], depth + 1)):
            return True
    return False


def _commands(words: tuple[Word, ...], depth: int) -> list[Command] | None:
    """The commands of the script ``words``, None when not known (a value only the
    shell knows, a line the splitter refuses, nested too deep)."""
    if depth > MAX_DEPTH or any(w.dynamic for w in words):
        return None
    try:
        return split(" ".join(w.text for w in words))
    except Unparseable:
        return None
