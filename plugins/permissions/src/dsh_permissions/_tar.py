"""What tar does with its words: whether it unpacks, where it unpacks, and whether it
reads the files it is given from its ``-C`` directory.

Packing (``tar -C src -czf out.tgz ../.env``) tar reads its operands from the ``-C``
directory; unpacking it opens its archive first, and ``-C`` only places what it writes
(``tar xzf a.tgz -C build`` reads ``a.tgz`` here and writes below ``build``). Where it
unpacks is ``-C`` (or ``--directory``), else the directory it runs in; that one too
when a member is named before ``-C`` (GNU tar unpacks it there). GNU tar strips a
leading ``/`` and refuses ``..`` in member names, after ``--transform`` too, so what it
unpacks stays below that place unless ``-P`` (``--absolute-names``) is given.

``TAR_OPTIONS`` adds options before the command's own: ``-C /etc`` makes ``tar cf x.tar
passwd`` read ``/etc/passwd``, ``-T .env`` reads a list: once it may be set for a tar
(``_option_variables.set_for``), what that tar reads is not known (``options_set``).

The letters that take a value are GNU tar's (``TAR_VALUED``); bsdtar (libarchive's:
macOS's and the BSDs' ``tar``) reads four of them differently (``DISPUTED``): which
words are values, options or files then depends on which tar runs, so what it reads
and runs is not known (``disputed``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Final

from dsh_permissions._file_words import part
from dsh_permissions._getopt import long_in, long_option, scan
from dsh_permissions._option_variables import set_for
from dsh_permissions._shell_words import Word

__all__ = [
    "DISPUTED",
    "HERE",
    "TARS",
    "TAR_VALUED",
    "directory_words",
    "disputed",
    "old_style",
    "options_set",
    "places",
    "reads_there",
    "unpacks",
]

#: the directory a command runs in, as a place
HERE: Final = "."
TARS: Final = frozenset({"tar", "gtar", "bsdtar"})

#: tar's letters and long options that read the files it is given (pack, append,
#: compare; ``T``: a list that may hold ``-C``)
_READS_THERE_LETTERS: Final = frozenset("cruAdT")
_READS_THERE_LONG: Final = (
    *("--create", "--append", "--update", "--catenate", "--concatenate", "--diff"),
    *("--compare", "--files-from"),
)
#: tar's short options whose value is the next word (or the rest of the cluster), as GNU
#: tar reads them (bsdtar refuses F, g, K, N and V, and reads ``DISPUTED`` otherwise)
TAR_VALUED: Final = frozenset("bCfFgHIKLNTVX")
#: the letters GNU tar and bsdtar read differently: GNU's ``-H FORMAT`` and ``-L N``
#: take a value, bsdtar's ``-H`` and ``-L`` (follow symbolic links) none; bsdtar's ``-s
#: PATTERN`` and ``-W OPTION=VALUE`` (any long option: ``-W cd=/etc``) take one, GNU's
#: ``-s`` and ``-W`` (``--same-order``, ``--verify``) none
DISPUTED: Final = frozenset("HLsW")
#: long options of tar known to take their value as the next word; any other long
#: option given without ``=`` is taken for one not known (None)
_TAR_LONG_VALUED: Final = frozenset(
    {"--file", "--exclude", "--transform", "--xform", "--strip-components", "--owner"}
    | {"--group", "--mode", "--use-compress-program", "--warning", "--exclude-from"}
    | {"--blocking-factor", "--record-size", "--format", "--newer", "--after-date"}
)
_TAR_LONG_FLAGS: Final = frozenset(
    {"--extract", "--get", "--verbose", "--gzip", "--gunzip", "--bzip2", "--xz"}
    | {"--zstd", "--lzma", "--auto-compress", "--overwrite", "--keep-old-files"}
    | {"--skip-old-files", "--no-same-owner", "--no-same-permissions", "--touch"}
    | {"--keep-newer-files", "--unlink-first", "--recursive-unlink", "--numeric-owner"}
    | {"--wildcards", "--no-wildcards", "--ignore-case", "--totals", "--ignore-zeros"}
    | {"--delay-directory-restore", "--keep-directory-symlink", "--no-overwrite-dir"}
    | {"--same-permissions", "--preserve-permissions", "--show-transformed-names"}
)


def old_style(texts: Sequence[str]) -> str | None:
    """The letters of tar's old-style first word (no ``-``: ``xCf``) that take a value,
    in order, or None when the first word is an option. GNU tar gives them the next
    words, one each (``tar xCf out a.tar`` is ``tar -x -C out -f a.tar``), so such a
    word is a value even when it starts with ``-``: ``tar xf -f --to-command=CMD`` has
    the archive ``-f`` and runs CMD. Its options are read from word
    ``1 + len(letters)`` on."""
    if not texts or texts[0].startswith("-"):
        return None
    return "".join(letter for letter in texts[0] if letter in TAR_VALUED)


def disputed(texts: Sequence[str]) -> str | None:
    """The first of tar's options in ``texts`` that GNU tar and bsdtar read differently
    (``DISPUTED``; ``-L``), or None. Taken for a value, the words after it may be
    options or files to the other tar (``-L --use-compress-program=CMD`` runs CMD in
    bsdtar); taken for none, they may be its value (``xsf x .env``: bsdtar's archive
    is ``.env``), so neither reading is safe. Any such letter of the old-style first
    word counts; in a cluster, those before a letter taking a value (whose value is the
    rest of the word: ``-fLs.tar``)."""
    start = 0
    if (letters := old_style(texts)) is not None:
        if hit := [letter for letter in texts[0] if letter in DISPUTED]:
            return "-" + hit[0]
        start = 1 + len(letters)
    for read in scan(texts, start, TAR_VALUED - DISPUTED):
        if len(read.option) == 2 and read.option[1] in DISPUTED:
            return read.option
    return None


def unpacks(texts: list[str]) -> bool:
    """Whether ``tar``'s arguments ``texts`` may unpack (``x``, ``--extract``)."""
    return (
        any(t in ("--extract", "--get") for t in texts)
        or any(not t.startswith("--") and "x" in t for t in texts[:1])
        or any(t.startswith("-") and not t.startswith("--") and "x" in t for t in texts)
    )


def options_set(before: Iterable[str]) -> str | None:
    """Why what tar reads is not known when ``TAR_OPTIONS`` may be set for it (named in
    the words ``before`` it, earlier in the line, or inherited), or None."""
    if not set_for(("TAR_OPTIONS",), before):
        return None
    return "TAR_OPTIONS may give tar a directory it reads from (-C) or a list of files (-T)"


def reads_there(texts: list[str]) -> bool:
    """Whether tar may read the files it is given from its ``-C`` directory: yes,
    unless it only unpacks (it opens its archive first, and ``-C`` only places what
    it writes) and no ``-T`` list names what to unpack (the list may hold ``-C``). A
    word that may ask to pack, append or compare (``c``, ``r``, ``u``, ``A``, ``d``,
    also in a value such as ``-cf -x.tar``) keeps it reading there."""
    if not any(_names_directory(t) for t in texts) and "C" not in (old_style(texts) or ""):
        return False
    if not unpacks(texts):
        return True
    for index, text in enumerate(texts):
        if text.startswith("--"):
            if long_in(text, _READS_THERE_LONG):
                return True
        elif (text.startswith("-") or index == 0) and not _READS_THERE_LETTERS.isdisjoint(text):
            return True
    return False


def _names_directory(text: str) -> bool:
    """tar's ``-C DIR`` / ``--directory=DIR`` (also in a cluster such as ``-xzC``)."""
    if text.startswith("--"):
        return long_option(text, "--directory")  # --dir=/etc too (getopt)
    return text.startswith("-") and "C" in text


def directory_words(args: tuple[Word, ...]) -> tuple[Word, ...]:
    """The words (or parts of one: ``-Cout``, ``--directory=out``) that name tar's
    ``-C`` directory, as ``_reads`` takes them for files."""
    letters = old_style([a.text for a in args])  # tar xCf out a.tar: out
    values = zip(letters or "", args[1:], strict=False)  # tar refuses too few words
    out = [word for letter, word in values if letter == "C"]
    take = False
    for word in args[0 if letters is None else 1 + len(letters) :]:
        text = word.text
        name, equals, value = text.partition("=")
        if take:
            out.append(word)
            take = False
        elif text == "-C" or (text.startswith("--") and long_option(name, "--directory")):
            take = not equals
            out.extend([part(word, value)] if equals else [])
        elif text.startswith("-C") and not text.startswith("--"):
            out.append(part(word, text[2:]))
    return tuple(out)


def places(texts: list[str]) -> tuple[str, ...] | None:
    """Where ``tar x`` with the arguments ``texts`` unpacks (as written; ``HERE``: the
    directory it runs in), or None when that is not known (``_destinations``)."""
    places: list[str] = []
    owed: list[str] = []  # the letters whose values the next words are, in order
    member_first = options = False
    for index, text in enumerate(texts):
        letters: str | None = None
        if owed:
            if owed.pop(0) == "C":
                places.append(text)
        elif options or text == "-" or (not text.startswith("-") and index):
            member_first = member_first or not places  # GNU: unpacked where it is then
        elif text == "--":
            options = True
        elif text.startswith("--"):
            name, equals, value = text.partition("=")
            if long_in(name, ("--absolute-names", "--files-from")):
                return None
            if long_option(name, "--directory") and equals:
                places.append(value)
            elif long_option(name, "--directory"):
                owed.append("C")
            elif long_option(name, "--one-top-level") and os.path.isabs(value):
                return None
            elif not equals and name in _TAR_LONG_VALUED:
                owed.append("f")
            elif not equals and name not in _TAR_LONG_FLAGS:
                return None  # it may take the next word
        else:
            letters = text.lstrip("-") if index == 0 else text[1:]
        if letters is not None:
            if "P" in letters or "T" in letters:
                return None  # absolute names; a list that may hold -C
            for at, letter in enumerate(letters):
                if letter in TAR_VALUED:
                    rest = letters[at + 1 :]
                    if rest and text.startswith("-"):  # -Cout, -fa.tar
                        places.extend([rest] if letter == "C" else [])
                        break
                    owed.append(letter)  # old style (xCf out a.tar): each in turn
    if len(places) > 1 or owed:
        return None  # GNU: a later -C is named from the one before
    return (*places, HERE) if member_first or not places else tuple(places)
