"""The file a word of a command names, for the ``read`` rules (``_reads``).

A word names a file as the shell gives it: ``~`` is the home directory, and
``file:///x`` (curl) is ``/x``. What only the shell knows (``$F``, ``{}`` of ``find
-exec``), a file on another host, a relative name after the directory changed, and a
path through ``/proc/self`` or ``/dev/fd`` (the command's own process, not the
checker's) is not known: an ``unknown`` subject, asked about.
"""

from __future__ import annotations

import os
import re
from typing import Final

from dsh_permissions._shell_words import Word
from dsh_permissions._subjects import Subject

__all__ = ["file_path", "own_name", "own_why", "part", "per_process", "stream", "unknown"]

_UNKNOWN_WHY: Final = "only gets its value when the shell runs"
#: paths that name a file as the process opening it sees it (its directory, its
#: open files): the checker's own would be another
_PER_PROCESS: Final = re.compile(r"/proc/(self|thread-self|[0-9]+)(/|$)|/dev/fd(/|$)")
#: the process's standard streams (links to ``/proc/self/fd/N``)
_STREAMS: Final = re.compile(r"/dev/(stdin|stdout|stderr)(/|$)")


def file_path(word: Word, root: str, elsewhere: str | None) -> str | Subject:
    """The path a file word names (absolute, or from ``root``), or why it is not known."""
    if word.dynamic or "{}" in word.text:  # find -exec and parallel put a name there
        return unknown(word.raw, f"{word.raw!r} {_UNKNOWN_WHY}")
    text = word.text
    if word.tilde:
        text = os.path.expanduser("~") + text[1:]
    if text[:7].casefold() == "file://":  # curl file:///repo/.env
        text = text[7:]
        if text[:9].casefold() == "localhost":
            text = text[9:]
        if not text.startswith("/"):
            return unknown(word.raw, f"{word.raw!r} names a file on another host")
    if elsewhere is not None and not os.path.isabs(text):
        return unknown(word.raw, f"{elsewhere}, so {word.raw!r} may name another file")
    if own_name(os.path.join(root, text)):
        # /proc/self/cwd is the command's own directory (the workspace), not that of
        # the process checking it, and /dev/stdin its own input: resolved here, they
        # would name another file (dsh's own stdin, which may be a file too)
        normal = os.path.normpath(text)
        where = "/dev/fd" if normal.startswith("/dev/fd") else "/proc"
        why = f"{word.raw!r} names a file through {where}, as the command's own process sees it"
        if _STREAMS.match(normal):
            why = f"{word.raw!r} names the command's own standard stream, not a file known here"
        return unknown(word.raw, why)
    return text


def per_process(path: str) -> bool:
    """Whether ``path`` goes through ``/proc/self``, ``/proc/PID`` or ``/dev/fd``
    (also by a symlink or ``..``: ``/dev/fd/../cwd`` is ``/proc/self/cwd``)."""
    if _PER_PROCESS.match(os.path.normpath(path)):
        return True
    return _through(path)


def own_name(path: str) -> bool:
    """Whether ``path`` names a file through the process opening it (``per_process``)
    or its standard streams (``/dev/stdin``, ``/dev/stdout``, ``/dev/stderr``): one
    that resolved in dsh's own process would name dsh's (``/dev/null``, a pipe)."""
    return stream(path) or per_process(path)


def stream(path: str) -> bool:
    """Whether ``path`` is one of the standard streams as written (``/dev/stdin``)."""
    return _STREAMS.match(os.path.normpath(path)) is not None


def own_why(raw: str) -> str:
    """Why a word naming a file through ``per_process`` is only known when it runs."""
    return f"{raw!r} names a file as the command's own process sees it (/proc/self, /dev/fd)"


def _through(path: str) -> bool:
    """Whether a symlink on the way of ``path`` leads through ``_PER_PROCESS``."""
    if os.path.realpath(path) == os.path.normpath(path):
        return False  # no symlink on the way
    current = os.sep
    for part in path.split(os.sep):
        if part:
            current = os.path.realpath(os.path.join(current, part))
            if _PER_PROCESS.match(current) or _PER_PROCESS.match(current + os.sep):
                return True
    return False


def unknown(value: str, why: str) -> Subject:
    return Subject("path", value, unknown=why)


def part(word: Word, text: str) -> Word:
    """The part ``text`` of ``word`` (``--file=.env``'s ``.env``), as a word of its own."""
    return Word(text, word.raw, tilde=text.startswith("~/") or text == "~")
