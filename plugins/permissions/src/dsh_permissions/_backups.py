"""The backups a listed writer makes (``_writes``): what a destination held, renamed.

- ``cp``, ``mv``, ``install``, ``ln`` given ``-b``, ``--backup`` or ``-S`` /
  ``--suffix`` (which implies it): each file written plus the suffix (``-S``, else
  ``SIMPLE_BACKUP_SUFFIX``, else ``~``): ``cp -S v y .en`` writes ``.env``;
- ``rsync`` given ``-b``, ``--backup`` or ``--suffix``: the same, its own default ``~``
  (``--backup-dir``: a tree elsewhere, not known);
- ``sed -iSUFFIX`` / ``--in-place=SUFFIX``: each file edited plus the suffix, or, when
  it holds ``*``, the suffix with each ``*`` the file's name as given (``sed -i'.e*'
  ... nv`` writes ``./.env``: GNU sed 4.8);
- ``patch`` (a backup on ``-b`` and on a mismatch): the file plus ``-z`` / ``--suffix``
  (else ``SIMPLE_BACKUP_SUFFIX``, else ``.orig``), ``-B`` / ``--prefix`` before its
  path, ``-Y`` / ``--basename-prefix`` before its name.

Options are read generously (a letter anywhere in a cluster): a name too many only adds
readings for deny and ask rules. A suffix only known when the command runs
(``SIMPLE_BACKUP_SUFFIX`` set in the environment or the line) makes where it writes
not known (``unknown``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Final

from dsh_permissions._file_words import part
from dsh_permissions._getopt import long_in, long_option, may_give
from dsh_permissions._shell_words import Word

__all__ = ["backups"]

_COPIES: Final = frozenset({"cp", "gcp", "mv", "gmv", "install", "ginstall", "ln", "gln"})
_SEDS: Final = frozenset({"sed", "gsed"})


def backups(
    name: str, args: tuple[Word, ...], written: list[Word], suffix_set: bool
) -> tuple[list[Word], bool]:
    """The backups the writer ``name`` given ``args`` makes of the files ``written``
    (``_writes``), and whether their names are only known when it runs;
    ``suffix_set``: whether ``SIMPLE_BACKUP_SUFFIX`` may be in its environment."""
    texts = [a.text for a in _options(args)]
    if name in _COPIES:
        suffixes = list(_values(args, "S", "--suffix"))
        if not suffixes and not any(may_give(t, "-b") or long_option(t, "--backup") for t in texts):
            return [], False
        if not suffixes and suffix_set:
            return [], True
        return _suffixed(written, suffixes or [Word("~", "~")]), False
    if name == "rsync":
        # --backup itself is not a shortened --backup-dir (an exact name wins)
        if any(long_option(t, "--backup-dir") and t != "--backup" for t in texts):
            return [], True
        suffixes = list(_values(args, "", "--suffix"))
        if not suffixes and not any(may_give(t, "-b") or long_option(t, "--backup") for t in texts):
            return [], False
        return _suffixed(written, suffixes or [Word("~", "~")]), False
    if name in _SEDS:
        return list(_sed(args, written)), False
    if name == "patch":
        return _patch(args, written[:1], suffix_set)
    return [], False


def _options(args: tuple[Word, ...]) -> Iterator[Word]:
    """The words of ``args`` up to ``--`` that are options."""
    for word in args:
        if word.text == "--":
            return
        if word.text.startswith("-") and word.text != "-":
            yield word


def _values(args: tuple[Word, ...], letter: str, long: str) -> Iterator[Word]:
    """The values of ``-LETTER`` (anywhere in a cluster: the rest of its word or the
    next word) and of ``LONG`` (maybe shortened: ``=value`` or the next word)."""
    for i, word in enumerate(args):
        text = word.text
        if text == "--":
            return
        following = args[i + 1] if i + 1 < len(args) else None
        if text.startswith("--"):
            option, equals, value = text.partition("=")
            if long_in(option, (long,)):
                if equals:
                    yield part(word, value)
                elif following is not None:
                    yield following
        elif letter and text.startswith("-") and letter in text[1:]:
            rest = text[text.index(letter, 1) + 1 :]
            if rest:
                yield part(word, rest)
            elif following is not None:
                yield following


def _backup(text: str, dynamic: bool, tilde: bool) -> Word:
    return Word(text, text, dynamic=dynamic, tilde=tilde)


def _suffixed(written: list[Word], suffixes: list[Word]) -> list[Word]:
    """Each of ``written`` plus each of ``suffixes``."""
    return [
        _backup(w.text.rstrip(os.sep) + s.text, w.dynamic or s.dynamic, w.tilde)
        for w in written
        for s in suffixes
    ]


def _sed(args: tuple[Word, ...], written: list[Word]) -> Iterator[Word]:
    """sed's backups: each ``-iSUFFIX`` (the rest of its cluster after ``i``) and
    ``--in-place=SUFFIX`` applied to each file edited."""
    suffixes: list[Word] = []
    for word in _options(args):
        text = word.text
        if text.startswith("--"):
            option, equals, value = text.partition("=")
            if equals and long_option(option, "--in-place") and value:
                suffixes.append(part(word, value))
        elif "i" in text[1:] and (rest := text[text.index("i", 1) + 1 :]):
            suffixes.append(part(word, rest))
    for suffix in suffixes:
        form = suffix.text if "*" in suffix.text else "*" + suffix.text
        for file in written:
            text = form.replace("*", file.text)
            yield _backup(text, file.dynamic or suffix.dynamic, form.startswith("*") and file.tilde)


def _patch(
    args: tuple[Word, ...], written: list[Word], suffix_set: bool
) -> tuple[list[Word], bool]:
    """patch's backups of the file it patches (``written``; none named: the diff's,
    not known here, nor are their backups)."""
    if not written:
        return [], False
    suffixes = list(_values(args, "z", "--suffix"))
    if not suffixes and suffix_set:
        return [], True
    found = _suffixed(written, suffixes or [Word(".orig", ".orig")])
    for prefix in _values(args, "B", "--prefix"):
        found += [
            _backup(prefix.text + w.text, w.dynamic or prefix.dynamic, prefix.tilde)
            for w in written
        ]
    for prefix in _values(args, "Y", "--basename-prefix"):
        for w in written:
            head, base = os.path.split(w.text)
            text = os.path.join(head, prefix.text + base)
            found.append(_backup(text, w.dynamic or prefix.dynamic, w.tilde))
    return found, False
