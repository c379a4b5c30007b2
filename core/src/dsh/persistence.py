"""The session-persistence service a persistence plugin provides to the core.

A plugin offers one through the ``session_persistence`` hook; ``agents.resume`` loads
through it. Writing happens on the ``session_event``/``session_flush`` hooks.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Protocol, runtime_checkable

from dsh.errors import DshError
from dsh.session import SessionEvent

__all__ = [
    "SessionHeader",
    "SessionPersistence",
    "StoredSession",
    "find_session",
    "in_store",
    "last_above",
    "last_in",
    "shown_id",
    "started_in",
    "store_location",
]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """What ``list()`` returns: cheap to read for thousands of sessions."""

    id: str
    created: float
    updated: float
    turns: int
    title: str = ""
    #: The workspace of the agent that stored the session's last turn ("": not
    #: recorded), its symlinks resolved (a store that records only where the session was
    #: started gives that); a store that writes UTF-8 may give bytes of the path that are
    #: not UTF-8 (``os.fsdecode``'s lone surrogates) as U+FFFD: ``last_in`` matches either.
    workspace: str = ""
    #: Why the store cannot read this session ("": it can): another program's file in
    #: the store, a newer format, a damaged header. ``id`` is then where it is stored,
    #: and the other fields hold what could be read (0 and "" when nothing could).
    #: ``started_in`` and ``last_above`` leave such sessions out.
    error: str = ""
    #: True when the entry is no session at all (another program's file in the store,
    #: its ``error`` says so): ``--continue`` does not count it among the sessions it
    #: skipped as unreadable.
    foreign: bool = False


@dataclass(frozen=True, slots=True, weakref_slot=True)  # dsh._resume.sound marks it
class StoredSession:
    """A loaded (and, where needed, repaired) session log."""

    id: str
    created: float
    events: list[SessionEvent]
    meta: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class SessionPersistence(Protocol):
    """What ``session_persistence`` returns. It may also define ``async
    claim(session_id, events)`` and ``async release(session_id)``: the core claims each
    session as its agent is created or resumed, before the agent starts (``events``: the
    session's log so far, empty for a new one; raise a DshError when another process
    continues the session, or the store no longer ends where ``events`` do), and
    releases it if the agent cannot start; the plugin ends a claim when the agent is
    disposed.

    It may also have a ``location`` attribute: the absolute path (a ``str`` or
    ``os.PathLike``) of the directory that holds its sessions or of its database file,
    or None when they are not in a file on this machine. What the store covers is that
    path, everything below it, and every path that begins with it followed by ``-`` (a
    database's ``-wal``, ``-shm`` and ``-journal`` files, dsh-persistence's
    ``-claims/``): see ``in_store``. Plugins read it with ``store_location``;
    dsh-permissions keeps the store out of ``accept-edits`` with it."""

    async def list(self) -> list[SessionHeader]: ...

    async def load(self, session_id: str) -> StoredSession | None: ...

    async def delete(self, session_id: str) -> bool: ...


async def find_session(service: SessionPersistence, wanted: str) -> str:
    """The id of the stored session ``wanted`` names: itself, or the one stored id it
    begins, whole or after its ``<agent>-session-`` (``3f0c`` for
    ``main-session-3f0c...``): what ``dsh sessions``, ``--session`` and chat's
    ``/resume`` accept. DshError when none or several match, and for an empty or blank
    ``wanted`` (``--session "$ID"`` with the variable unset): it begins every id."""
    from dsh._quoted import shown

    if not wanted.strip():
        said = "empty" if not wanted else f"blank ({shown(wanted)})"
        raise DshError(f"the session id is {said}: give one (`dsh sessions list` shows them)")
    ids = [header.id for header in await service.list()]
    if wanted in ids:
        return wanted
    matches = [session_id for session_id in ids if _begins(session_id, wanted)]
    if len(matches) == 1:
        return matches[0]
    if matches:  # ``wanted`` cut (with its length) when long: it was printed whole
        listed = ", ".join(shown_id(match) for match in sorted(matches)[:5])
        more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
        raise DshError(f"{shown(wanted)} matches {len(matches)} sessions: {listed}{more}")
    raise DshError(f"no stored session {shown(wanted)} (`dsh sessions list` shows them)")


def shown_id(session_id: str) -> str:
    """A session id as a message or a listing shows it: as it is, or quoted and escaped
    as ``repr`` shows it when it holds a character that does not print (a line end, a
    control or bidi character: only a backend used directly stores one), so that it
    stays on its line and moves or reorders nothing after it. An empty id, one with
    spaces at its ends and one that begins with a quote (another id's ``repr``) are
    quoted too: what is shown names one id."""
    plain = session_id.isprintable() and session_id.strip() == session_id
    return session_id if plain and session_id[:1] not in ("", "'", '"') else repr(session_id)


def started_in(headers: Sequence[SessionHeader], workspace: str) -> list[SessionHeader]:
    """Those of ``headers`` whose agent last worked in ``workspace``, or that do not say
    where (``workspace == ""``), in their order: ``dsh sessions list --here``. Sessions
    the store cannot read (``error``) are left out: they say nothing of where they ran."""
    here = _path(workspace)
    return [
        header
        for header in headers
        if not header.error
        and (header.workspace in ("", workspace) or _path(header.workspace) == here)
    ]


def last_in(headers: Sequence[SessionHeader], workspace: str) -> SessionHeader | None:
    """The first of ``started_in(headers, workspace)`` (``list()`` gives the most
    recently updated first): the session ``dsh run --continue`` takes."""
    here = started_in(headers, workspace)
    return here[0] if here else None


def last_above(headers: Sequence[SessionHeader], workspace: str) -> SessionHeader | None:
    """The first of ``headers`` that last ran in a directory that holds ``workspace`` (a
    parent of it, at any depth): what ``--continue`` in a project's subdirectory names in its
    error. It does not take it: there the tools would run in the subdirectory, and the
    session's relative paths would be off."""
    here = _path(workspace)
    for header in headers:
        if header.workspace and not header.error:
            there = _path(header.workspace)
            if there != here and here.is_relative_to(there):
                return header
    return None


def store_location(service: object) -> str | None:
    """The real path of the ``location`` ``service`` gives (its symlinks resolved), or
    None when it gives none (no such attribute, or None). DshError when it gives
    something else than an absolute path (a ``str`` or ``os.PathLike``)."""
    location = getattr(service, "location", None)
    if location is None:
        return None
    name = type(service).__name__
    if not isinstance(location, (str, os.PathLike)):
        raise DshError(
            f"the session persistence service {name} gives location={location!r}: "
            "expected an absolute path (str or os.PathLike) or None"
        )
    path = os.fspath(location)
    if not isinstance(path, str) or not path or "\x00" in path or not os.path.isabs(path):
        raise DshError(
            f"the session persistence service {name} gives location={location!r}: "
            "expected an absolute path or None"
        )
    return os.path.realpath(path)


def in_store(location: str, path: str) -> bool:
    """Whether ``path`` is part of the store at ``location`` (both real, absolute paths,
    as ``store_location`` gives): ``location`` itself, anything below it, or a path that
    begins with ``location`` followed by ``-`` (and anything below that)."""
    base = location.rstrip(os.sep) or os.sep
    if path == base:
        return True
    if base == os.sep:
        return True  # a store at the root holds every path
    return path.startswith((base + os.sep, base + "-"))


def _path(workspace: str) -> PurePath:
    """A workspace as compared: a path (``/p/`` and ``/p/.`` are ``/p``), its bytes that
    were not UTF-8 as U+FFFD on either side (a store that writes UTF-8 gives them so, one
    that does not keeps ``os.fsdecode``'s lone surrogates)."""
    return PurePath(_LONE_SURROGATE.sub("\ufffd", workspace))


def _begins(session_id: str, wanted: str) -> bool:
    _, marker, unique = session_id.partition("-session-")
    return session_id.startswith(wanted) or bool(marker and unique.startswith(wanted))
