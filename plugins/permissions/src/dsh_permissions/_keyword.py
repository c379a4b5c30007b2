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
(``_shell_options.turns_on``) when its program (after leading assignments,
``builtin``/``command``, and any word behind a wrapper such as ``sudo`` or ``env``) is
``set`` given, before its operands (``--``), a ``-`` cluster holding ``k`` (``-k``,
``-ek``), ``-o keyword`` or a word only the shell knows (``set $opts``); ``shopt``
given ``keyword`` or such a word (``shopt -os keyword``); a shell given ``-k`` or ``-o
keyword``; or when it assigns ``SHELLOPTS`` (a new bash takes its options from it):
``SHELLOPTS=...`` as an assignment word, or ``export``/``declare``/``read``/``printf
-v``/... naming it (``grep SHELLOPTS src`` and ``echo set -k`` do not). It stays on
for the rest of the line and the lines it runs (``sh -c``, ``eval``): ``set +k`` does
not turn it off, as a branch not taken or a subshell may have left it on (stricter
than bash, never looser).
dsh's own ``SHELLOPTS`` holding ``keyword`` turns it on for every line. A sourced file
is not looked into: what it may turn on it may as well run itself.
"""

from __future__ import annotations

import os
import re
from typing import Final

from dsh_permissions._option_variables import note, set_in_line
from dsh_permissions._shell_options import KEYWORD, turns_on
from dsh_permissions._shell_words import Command

__all__ = ["as_run"]

#: what the line's set of variables holds once the option may be on (no variable name)
_ON: Final = "set -k"
#: a word bash takes for an assignment: an unquoted name, a subscript, ``=`` or ``+=``
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")


def as_run(command: Command) -> Command | None:
    """``command`` as bash runs it with the keyword option on (set earlier in the line,
    or by this very command): its assignment words first; None when that is how it is
    written (or the option is off). Notes whether it may turn the option on for the rest
    of the line. The returned reading is checked in addition to ``command``."""
    if turns_on(command.words, KEYWORD):
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


def _on() -> bool:
    if "keyword" in os.environ.get("SHELLOPTS", "").split(":"):
        return True
    return set_in_line((_ON,), anything=False)
