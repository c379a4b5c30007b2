"""Symlinks below a directory: where a tool given the directory may be led.

A tool given a directory (``grep`` on ``src``) reads the files below it, and a symlink
among them (``src/link -> ../.env``) is read as the file it points to. So when a
deny or ask rule could apply, the targets of the symlinks below a directory are
checked as well. The walk does not follow symlinked directories (their targets are
checked instead) and is bounded twice, because the person waits for it at every
call: by the entries it looks at (per directory) and by the time it takes (per check:
every walk made while one call's subjects are found, inside ``one_check``, shares
one ``MAX_SECONDS``, so a command naming several large directories waits about as
long as one naming one, and a directory walked once is not walked again). A
directory the walk cannot finish cannot be checked, and the rules are taken to cover
it; once the time is spent, each further directory is taken as covered without
being listed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from time import monotonic
from typing import Final

__all__ = ["CHECK_EVERY", "MAX_ENTRIES", "MAX_SECONDS", "links_below", "one_check"]

#: Entries looked at below one directory before giving up.
MAX_ENTRIES: Final = 100_000
#: Seconds spent walking, for all the directories of one check, before giving up (a
#: cold cache or a network file system can make even a tree well under
#: ``MAX_ENTRIES`` take seconds).
MAX_SECONDS: Final = 0.5
#: The clock is read before each directory is listed and, inside one directory, once
#: per this many entries, so reading it costs next to nothing.
CHECK_EVERY: Final = 1_000

Found = tuple[tuple[str, ...], str | None]


@dataclass(slots=True)
class _Budget:
    """The time the walks of one check share; its clock starts at the first walk."""

    seconds: float
    deadline: float | None = None
    #: (directory, limit) -> what its walk found, within this check
    walked: dict[tuple[str, int], Found] = field(default_factory=dict)

    def until(self) -> float:
        if self.deadline is None:
            self.deadline = monotonic() + self.seconds
        return self.deadline


_CHECK: ContextVar[_Budget | None] = ContextVar("dsh_permissions_links_check", default=None)


@contextmanager
def one_check(seconds: float | None = None) -> Iterator[None]:
    """Every ``links_below`` inside shares one budget of ``seconds``
    (``MAX_SECONDS``): the walks for one call's decision."""
    token = _CHECK.set(_Budget(MAX_SECONDS if seconds is None else seconds))
    try:
        yield
    finally:
        _CHECK.reset(token)


def links_below(directory: str, limit: int | None = None, seconds: float | None = None) -> Found:
    """The canonical targets of the symlinks below ``directory``, and why the list is
    incomplete (None: it is complete). ``limit``: entries looked at (``MAX_ENTRIES``);
    ``seconds``: time spent walking (given: for this walk alone; otherwise what is
    left of the check's ``MAX_SECONDS`` inside ``one_check``, or ``MAX_SECONDS``)."""
    if limit is None:
        limit = MAX_ENTRIES
    shared = _CHECK.get() if seconds is None else None
    budget = shared or _Budget(MAX_SECONDS if seconds is None else seconds)
    found = budget.walked.get((directory, limit))
    if found is None:
        found = budget.walked[(directory, limit)] = _walk(directory, limit, budget)
    return found


def _walk(directory: str, limit: int, budget: _Budget) -> Found:
    # not the first walk of the check: earlier ones may have spent the time
    later = budget.deadline is not None
    seconds, deadline = budget.seconds, budget.until()
    targets: dict[str, None] = {}
    seen = 0
    pending = [directory]
    while pending:
        if monotonic() > deadline:  # listing a directory can be slow (a network mount)
            return tuple(targets), _too_long(directory, seconds, seen, later)
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
                    return tuple(targets), _too_long(directory, seconds, seen, later)
                if entry.is_symlink():
                    targets[os.path.realpath(entry.path)] = None
                elif entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return tuple(targets), None


def _too_long(directory: str, seconds: float, seen: int, later: bool) -> str:
    if later:
        return (
            f"looking for symlinks in {directory} took too long: the {seconds:g} seconds "
            f"the directories of this call share ran out after {seen} entries in it"
        )
    return (
        f"looking for symlinks in {directory} took too long: stopped after {seconds:g} "
        f"seconds and {seen} entries"
    )
