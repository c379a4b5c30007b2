"""What one decision reads from the file system, and whether it still reads the same.

A decision looks at the disk beyond the call's subjects (which are worked out afresh
for each call): where each pattern's literal directory leads now (``_paths``), and for
``accept-edits`` whether a directory on the way holds a venv's ``pyvenv.cfg``, a conda
environment's ``conda-meta`` or what makes a git directory (``_guarded``). Inside
``one_resolution`` each such look is made once and noted; ``_decide`` keeps a verdict
with the looks it took and uses it again only while each look finds the same
(``unchanged``), so a symlink made or replaced since, or a venv made since, counts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

__all__ = ["Looks", "Seen", "is_dir", "is_file", "one_resolution", "real", "seen", "unchanged"]

_Kind = Literal["real", "file", "dir"]
#: each look of one decision, (kind, path) -> what it found
Looks = dict[tuple[_Kind, str], str | bool]
#: the looks of one decision, kept with its verdict: (kind, path, what it found)
Seen = tuple[tuple[_Kind, str, str | bool], ...]

_LOOKS: ContextVar[Looks | None] = ContextVar("dsh_permissions_looks", default=None)


@contextmanager
def one_resolution() -> Iterator[Looks]:
    """Inside, each look (``real``, ``is_file``, ``is_dir``) is made once per path and
    noted in the dict given: one call's decision matches every rule against each of its
    paths and each symlink below a directory it names, and the file system is taken as
    it is at that call. Nested: the outer scope's looks are kept (and given)."""
    outer = _LOOKS.get()
    if outer is not None:
        yield outer
        return
    looks: Looks = {}
    token = _LOOKS.set(looks)
    try:
        yield looks
    finally:
        _LOOKS.reset(token)


def _look(kind: _Kind, path: str) -> str | bool:
    # os.path's functions looked up at each call (tests count them)
    if kind == "real":
        return os.path.realpath(path)
    if kind == "file":
        return os.path.isfile(path)
    return os.path.isdir(path)


def _noted(kind: _Kind, path: str) -> str | bool:
    looks = _LOOKS.get()
    if looks is None:
        return _look(kind, path)
    key = (kind, path)
    found = looks.get(key)
    if found is None:
        found = looks[key] = _look(kind, path)
    return found


def real(path: str) -> str:
    """``os.path.realpath(path)``, noted."""
    return str(_noted("real", path))


def is_file(path: str) -> bool:
    """``os.path.isfile(path)``, noted."""
    return _noted("file", path) is True


def is_dir(path: str) -> bool:
    """``os.path.isdir(path)``, noted."""
    return _noted("dir", path) is True


def seen(looks: Looks) -> Seen:
    """``looks``, to keep."""
    return tuple((kind, path, found) for (kind, path), found in looks.items())


def unchanged(kept: Seen) -> bool:
    """Whether each look kept finds now what it found then."""
    return all(_look(kind, path) == found for kind, path, found in kept)
