"""Symlinks below a directory: where a tool given the directory may be led.

A tool given a directory (``grep`` on ``src``) reads the files below it, and a symlink
among them (``src/link -> ../.env``) is read as the file it points to. So when a
deny or ask rule could apply, the targets of the symlinks below a directory are
checked as well. The walk does not follow symlinked directories (their targets are
checked instead) and is bounded: a directory with more entries than that cannot be
checked, and the rules are taken to cover it.
"""

from __future__ import annotations

import os
from typing import Final

__all__ = ["MAX_ENTRIES", "links_below"]

#: Entries looked at below one directory before giving up.
MAX_ENTRIES: Final = 100_000


def links_below(directory: str, limit: int | None = None) -> tuple[tuple[str, ...], str | None]:
    """The canonical targets of the symlinks below ``directory``, and why the list is
    incomplete (None: it is complete). ``limit``: entries looked at (``MAX_ENTRIES``)."""
    if limit is None:
        limit = MAX_ENTRIES
    targets: dict[str, None] = {}
    seen = 0
    pending = [directory]
    while pending:
        try:
            entries = os.scandir(pending.pop())
        except OSError:
            continue  # what cannot be listed cannot be read by the tool either
        with entries:
            for entry in entries:
                seen += 1
                if seen > limit:
                    return tuple(targets), (
                        f"it holds more than {limit} entries, too many to check for symlinks"
                    )
                if entry.is_symlink():
                    targets[os.path.realpath(entry.path)] = None
                elif entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return tuple(targets), None
