"""A script named without a ``/`` is looked up in ``PATH``.

bash's ``source NAME`` and ``. NAME`` (its ``sourcepath`` option, on by default) look
``NAME`` up in ``PATH`` first and then in the current directory, and a shell given a
script file (``bash NAME``) the other way round; either prints the lines of a file
that is no script in its errors. So ``PATH=/etc; . passwd`` reads ``/etc/passwd``.
Such a file (``looked_up``) is also read as ``DIR/NAME`` for each directory of dsh's
own ``PATH`` (which the bash tool passes on to the command) where that file exists,
and it is not known once the line may set ``PATH``: before the command (``PATH=/etc .
passwd``, ``env PATH=/etc sh passwd``) or earlier in the line (``export PATH=...``,
``read PATH``, also ``NAME=... sh -c '...'``, whose script inherits it;
``_option_variables``). A sourced file or ``set -a`` setting it is not looked for:
what it runs is not looked into either.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Final

from dsh_permissions._option_variables import SEARCH_PATH, named, set_in_line
from dsh_permissions._shell_words import Word

__all__ = ["looked_up"]

_WHY: Final = "{program} looks {name!r} up in PATH, which the line may set"
#: names that are no script (the empty word, the directory and its parent)
_NONE: Final = frozenset({"", ".", ".."})


def looked_up(
    program: str, words: Iterable[Word], before: Iterable[str]
) -> tuple[list[Word], str | None]:
    """The files the script names ``words`` of ``program`` (``source``, ``.``, a shell)
    may also be found as in ``PATH``, and why they are not known (None: they are);
    ``before``: the words before the program (its assignments, a wrapper's)."""
    names = [w for w in words if not w.dynamic and "/" not in w.text and w.text not in _NONE]
    if not names:
        return [], None
    if set_in_line(SEARCH_PATH, anything=False) or any(
        named(variable, text) for text in before for variable in SEARCH_PATH
    ):
        return [], _WHY.format(program=program, name=names[0].text)
    found: list[Word] = []
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        for word in names:
            path = os.path.join(directory, word.text)
            # a relative directory is read from where the shell is, as the word is
            if directory and (not os.path.isabs(directory) or os.path.isfile(path)):
                found.append(Word(path, path))
    return found, None
