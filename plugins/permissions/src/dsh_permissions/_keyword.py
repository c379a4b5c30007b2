"""bash's keyword option (``set -k``, ``set -o keyword``): with it on, every
``NAME=value`` word of a command, not only the ones before its program, is an
assignment bash takes out of the arguments and puts in the command's environment, so
``set -k; git diff GIT_EXTERNAL_DIFF='rm x'`` runs ``rm x``.

From the command of a line that may turn it on (that one included: ``bash -k -c
'...'``), a command with such words gets a second reading (``as_run``): the command as
bash then runs it, its assignment words moved before its program (``git diff A=1`` is
also read as ``A=1 git diff``), so they are checked as leading assignments are (watched
variables, ``BASH_ENV``, ``LD_PRELOAD``, the text rules match). The command as written
is checked as well: both readings must pass every rule. A command may turn it on
(``turns_on``) when its program (after leading assignments, ``builtin``/``command``,
and any word behind a wrapper such as ``sudo`` or ``env``) is ``set`` given, before its
operands (``--``), a ``-`` cluster holding ``k`` (``-k``, ``-ek``), ``-o keyword`` or
a word only the shell knows (``set $opts``); ``shopt`` given ``keyword`` or such a word
(``shopt -os keyword``); a shell given ``-k`` or ``-o keyword``; or when it assigns
``SHELLOPTS`` (a new bash takes its options from it): ``SHELLOPTS=...`` as an
assignment word, or ``export``/``declare``/``read``/``printf -v``/... naming it
(``grep SHELLOPTS src`` and ``echo set -k`` do not). It stays on for the rest of the
line and the lines it runs (``sh -c``, ``eval``): ``set +k`` does not turn it off, as a
branch not taken or a subshell may have left it on (stricter than bash, never looser).
dsh's own ``SHELLOPTS`` holding ``keyword`` turns it on for every line. A sourced file
is not looked into: what it may turn on it may as well run itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Final

from dsh_permissions._option_variables import named, note, set_in_line
from dsh_permissions._readings import SHELLS
from dsh_permissions._shell_words import Command, Word
from dsh_permissions._wrappers import WRAPPERS

__all__ = ["as_run", "turns_on"]

#: what the line's set of variables holds once the option may be on (no variable name)
_ON: Final = "set -k"
#: a word bash takes for an assignment: an unquoted name, a subscript, ``=`` or ``+=``
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
#: a cluster of short options holding ``k`` (``-k``, ``-ek``, ``-eko``), not ``--x``
_CLUSTER: Final = re.compile(r"-[A-Za-z]*k[A-Za-z]*")
#: ``$SHELLOPTS`` only read sets nothing
_READ: Final = re.compile(r"\$(SHELLOPTS\b|\{SHELLOPTS\})")
#: builtins and programs that may set a variable their words name
_ASSIGNS: Final = frozenset(
    {"export", "declare", "typeset", "local", "readonly", "read", "printf", "mapfile"}
    | {"readarray"}
)


def as_run(command: Command) -> Command | None:
    """``command`` as bash runs it with the keyword option on (set earlier in the line,
    or by this very command): its assignment words first; None when that is how it is
    written (or the option is off). Notes whether it may turn the option on for the rest
    of the line. The returned reading is checked in addition to ``command``."""
    if turns_on(command.words):
        note([], (_ON,))
    if not _on():
        return None
    words = command.words
    start = 0
    while start < len(words) and _ASSIGNMENT.match(words[start].raw):
        start += 1
    moved = tuple(w for w in words[start:] if _ASSIGNMENT.match(w.raw))
    if not moved:
        return None
    rest = tuple(w for w in words[start:] if not _ASSIGNMENT.match(w.raw))
    return Command((*words[:start], *moved, *rest), command.redirects, command.piped)


def turns_on(words: tuple[Word, ...]) -> bool:
    """Whether the command ``words`` may turn bash's keyword option on (see the module)."""
    index = 0
    while index < len(words) and _ASSIGNMENT.match(words[index].raw):
        if _sets_shellopts(words[index]):  # SHELLOPTS=keyword bash -c '...'
            return True
        index += 1
    # the last word of each kind: a program turns it on when one comes after it
    names = _last(words, lambda w: named("SHELLOPTS", _READ.sub("", w.text)))
    shopts = _last(words, lambda w: w.dynamic or w.text == "keyword")
    shells = _last(words, lambda w: w.text == "keyword" or bool(_CLUSTER.fullmatch(w.text)))
    wrapped = False
    for at in range(index, len(words)):
        name = os.path.basename(words[at].text)
        if at > index and not wrapped:
            break
        if name in WRAPPERS:  # sudo bash -k, env SHELLOPTS=keyword bash: look on
            wrapped = True
        if (
            (wrapped and _sets_shellopts(words[at]))
            or (name in _ASSIGNS and names > at)
            or (name == "set" and _set_turns_on(words, at + 1))
            or (name == "shopt" and shopts > at)
            or (name in SHELLS and shells > at)
        ):
            return True
    return False


def _last(words: tuple[Word, ...], kind: Callable[[Word], bool]) -> int:
    """The index of the last of ``words`` of ``kind``, -1 when none is."""
    return next((i for i in range(len(words) - 1, -1, -1) if kind(words[i])), -1)


def _sets_shellopts(word: Word) -> bool:
    """``SHELLOPTS=...`` (or a name only the shell knows: ``$v=...``) as an assignment."""
    name = word.raw.partition("=")[0]
    return "=" in word.raw and (named("SHELLOPTS", name) or "$" in name)


def _set_turns_on(words: tuple[Word, ...], start: int) -> bool:
    """Whether ``set`` given ``words[start:]`` may turn the option on: before its
    operands, a cluster holding ``k``, ``-o keyword`` or a word only the shell knows.
    A word after ``-o`` (``+o``) that is empty or starts with ``-`` or ``+`` is not an
    option name: bash lists the options and reads it as options (``set -o -k``)."""
    option_name: str | None = None  # the sign of a cluster ending in o: -o, +o
    for word in (words[i] for i in range(start, len(words))):  # no copy: set set set...
        text = word.text
        if word.dynamic:
            return True
        if option_name is not None and text[:1] not in ("", "-", "+"):
            if text == "keyword" and option_name == "-":
                return True
            option_name = None
            continue
        option_name = None  # set -o -k: bash lists the options, reads -k as options
        if text in ("--", "-") or text[:1] not in ("-", "+"):
            return False  # the positional parameters follow
        if text[0] == "-" and _CLUSTER.fullmatch(text):
            return True
        option_name = text[0] if text.endswith("o") else None
    return False


def _on() -> bool:
    if "keyword" in os.environ.get("SHELLOPTS", "").split(":"):
        return True
    return set_in_line((_ON,), anything=False)
