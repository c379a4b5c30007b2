"""bash's keyword option (``set -k``, ``set -o keyword``): with it on, every
``NAME=value`` word of a command, not only the ones before its program, is an
assignment bash takes out of the arguments and puts in the command's environment, so
``set -k; git diff GIT_EXTERNAL_DIFF='rm x'`` runs ``rm x``.

From the command of a line that may turn it on (that one included: ``bash -k -c
'...'``), each command is read as bash then runs it (``as_run``): its assignment words
moved before its program (``git diff A=1`` is ``A=1 git diff``), so they are checked as
leading assignments are (watched variables, ``BASH_ENV``, ``LD_PRELOAD``, the text
rules match). A command may turn it on (``turns_on``) when it is ``set`` (``builtin
set``, ``command set``) given a ``-`` cluster holding ``k`` (``-k``, ``-ek``),
``keyword`` (``-o keyword``) or a word only the shell knows (``set $opts``); ``shopt``
given ``keyword`` or such a word (``shopt -os keyword``); a shell given ``-k`` or
``-o keyword``; or when a word names ``SHELLOPTS`` (a new bash takes its options from
it). It stays on for the rest of the line and the lines it runs (``sh -c``, ``eval``):
``set +k`` does not turn it off, as a branch not taken or a subshell may have left it
on (stricter than bash, never looser). dsh's own ``SHELLOPTS`` holding ``keyword``
turns it on for every line. A sourced file is not looked into: what it may turn on
it may as well run itself.
"""

from __future__ import annotations

import os
import re
from typing import Final

from dsh_permissions._option_variables import named, note, set_in_line
from dsh_permissions._readings import SHELLS
from dsh_permissions._shell_words import Command, Word

__all__ = ["as_run", "turns_on"]

#: what the line's set of variables holds once the option may be on (no variable name)
_ON: Final = "set -k"
#: a word bash takes for an assignment: an unquoted name, a subscript, ``=`` or ``+=``
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
#: a cluster of short options holding ``k`` (``-k``, ``-ek``, ``-eko``), not ``--x``
_CLUSTER: Final = re.compile(r"-[A-Za-z]*k[A-Za-z]*")
#: ``$SHELLOPTS`` only read sets nothing
_READ: Final = re.compile(r"\$(SHELLOPTS\b|\{SHELLOPTS\})")


def as_run(command: Command) -> Command:
    """``command`` as bash runs it: with the keyword option on (set earlier in the line,
    or by this very command), its assignment words first; and note whether it may turn
    the option on for the rest of the line."""
    if turns_on(command.words):
        note([], (_ON,))
    if not _on():
        return command
    words = command.words
    start = 0
    while start < len(words) and _ASSIGNMENT.match(words[start].raw):
        start += 1
    moved = tuple(w for w in words[start:] if _ASSIGNMENT.match(w.raw))
    if not moved:
        return command
    rest = tuple(w for w in words[start:] if not _ASSIGNMENT.match(w.raw))
    return Command((*words[:start], *moved, *rest), command.redirects, command.piped)


def turns_on(words: tuple[Word, ...]) -> bool:
    """Whether the command ``words`` may turn bash's keyword option on (see the module)."""
    for index, word in enumerate(words):
        if named("SHELLOPTS", _READ.sub("", word.text)):
            return True
        name = os.path.basename(word.text)
        after = words[index + 1 :]
        if name in ("set", "shopt") and any(w.dynamic for w in after):
            return True
        if name in ("set", "shopt", *SHELLS) and any(w.text == "keyword" for w in after):
            return True
        if (name == "set" or name in SHELLS) and any(_CLUSTER.fullmatch(w.text) for w in after):
            return True
    return False


def _on() -> bool:
    if "keyword" in os.environ.get("SHELLOPTS", "").split(":"):
        return True
    return set_in_line((_ON,), anything=False)
