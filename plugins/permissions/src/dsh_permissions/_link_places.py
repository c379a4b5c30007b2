"""Whether a path goes through a place an earlier command of the line may put a
symbolic link in (``_destinations``).

A place is taken as written (``..`` taken off lexically) and as it resolves now; a
command writing below it also follows a symlink that is there already (``out/sub ->
../src``: a link unpacked as ``out/sub/x`` lands in ``src``), so the targets of the
symlinks below it are places too, and those below them in turn (``_links.links_below``;
a walk that cannot finish, or more than ``MAX_PLACES``, leaves the places not known).
They are looked for only when a path reaches none of the places themselves. A path is
walked as the kernel walks it, component by component, each symlink there now followed
and ``..`` taken from where the walk is: it reaches a place when a step of the walk is
at or below one (``out/x/../../y`` steps through ``out/x``, which may become a link), or
when it ends above one (a directory read with what lies below it). A walk through more
than ``MAX_HOPS`` symlinks, or a name that cannot be looked at, reaches every place
(fail closed).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Final

from dsh_permissions._links import links_below

__all__ = ["MAX_HOPS", "MAX_PLACES", "far", "near", "reaches"]

#: symlinks followed in one walk before giving up (as the kernel's 40)
MAX_HOPS: Final = 40
#: places (with where the symlinks below them lead) a line may hold before every later
#: read is taken as going through one
MAX_PLACES: Final = 64


def near(places: Iterable[str]) -> tuple[str, ...]:
    """Each absolute place as written (``..`` taken off) and as it resolves now."""
    out: dict[str, None] = {}
    for place in places:
        out[os.path.normpath(place)] = out[os.path.realpath(place)] = None
    return tuple(out)


def far(places: Iterable[str]) -> tuple[str, ...] | None:
    """Where the symlinks below the places lead, and below those in turn (at most
    ``MAX_PLACES``); None when a walk could not finish or there are more."""
    pending = list(places)
    seen: dict[str, None] = dict.fromkeys(pending)
    out: dict[str, None] = {}
    while pending:
        found, why = links_below(os.path.realpath(pending.pop()))
        if why is not None:
            return None
        for target in found:
            if target not in seen:
                seen[target] = out[target] = None
                pending.append(target)
        if len(seen) > MAX_PLACES:
            return None
    return tuple(out)


def reaches(path: str, places: tuple[str, ...]) -> bool:
    """Whether the absolute ``path`` goes through, or holds, one of ``places``."""
    steps = _walk(path)
    if steps is None:
        return True
    end = steps[-1]
    return any(_at_or_below(step, place) for step in steps for place in places) or any(
        _at_or_below(place, end) for place in places
    )


def _walk(path: str) -> list[str] | None:
    """Each place the kernel's walk of ``path`` steps on, in order, and where it ends."""
    pending = path.split(os.sep)[::-1]
    current = os.sep
    steps: list[str] = []
    hops = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)
            steps.append(current)
            continue
        current = os.path.join(current, part)
        steps.append(current)
        try:
            if not os.path.islink(current):
                continue
            target = os.readlink(current)
        except (OSError, ValueError):
            return None
        hops += 1
        if hops > MAX_HOPS:
            return None
        current = os.sep if target.startswith(os.sep) else os.path.dirname(current)
        pending.extend(target.split(os.sep)[::-1])
    return [*steps, current]  # where it ends, also after a last symlink


def _at_or_below(path: str, place: str) -> bool:
    return path == place or path.startswith(place.rstrip(os.sep) + os.sep)
