"""What a line may set before a later part of it reads it: ``HOME``, ``OLDPWD`` and
bash's ``cdable_vars``.

``~`` is the shell's ``HOME`` where the word is expanded, ``cd`` with no directory goes
to ``HOME``, ``cd -`` to ``OLDPWD``, and with ``cdable_vars`` on, ``cd NAME`` goes to
the directory ``$NAME`` holds. The checker reads ``~`` as dsh's own home and follows
``cd`` to a directory it can name (``_moved``), which a line may change first:
``HOME=/etc; cat ~/passwd`` reads ``/etc/passwd``. So the commands of a line (with the
lines it runs in turn: ``sh -c``, ``eval``, ``find -exec``) are looked at in order, and
from the first one that may set one of them on (that one included):

- each word holding ``~`` is dynamic (``noted``): only known when the shell runs, so
  unknown to the rules, as ``$HOME/x`` is;
- a ``cd`` (``pushd``) whose directory comes from it goes somewhere not known
  (``unfollowed``): it is not followed, and it is itself unknown.

A command may set ``HOME`` or ``OLDPWD`` when a word of it assigns one (``HOME=x``,
``env HOME=x``, ``export HOME=x``, ``HOME+=x``, ``HOME[0]=x``) or names one as a value
(``env -u HOME``, ``declare -n r=HOME``), ``env`` may clear the environment (``env
-i``), a builtin takes it, or a name only the shell knows, for a variable to set
(``read``, ``printf -v``, ``mapfile``/``readarray``, ``getopts``, ``wait -p``,
``declare``/``typeset``/``local``/``export``/``readonly``, a nameref to it, ``unset``),
a redirection ``{HOME}>x`` puts a file descriptor's number in it, it turns on
``allexport`` (``set -a``, ``set -o allexport``), or it is ``source``/``.`` (``eval``'s
words are a line of their own, looked at in turn). ``cdable_vars`` is taken to be on
after a word naming it (``shopt -s cdable_vars``, ``bash -O cdable_vars``,
``BASHOPTS=cdable_vars``) or a ``shopt`` with a word only the shell knows. This is
stricter than bash (``HOME=/etc echo ~`` prints the old home; ``sh -c 'HOME=x'`` sets it
in another shell), never looser.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final

from dsh_permissions._evaluated import set_names
from dsh_permissions._shell_words import Command, Redirect, Word

__all__ = ["allexport", "line_vars", "noted", "unfollowed"]

#: an assignment to one of the variables followed here (``HOME+=x``, ``HOME[0]=x``)
_ASSIGNS: Final = re.compile(r"(HOME|OLDPWD|BASHOPTS)(\[.*\])?\+?=", re.DOTALL)
#: builtins whose words may name variables they set (``_evaluated.set_names``)
_SETTERS: Final = frozenset(
    {"read", "printf", "mapfile", "readarray", "getopts", "wait", "unset"}
    | {"declare", "typeset", "local", "export", "readonly"}
)
#: builtins that run a file's code, which may set anything (``eval``'s words are
#: checked as a line of their own, in order)
_SOURCES: Final = frozenset({"source", "."})
#: a word naming one as a value (``env -u HOME``, ``--unset=HOME``, ``declare -n r=HOME``)
_NAMED: Final = re.compile(r"(?:.*[=-]u?)?(HOME|OLDPWD)", re.DOTALL)
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MOVERS: Final = frozenset({"cd", "pushd"})


@dataclass(slots=True)
class _Set:
    home: bool = False
    oldpwd: bool = False
    cdable: bool = False


_LINE: ContextVar[_Set | None] = ContextVar("dsh_permissions_line_vars", default=None)


@contextmanager
def line_vars() -> Iterator[None]:
    """The commands checked inside are one line (nested: the outer line's is kept)."""
    if _LINE.get() is not None:
        yield
        return
    token = _LINE.set(_Set())
    try:
        yield
    finally:
        _LINE.reset(token)


def noted(command: Command) -> Command:
    """Note what ``command`` may set, and ``command`` with each word holding ``~``
    dynamic once ``HOME`` may have been set (by it too)."""
    line = _LINE.get()
    if line is None:
        return command
    _note(line, command)
    if not line.home:
        return command
    return Command(
        tuple(_unknown(w) for w in command.words),
        tuple(Redirect(r.kind, _unknown(r.target), r.fd) for r in command.redirects),
        command.piped,
    )


def unfollowed(name: str, operands: Sequence[str]) -> str | None:
    """Why the directory ``cd OPERANDS`` (``pushd``; options taken off) goes to is not
    known because the line may have set where it reads it, or None."""
    line = _LINE.get()
    if line is None or name not in _MOVERS:
        return None
    if line.home and name == "cd" and not operands:
        return "the line may set HOME, where cd with no directory goes"
    if line.home and any("~" in o for o in operands):
        return "the line may set HOME, which ~ names"
    if line.oldpwd and list(operands) == ["-"]:
        return "the line may set OLDPWD, where cd - goes"
    if line.cdable and len(operands) == 1 and _NAME.fullmatch(operands[0]):
        return (
            f"the line may turn on cdable_vars, with which {name} {operands[0]} goes to "
            f"the directory ${operands[0]} holds"
        )
    return None


def allexport(texts: Sequence[str]) -> bool:
    """Whether ``set ARGS`` (``texts``: its arguments) may turn on ``allexport``
    (``set -a``, ``set -o allexport``)."""
    return any(t == "allexport" or (t[:1] in ("-", "+") and "a" in t) for t in texts)


def _note(line: _Set, command: Command) -> None:
    words = command.words
    names: list[str] = []
    for index, word in enumerate(words):
        if (found := _ASSIGNS.match(word.text) or _NAMED.fullmatch(word.text)) is not None:
            names.append(found.group(1))
        if "cdable_vars" in word.text:
            line.cdable = True
        name = os.path.basename(word.text)
        rest = [w.text for w in words[index + 1 :]]
        if name in _SOURCES or (name == "set" and allexport(rest)):
            line.home = line.oldpwd = True
        elif name == "shopt" and any(w.dynamic for w in words[index + 1 :]):
            line.cdable = True
        elif name == "env" and _clears(words[index + 1 :]):
            line.home = line.oldpwd = True  # env -i: unset for the command
        elif name in _SETTERS:
            found_names = set_names(words[index:])
            names.extend(("HOME", "OLDPWD") if found_names is None else found_names)
    names.extend(r.fd[1:-1] for r in command.redirects if r.fd.startswith("{"))
    line.home = line.home or "HOME" in names
    line.oldpwd = line.oldpwd or "OLDPWD" in names
    line.cdable = line.cdable or "BASHOPTS" in names


def _clears(args: Sequence[Word]) -> bool:
    """Whether ``env ARGS`` may clear the environment (``-i``, ``-``, ``--ignore-
    environment``) or unset a variable only the shell names (``-u "$V"``)."""
    for word in args:
        text = word.text
        if not (text.startswith("-") or "=" in text or word.dynamic):
            return False  # the command
        if word.dynamic or text == "-" or text.startswith("--i"):
            return True
        if text.startswith("-") and not text.startswith("--") and "i" in text:
            return True
    return False


def _unknown(word: Word) -> Word:
    if word.dynamic or "~" not in word.raw:
        return word
    return Word(word.text, word.raw, dynamic=True, tilde=word.tilde, quoted=word.quoted)
