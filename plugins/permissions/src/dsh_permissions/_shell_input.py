"""Whether a file a shell reads as its script (its ``--rcfile``/``--init-file``, the
file ``source``/``.`` reads) is its input: ``-``, ``/dev/stdin``, ``/dev/fd/N``,
``/proc/*/fd/N``, ``~/../dev/stdin``, through symbolic links too. What the shell then
runs is not in the line (``_commands``, ``_evaluated``): such a command is a problem
(``input_problems``).
"""

from __future__ import annotations

import os
import re
from typing import Final

from dsh_permissions._command_text import problem
from dsh_permissions._paths import spellings
from dsh_permissions._shell_words import Word
from dsh_permissions._subjects import Subject

__all__ = ["from_input", "input_problems"]

_INPUT: Final = re.compile(r"/dev/stdin|/dev/fd/[^/]+|/proc/[^/]+(/task/[^/]+)?/fd/[^/]+")
#: how many symbolic links are followed: a longer chain is taken to be the input
_HOPS: Final = 8


def from_input(word: Word, root: str) -> bool:
    """Whether the file ``word`` names is the shell's input (``-``, ``/dev/stdin``,
    ``/dev/fd/0``, ``/proc/self/fd/0``, ``~/../dev/stdin``, through symlinked
    directories too)."""
    if word.text == "-":
        return True
    texts = spellings(word.text) if word.tilde else (word.text,)
    return any(_input_path(os.path.join(root, text)) for text in texts)


def input_problems(
    words: tuple[Word, ...], files: tuple[Word, ...], dirs: tuple[str, ...]
) -> list[Subject]:
    """A problem when ``files`` is empty or one of them, read in any of ``dirs``, is
    the shell's input (``-``, ``/dev/stdin``, ``/dev/fd/N``): the commands the shell
    ``words`` runs are not in the line."""
    if files and not any(not w.dynamic and from_input(w, d) for w in files for d in dirs):
        return []
    why = "the shell reads the commands it runs from its input, which cannot be checked"
    return [problem(" ".join(w.raw for w in words), why)]


def _input_path(path: str) -> bool:
    try:
        for _ in range(_HOPS):
            where = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
            if _INPUT.fullmatch(os.path.normpath(where)):
                return True
            if not os.path.islink(where):
                return False
            path = os.path.join(os.path.dirname(where), os.readlink(where))
    except (OSError, ValueError):
        pass  # a directory it cannot look into: fail closed
    return True  # or a chain of links too long to follow
