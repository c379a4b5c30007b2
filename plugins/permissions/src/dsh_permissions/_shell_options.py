"""bash options that change how the shell reads the lines after the command turning
them on, and which command may turn one on (``turns_on``).

- ``keyword`` (``set -k``): every ``NAME=value`` word is an assignment; ``_keyword``
  reads such a command again as bash runs it.
- history expansion (``set -H`` / ``set -o histexpand``, with ``set -o history``):
  a later line's ``!!``, ``!NAME`` or ``^old^new`` is replaced by words of an earlier
  one (``echo rm x`` then ``!!:1-2`` runs ``rm x``), which the splitter does not see;
  ``bash -i`` has it on, so ``set -o history`` alone does it there.
- ``autocd`` (``shopt -s autocd``, interactive shells): a command naming a directory
  runs ``cd`` to it, so the relative paths after it name other files.

The last two are not modelled: a command that may turn one on is a problem
(``unmodelled_option``), asked about (denied in ``bypass`` mode) as ``shopt -s
expand_aliases`` is. A command may turn an option on when its program (after leading
assignments, ``builtin``/``command``, and any word behind a wrapper such as ``sudo``
or ``env``) is ``set`` given, before its operands (``--``), a ``-`` cluster holding
the option's letter (``-k``, ``-eH``), ``-o NAME`` or a word only the shell knows
(``set $opts``); ``shopt`` given the option's name or such a word (``shopt -os
history``, ``shopt -s autocd``); a shell given the letter or the name (``bash -H``,
``bash -o history``, ``bash -O autocd``); or when it assigns the variable a new bash
takes it from (``SHELLOPTS`` for ``set -o`` options, ``BASHOPTS`` for ``shopt``'s):
as an assignment word, or ``export``/``declare``/``read``/``printf -v``/... naming it
(``grep SHELLOPTS src`` and ``echo set -H`` do not).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from dsh_permissions._option_variables import named
from dsh_permissions._readings import SHELLS
from dsh_permissions._shell_words import Word
from dsh_permissions._wrappers import WRAPPERS

__all__ = ["AUTOCD", "HISTORY", "KEYWORD", "ShellOption", "turns_on", "unmodelled_option"]


@dataclass(frozen=True)
class ShellOption:
    #: ``set``'s letter for it (``k``: ``set -k``); empty: none (a ``shopt`` option)
    letter: str
    #: its names, ``set -o NAME`` / ``shopt -s NAME`` (any of them turns it on)
    names: frozenset[str]
    #: the variable a new bash takes it from
    variable: str


KEYWORD: Final = ShellOption("k", frozenset({"keyword"}), "SHELLOPTS")
HISTORY: Final = ShellOption("H", frozenset({"histexpand", "history"}), "SHELLOPTS")
AUTOCD: Final = ShellOption("", frozenset({"autocd"}), "BASHOPTS")
_WHY: Final = {
    HISTORY: (
        "it may turn on bash's history expansion (set -H, set -o history), which "
        "replaces a later line's !!, !NAME or ^old^new with words of an earlier one"
    ),
    AUTOCD: (
        "it may turn on bash's autocd, with which a command naming a directory runs cd "
        "to it, so the relative paths after it name other files"
    ),
}

#: a word bash takes for an assignment: an unquoted name, a subscript, ``=`` or ``+=``
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
#: builtins and programs that may set a variable their words name
_ASSIGNS: Final = frozenset(
    {"export", "declare", "typeset", "local", "readonly", "read", "printf", "mapfile"}
    | {"readarray"}
)


def unmodelled_option(words: tuple[Word, ...]) -> str | None:
    """Why the command ``words`` may turn on an option whose effect on later lines is
    not modelled (history expansion, ``autocd``), or None."""
    return next((why for option, why in _WHY.items() if turns_on(words, option)), None)


def turns_on(words: tuple[Word, ...], option: ShellOption) -> bool:
    """Whether the command ``words`` may turn ``option`` on (see the module)."""
    index = 0
    while index < len(words) and _ASSIGNMENT.match(words[index].raw):
        if _sets_variable(words[index], option):  # SHELLOPTS=keyword bash -c '...'
            return True
        index += 1
    # ``$SHELLOPTS`` only read sets nothing
    read = re.compile(rf"\$({option.variable}\b|\{{{option.variable}\}})")
    cluster = re.compile(rf"-[A-Za-z]*{option.letter}[A-Za-z]*") if option.letter else None
    # the last word of each kind: a program turns it on when one comes after it
    names = _last(words, lambda w: named(option.variable, read.sub("", w.text)))
    shopts = _last(words, lambda w: w.dynamic or w.text in option.names)
    shells = _last(
        words,
        lambda w: w.text in option.names or (cluster is not None and cluster.fullmatch(w.text)),
    )
    wrapped = False
    for at in range(index, len(words)):
        name = os.path.basename(words[at].text)
        if at > index and not wrapped:
            break
        if name in WRAPPERS:  # sudo bash -k, env SHELLOPTS=keyword bash: look on
            wrapped = True
        if (
            (wrapped and _sets_variable(words[at], option))
            or (name in _ASSIGNS and names > at)
            or (name == "set" and _set_turns_on(words, at + 1, option, cluster))
            or (name == "shopt" and shopts > at)
            or (name in SHELLS and shells > at)
        ):
            return True
    return False


def _last(words: tuple[Word, ...], kind: Callable[[Word], object]) -> int:
    """The index of the last of ``words`` of ``kind``, -1 when none is."""
    return next((i for i in range(len(words) - 1, -1, -1) if kind(words[i])), -1)


def _sets_variable(word: Word, option: ShellOption) -> bool:
    """``SHELLOPTS=...`` (or a name only the shell knows: ``$v=...``) as an assignment."""
    name = word.raw.partition("=")[0]
    return "=" in word.raw and (named(option.variable, name) or "$" in name)


def _set_turns_on(
    words: tuple[Word, ...], start: int, option: ShellOption, cluster: re.Pattern[str] | None
) -> bool:
    """Whether ``set`` given ``words[start:]`` may turn ``option`` on: before its
    operands, a cluster holding its letter, ``-o NAME`` or a word only the shell knows.
    A word after ``-o`` (``+o``) that is empty or starts with ``-`` or ``+`` is not an
    option name: bash lists the options and reads it as options (``set -o -k``)."""
    option_name: str | None = None  # the sign of a cluster ending in o: -o, +o
    for word in (words[i] for i in range(start, len(words))):  # no copy: set set set...
        text = word.text
        if word.dynamic:
            return True
        if option_name is not None and text[:1] not in ("", "-", "+"):
            if text in option.names and option_name == "-":
                return True
            option_name = None
            continue
        option_name = None  # set -o -k: bash lists the options, reads -k as options
        if text in ("--", "-") or text[:1] not in ("-", "+"):
            return False  # the positional parameters follow
        if text[0] == "-" and cluster is not None and cluster.fullmatch(text):
            return True
        option_name = text[0] if text.endswith("o") else None
    return False
