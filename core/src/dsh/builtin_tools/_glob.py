"""Glob matching for ``glob`` and ``grep``'s ``glob=``: pathlib's syntax, one walk.

Python 3.11's ``Path.glob`` walks the tree below each directory a ``**`` reached once
more for the next ``**``, so ``**/**/**/x`` took time exponential in the number of
``**``, in a worker thread nothing could stop (an abort left it running, and the
process could not exit before it ended). Here the tree is walked once: each directory
is listed at most once whatever the pattern, with the parts of the pattern it may still
match, and the walk checks for cancellation before each directory it lists, so an
abandoned search stops there.

The syntax is pathlib's: ``*``, ``?`` and ``[...]`` within a name (a leading dot
included), ``**`` as a whole part for any number of directories, none included
(``**/**`` is ``**``); ``**`` within a part is refused. A trailing ``/``, or a last
part ``**``, matches directories only. Symlinked directories are treated as bash's
``globstar`` treats them: ``**`` never descends into one (no loops, no duplicates),
a named or wildcard part does (``link/*``, ``*/a.py``).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Final

import anyio.from_thread

from dsh.tools import ToolError

__all__ = ["glob_paths", "is_dir"]

_ANY_DIRECTORIES: Final = "**"
_WILDCARDS: Final = frozenset("*?[")


def is_dir(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is a directory or a symlink to one."""
    try:
        return entry.is_dir()
    except OSError:  # a symlink loop
        return False


def _parts(pattern: str, given: str) -> list[str]:
    parts: list[str] = []
    for part in pattern.split("/"):
        if part in ("", "."):
            continue
        if part == _ANY_DIRECTORIES:
            if parts and parts[-1] == _ANY_DIRECTORIES:
                continue
        elif _ANY_DIRECTORIES in part:
            raise ToolError(
                f"the pattern {given!r} is not a valid glob: Invalid pattern: '**' can only "
                "be an entire path component"
            )
        parts.append(part)
    return parts


def _matches(name: str, part: str) -> bool:
    return fnmatchcase(name, part) if _WILDCARDS.intersection(part) else name == part


def _closure(parts: list[str], states: Collection[int]) -> frozenset[int]:
    """``states`` and those a ``**`` matching no directory leads to."""
    reached = set(states)
    for state in states:
        while state < len(parts) and parts[state] == _ANY_DIRECTORIES:
            state += 1
            reached.add(state)
    return frozenset(reached)


def glob_paths(base: Path, pattern: str, given: str, *, skip_git: bool) -> list[Path]:
    """The paths below the directory ``base`` that ``pattern`` matches (see above), in
    no order; ``given``: the pattern the model gave, named by a ``ToolError``;
    ``skip_git``: leave ``.git`` directories out. Run it in an AnyIO worker thread."""
    parts = _parts(pattern, given)
    done = len(parts)  # the state of a path that matched the whole pattern
    directories_only = pattern.endswith("/") or (bool(parts) and parts[-1] == _ANY_DIRECTORIES)
    start = _closure(parts, [0])
    found = [base] if done in start else []
    todo = [(base, start - {done})]
    while todo:
        directory, states = todo.pop()
        anyio.from_thread.check_cancelled()  # an abandoned walk stops here
        try:
            with os.scandir(directory) as scan:
                entries = list(scan)
        except OSError:  # unreadable, or gone meanwhile: nothing below it matches
            continue
        for entry in entries:
            if skip_git and entry.name == ".git":
                continue
            directory_entry = is_dir(entry)
            later: set[int] = set()
            for state in states:
                part = parts[state]
                if part == _ANY_DIRECTORIES:
                    if directory_entry and not entry.is_symlink():
                        later.add(state)
                elif _matches(entry.name, part):
                    later.add(state + 1)
            if not later:
                continue
            reached = _closure(parts, later)
            path = directory / entry.name
            if done in reached and (directory_entry or not directories_only):
                found.append(path)
            if directory_entry and (go_on := reached - {done}):
                todo.append((path, go_on))
    return found
