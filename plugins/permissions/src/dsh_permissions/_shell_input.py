"""Whether a file a shell reads as its script (its ``--rcfile``/``--init-file``, the
file ``source``/``.`` reads) is its input: ``-``, ``/dev/stdin``, ``/dev/fd/N``,
``/proc/*/fd/N``, ``~/../dev/stdin``, through symbolic links too. What the shell then
runs is not in the line (``_commands``, ``_evaluated``).
"""

from __future__ import annotations

import os
import re
from typing import Final

from dsh_permissions._paths import spellings
from dsh_permissions._shell_words import Word

__all__ = ["from_input"]

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
