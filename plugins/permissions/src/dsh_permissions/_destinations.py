"""Where a command that may make or move symbolic links puts them.

A later command of a line reads a file before the links exist (``_relinked``); only a
read that goes through a place a link may lie can lead elsewhere. So for each such
command the places it may write are told, as written (relative to the directory it
runs in): ``tar x`` its ``-C`` directory, or its directory (with the directory too
when a member is named before ``-C``: ``_tar``);
``unzip`` its ``-d`` directory, or its directory; ``ln`` (``cp -s``) its link name: the
last operand or the ``-t`` directory (the target's name when there is one operand);
``mv``, ``cp`` and ``rsync`` their destination (nothing when rsync's is remote). A
whole tree lies below each place: ``tar`` and ``cp -r`` write below it.

Not known (None: every later read stays unknown), which keeps the old behaviour: a word
only the shell or an input fills in (``$D``, ``{}``, ``xargs``), since it may be an
option naming another place; an option that writes outside the place or moves what is
there (``tar -P``, ``tar -T`` whose list may hold ``-C``, ``unzip -:``, a backup
``-b``/``--backup``/``-S`` or ``mv --exchange`` that renames what the link replaces), an
option not known to take no value before the place, and ``7z``, ``cpio``, ``pax``,
``patch``, ``install``, ``link``, ``rename`` and ``git``: a git command writes its work
tree, which holds the workspace, and where that work tree is can be moved by the
environment, its configuration and its options (``GIT_WORK_TREE``, ``core.worktree``,
``-C``).

``written`` gives the words of ``mv``, ``cp`` and an unpacking ``tar`` that only name
such a place (the destination, ``-t DIR``, ``-C DIR``): written, never read, so
``_reads`` leaves them out.
"""

from __future__ import annotations

import os
from typing import Final

from dsh_permissions._getopt import long_in
from dsh_permissions._made_links import parsed
from dsh_permissions._shell_words import Word
from dsh_permissions._tar import HERE, TARS, directory_words, places, reads_there

__all__ = ["destinations", "written"]

_LINKS: Final = frozenset({"ln", "gln", "cp", "gcp", "mv", "gmv"})
#: the programs whose destination is written only (``install``'s value options, such
#: as ``-gt``, are not told apart from ``-t DIR``; ``rsync`` reads what is there, as the
#: basis of its delta and for ``-c``: ``rsync -nci guess .env`` says whether they differ)
_COPIES: Final = frozenset({"cp", "gcp", "mv", "gmv"})
#: options that keep what is at the destination under another name (``mv --exchange``
#: swaps the two: the destination's file lands at the source's name)
_BACKUPS: Final = ("--backup", "--suffix", "--backup-dir", "--exchange")


def destinations(name: str, args: tuple[Word, ...]) -> tuple[str, ...] | None:
    """The places (as written) below which ``name ARGS`` may put a symbolic link; None
    when they are not known. Wrapped programs and their inputs are the caller's."""
    if any(a.dynamic or "{}" in a.text for a in args):
        return None  # "$D" may be -C/elsewhere, --target-directory=..., -P
    texts = [os.path.expanduser(a.text) if a.tilde else a.text for a in args]
    if name in TARS:
        return places(texts)
    if name == "unzip":
        return _unzip(texts)
    if name in _LINKS or name == "rsync":
        if any(_backup(t) for t in texts):
            return None
        return _rsync(texts) if name == "rsync" else _linked(name, args)
    return None


def written(name: str, args: tuple[Word, ...]) -> tuple[Word, ...]:
    """The words of ``mv``'s or ``cp``'s ``args`` that only name where it writes (its
    last operand, or ``-t DIR``), or of ``tar``'s when it only unpacks (its ``-C``
    directory): written, never read. Nothing when a backup option keeps
    what is there under another name (``cp -b x .env && cat .env~``), or when the
    shell fills a word in (``$F`` may be several words, or ``-t DIR``)."""
    if any(a.dynamic or "{}" in a.text for a in args):
        return ()
    if name in TARS:  # tar x -C out: out is where it unpacks (packing, it reads there)
        return () if reads_there([a.text for a in args]) else directory_words(args)
    if name not in _COPIES or any(_backup(a.text) for a in args):
        return ()
    _, operands, named = parsed(args)
    if named:
        return tuple(named)
    return (operands[-1],) if len(operands) > 1 else ()


def _unzip(texts: list[str]) -> tuple[str, ...] | None:
    places: list[str] = []
    take: str | None = None
    for text in texts:
        if take is not None:
            places.extend([text] if take == "d" else [])
            take = None
        elif text.startswith("--"):
            return None
        elif text.startswith("-") and text != "-":
            if ":" in text or "x" in text:
                return None  # -: keeps ../ in names; -x: the rest may be names
            for at, letter in enumerate(text[1:], start=1):
                if letter in "dP":
                    if text[at + 1 :]:
                        places.extend([text[at + 1 :]] if letter == "d" else [])
                    else:
                        take = letter
                    break
    if len(places) > 1 or take is not None:
        return None
    return tuple(places) or (HERE,)


def _linked(name: str, args: tuple[Word, ...]) -> tuple[str, ...] | None:
    """``ln``'s link name, ``mv``'s and ``cp``'s destination."""
    _, operands, named = parsed(args)
    if named:
        return tuple(os.path.expanduser(w.text) if w.tilde else w.text for w in named)
    if len(operands) < 2:
        if name in ("ln", "gln") and operands:  # ln -s ../x: ./x
            return (os.path.basename(operands[0].text.rstrip(os.sep)) or HERE,)
        return None
    last = operands[-1]
    return (os.path.expanduser(last.text) if last.tilde else last.text,)


def _rsync(texts: list[str]) -> tuple[str, ...] | None:
    """The last word, when the word before it is no option (which might take it)."""
    operands = [t for t in texts if not t.startswith("-")]
    if len(operands) < 2:
        return ()  # rsync SRC lists it
    if texts[-1].startswith("-") or texts[-2].startswith("-"):
        return None
    head = texts[-1].split(os.sep, 1)[0]
    if ":" in head:
        return ()  # host:dir, rsync://host/: nothing is written here
    return (texts[-1],)


def _backup(text: str) -> bool:
    """``-b``, ``--backup``, ``-S SUFFIX``, ``--exchange``: what is there is renamed."""
    if text.startswith("--"):
        return long_in(text, _BACKUPS)
    return text.startswith("-") and ("b" in text or "S" in text)
