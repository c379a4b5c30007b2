"""Where the symbolic links that ``ln -s`` and ``cp -s`` make lead.

A symbolic link's relative target is resolved from the directory the link lies in, not
from the one the command runs in: ``ln -s ../.env src/x`` makes ``src/x`` lead to
``.env``. ``_reads`` reads the operands of ``ln`` as files from the shell's directory
(``../.env``, another file), and a later ``cat src/x`` of the same line is checked
before the link exists. So each relative operand of a command making symbolic links is
also read from the directories the links may land in: the last operand's directory,
the last operand itself (it is, or may become, a directory: ``mkdir d && ln -s
../.env d`` makes ``d/.env``) and the directory of ``-t DIR`` / ``--target-directory``.
Generous, as ``_reads`` is: the last operand is read as a target too, and with
``ln -r`` (targets named from the shell's directory, which ``_reads`` already reads)
or a last operand that is no directory a file is read that no link leads to, which
can only make a call stricter. ``mv``, ``cp`` and ``rsync`` moving or copying a link
that exists keep its target's text: that text (``os.readlink``) is read from the same
places (``moved_targets``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Final

from dsh_permissions._getopt import long_in, long_option
from dsh_permissions._shell_words import Word

__all__ = ["LINKERS", "link_targets", "makes_links", "moved_targets", "parsed"]

#: the programs that make symbolic links when told to (``ln -s``, GNU ``cp -s``)
LINKERS: Final = frozenset({"ln", "cp"})
#: their short options that take a value: ``-S SUFFIX``, ``-t DIRECTORY``
_VALUE_LETTERS: Final = "St"
_SYMBOLIC: Final = ("--symbolic", "--symbolic-link")


def link_targets(args: tuple[Word, ...], bases: tuple[str, ...]) -> Iterator[tuple[Word, str]]:
    """Each operand of ``ln``'s or ``cp``'s ``args`` that may be a symbolic link's
    relative target, with each absolute directory a link may land in (its relative
    names read from each of ``bases``, the directories the command may run in); nothing
    when the command makes no symbolic link."""
    symbolic, operands, named = parsed(args)
    if not symbolic or not operands:
        return
    places = _places(named, operands[-1], bases)
    for word in operands:
        if not word.dynamic and not word.tilde and not os.path.isabs(word.text):
            for directory in places:
                yield word, directory


def moved_targets(args: tuple[Word, ...], bases: tuple[str, ...]) -> Iterator[tuple[Word, str]]:
    """For ``mv``/``cp``/``rsync``: the relative target of each source that is a
    symbolic link now (``os.readlink``), with each absolute directory the moved or
    copied link may land in (as ``link_targets``): it keeps its target's text."""
    _, operands, named = parsed(args)
    if not operands or (not named and len(operands) < 2):
        return
    places = _places(named, operands[-1], bases)
    for word in operands if named else operands[:-1]:
        if word.dynamic or word.tilde:
            continue  # _relinked asks about what a later command reads
        for base in bases:
            path = os.path.join(base, word.text).rstrip(os.sep)
            try:
                target = os.readlink(path) if os.path.islink(path) else None
            except OSError:
                continue
            if target and not os.path.isabs(target):
                for directory in places:
                    yield Word(target, word.raw), directory


def makes_links(args: tuple[Word, ...]) -> bool:
    """Whether ``ln``'s or ``cp``'s ``args`` ask for symbolic links (``-s``)."""
    return parsed(args)[0]


def _places(named: list[Word], last: Word, bases: tuple[str, ...]) -> dict[str, None]:
    """The absolute directories a link may land in: each ``-t`` directory, the last
    operand and its directory, from each of ``bases``."""
    places: dict[str, None] = {}
    for word, whole in [*((w, True) for w in named), (last, False)]:
        if word.dynamic:
            continue  # an operand only the shell knows: _reads asks about it
        text = os.path.expanduser(word.text) if word.tilde else word.text
        for base in bases:
            directory = os.path.join(base, text)
            places[directory] = None
            if not whole:
                places[os.path.dirname(directory.rstrip(os.sep)) or os.sep] = None
    return places


def parsed(args: tuple[Word, ...]) -> tuple[bool, list[Word], list[Word]]:
    """Whether an option asks for symbolic links, the operands, and the directories
    ``-t`` names. An option not known is taken for a flag."""
    symbolic = False
    operands: list[Word] = []
    named: list[Word] = []
    options = True
    take: str | None = None  # the letter whose value the next word is
    for word in args:
        text = word.text
        if take is not None:
            if take == "t":
                named.append(word)
            take = None
        elif not options or word.dynamic or not text.startswith("-") or text == "-":
            operands.append(word)
        elif text == "--":
            options = False
        elif text.startswith("--"):
            symbolic = symbolic or long_in(text, _SYMBOLIC)
            name, equals, value = text.partition("=")
            if long_option(name, "--target-directory"):
                if equals:
                    named.append(Word(value, word.raw))
                else:
                    take = "t"
            elif long_option(name, "--suffix") and not equals:
                take = "S"
        else:
            for index, letter in enumerate(text[1:], start=1):
                symbolic = symbolic or letter == "s"
                if letter in _VALUE_LETTERS:
                    value = text[index + 1 :]
                    if not value:
                        take = letter
                    elif letter == "t":
                        named.append(Word(value, word.raw))
                    break
    return symbolic, operands, named
