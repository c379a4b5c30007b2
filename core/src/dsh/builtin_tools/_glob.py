"""Glob matching for ``glob`` and ``grep``'s ``glob=``: pathlib's syntax, one walk.

Python 3.11's ``Path.glob`` walks the tree below each directory a ``**`` reached once
more for the next ``**``, so ``**/**/**/x`` took time exponential in the number of
``**``, in a worker thread nothing could stop (an abort left it running, and the
process could not exit before it ended). Here the tree is walked once: each path is
listed at most once whatever the pattern (a directory reached by several paths through
symlinks, once per path), with the parts of the pattern it may still match; a name
without wildcards is looked up rather than listed, as pathlib did. The walk checks for
cancellation before each directory, so an abandoned search stops there.

The syntax is pathlib's: ``*``, ``?`` and ``[...]`` within a name (a leading dot
included), ``**`` as a whole part for any number of directories, none included
(``**/**`` is ``**``); ``**`` within a part is refused. A trailing ``/``, or a last
part ``**``, matches directories only. Symlinked directories are treated as bash's
``globstar`` treats them: ``**`` never descends into one (no loops, no duplicates),
a named or wildcard part does (``link/*``, ``*/a.py``), unless it leads out of the
roots: nothing below such a link is listed, matched or counted.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Final

import anyio.from_thread

from dsh.builtin_tools._paths import Roots, real_path
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


def _entries(directory: Path, parts: Collection[str]) -> list[tuple[str, bool, bool]]:
    """The entries of ``directory`` that ``parts`` may match, each as (name, whether it
    is a directory or a symlink to one, whether it is a symlink); the directory is
    listed, unless every part is a name without wildcards: those are looked up."""
    if any(part == _ANY_DIRECTORIES or _WILDCARDS.intersection(part) for part in parts):
        try:
            with os.scandir(directory) as scan:
                return [(entry.name, is_dir(entry), entry.is_symlink()) for entry in scan]
        except OSError:  # unreadable, or gone meanwhile: nothing below it matches
            return []
    entries = []
    for name in set(parts):
        if name in (".", ".."):  # no entry a listing would give
            continue
        path = directory / name
        try:
            mode = os.lstat(path).st_mode
        except (OSError, ValueError):  # no such entry; or a NUL, a lone surrogate: no name
            continue
        link = stat.S_ISLNK(mode)
        if link:
            try:
                mode = os.stat(path).st_mode
            except OSError:  # a dangling link, or a loop: no directory
                mode = 0
        entries.append((name, stat.S_ISDIR(mode), link))
    return entries


def _entered(link: Path, roots: Roots) -> Path | None:
    """Where the symlinked directory ``link`` leads, if into the roots."""
    real = real_path(link)
    return real if real is not None and roots.allows(real) else None


def glob_paths(base: Path, pattern: str, given: str, roots: Roots, *, skip_git: bool) -> list[Path]:
    """The paths below the directory ``base`` that ``pattern`` matches (see above), in
    no order; ``given``: the pattern the model gave, named by a ``ToolError``;
    ``roots``: where a symlinked directory may lead to be entered; ``skip_git``: leave
    ``.git`` directories out. Run it in an AnyIO worker thread."""
    parts = _parts(pattern, given)
    done = len(parts)  # the state of a path that matched the whole pattern
    directories_only = pattern.endswith("/") or (bool(parts) and parts[-1] == _ANY_DIRECTORIES)
    start = _closure(parts, [0])
    found = [base] if done in start else []
    real_base = real_path(base)
    if real_base is None:  # a symlink loop: nothing below it
        return found
    # each directory with where it really is: a symlinked directory below it is
    # resolved from there, once, whatever the paths it is reached by ('l/l/l' for a
    # link 'l' to '.'): where it leads if in the roots, else None
    targets: dict[Path, Path | None] = {}
    todo = [(base, real_base, start - {done})]
    while todo:
        directory, real, states = todo.pop()
        anyio.from_thread.check_cancelled()  # an abandoned walk stops here
        for name, directory_entry, link in _entries(directory, [parts[s] for s in states]):
            if skip_git and name == ".git":
                continue
            later: set[int] = set()
            for state in states:
                part = parts[state]
                if part == _ANY_DIRECTORIES:
                    if directory_entry and not link:
                        later.add(state)
                elif _matches(name, part):
                    later.add(state + 1)
            if not later:
                continue
            reached = _closure(parts, later)
            path = directory / name
            if done in reached and (directory_entry or not directories_only):
                found.append(path)
            if not directory_entry or not (go_on := reached - {done}):
                continue
            target: Path | None = real / name
            if link:
                place = real / name
                if place not in targets:
                    targets[place] = _entered(place, roots)
                target = targets[place]
            if target is not None:  # else a link out of the roots: not entered
                todo.append((path, target, go_on))
    return found
