"""Symlinks below a directory: where a tool given the directory may be led.

A tool given a directory (``grep`` on ``src``) reads the files below it, and a symlink
among them (``src/link -> ../.env``) is read as the file it points to. So when a
deny or ask rule could apply, the targets of the symlinks below a directory are
checked as well. The walk does not follow symlinked directories (their targets are
checked instead) and is bounded twice, because the person waits for it at every
call: by the entries it looks at and by the time it takes. A directory the walk
cannot finish cannot be checked, and the rules are taken to cover it.
"""

from __future__ import annotations

import os
from time import monotonic
from typing import Final

__all__ = ["CHECK_EVERY", "MAX_ENTRIES", "MAX_SECONDS", "links_below"]

#: Entries looked at below one directory before giving up.
MAX_ENTRIES: Final = 100_000
#: Seconds spent walking one directory before giving up (a cold cache or a network
#: file system can make even a tree well under ``MAX_ENTRIES`` take seconds).
MAX_SECONDS: Final = 0.5
#: The clock is read before each directory is listed and, inside one directory, once
#: per this many entries, so reading it costs next to nothing.
CHECK_EVERY: Final = 1_000


def links_below(
    directory: str, limit: int | None = None, seconds: float | None = None
) -> tuple[tuple[str, ...], str | None]:
    """The canonical targets of the symlinks below ``directory``, and why the list is
    incomplete (None: it is complete). ``limit``: entries looked at (``MAX_ENTRIES``);
    ``seconds``: time spent walking (``MAX_SECONDS``)."""
    if limit is None:
        limit = MAX_ENTRIES
    if seconds is None:
        seconds = MAX_SECONDS
    deadline = monotonic() + seconds
    targets: dict[str, None] = {}
    seen = 0
    pending = [directory]
    while pending:
        if monotonic() > deadline:  # listing a directory can be slow (a network mount)
            return tuple(targets), _too_long(directory, seconds, seen)
        try:
            entries = os.scandir(pending.pop())
        except OSError:
            continue  # what cannot be listed cannot be read by the tool either
        with entries:
            for entry in entries:
                seen += 1
                if seen > limit:
                    return tuple(targets), (
                        f"{directory} holds more than {limit} entries, too many to check "
                        "for symlinks"
                    )
                if seen % CHECK_EVERY == 0 and monotonic() > deadline:
                    return tuple(targets), _too_long(directory, seconds, seen)
                if entry.is_symlink():
                    targets[os.path.realpath(entry.path)] = None
                elif entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return tuple(targets), None


def _too_long(directory: str, seconds: float, seen: int) -> str:
    return (
        f"looking for symlinks in {directory} took too long: stopped after {seconds:g} "
        f"seconds and {seen} entries"
    )
