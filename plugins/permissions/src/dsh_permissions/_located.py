"""The file a relative word names when the shell is in another directory.

After ``cd secrets`` (or behind ``env -C secrets``) the word ``key`` names
``secrets/key``, and ``door/../key`` names a file two ways: the real one, where the
kernel finds it (symlinks resolved, then ``..``), and the lexical one, with ``..``
taken off as written (as a logical ``cd`` and many a reader of the command see it).
Both are given; the callers (``_moved`` for a command's text, ``_command_text`` for an
output redirection, ``_reads`` for the files a command reads) check each against deny
and ask rules only, so a word read here can only make a call stricter. Which words may
name a file at all is the caller's to say (an option, an assignment or a URL is no file
in a command's text; a redirection's target always is one).
"""

from __future__ import annotations

import os
from typing import NamedTuple

from dsh_permissions._shell_words import Word

__all__ = ["Located", "located"]


class Located(NamedTuple):
    """The absolute paths of the file a word names in a directory."""

    #: symlinks and ``..`` resolved (``os.path.realpath``)
    real: str
    #: ``..`` taken off as written, symlinks kept (``os.path.normpath``)
    lexical: str

    def both(self) -> tuple[str, ...]:
        """The two, once each (they are the same when no symlink or ``..`` is on the way)."""
        return (self.real,) if self.real == self.lexical else (self.real, self.lexical)


def located(word: Word, directory: str) -> Located | None:
    """The file ``word`` names when the shell is in the absolute ``directory``; None
    when that is not known or not another file: a value only the shell gives (``$F``,
    a glob, ``~`` and ``~user``), a NUL byte (no file can be named so) or an absolute
    path (the same file from anywhere, matched as such already). An empty word names
    ``directory`` itself."""
    text = word.text
    if word.dynamic or word.tilde or "\x00" in text or os.path.isabs(text):
        return None
    joined = os.path.join(directory, text)
    return Located(os.path.realpath(joined), os.path.normpath(joined))
