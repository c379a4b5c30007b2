"""The contract every storage backend keeps (``dsh_persistence.testing`` checks it).

Backends are synchronous and thread-safe: the plugin calls them from worker threads,
never from the event loop. The load rules (torn tail, holes, interrupted turns) live in
``_records`` so that every backend applies exactly the same ones.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dsh_persistence._errors import SessionConflictError, UnencodableEventError

if TYPE_CHECKING:
    from dsh.persistence import SessionHeader, StoredSession
    from dsh.session import Session, SessionEvent

__all__ = [
    "LoadedSession",
    "SessionBackend",
    "SessionInfo",
    "StoredTail",
    "check_contiguous",
    "encode_events",
]

#: Header keys lifted out of ``Session.meta`` for forks (``SessionStore.fork`` sets them).
FORK_KEYS = ("parent", "seed_length")
TITLE_LENGTH = 120
_SPACES = re.compile(r"\s+")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What a backend records once, when it first stores a session."""

    id: str
    created: float
    meta: dict[str, Any] = field(default_factory=dict)
    cwd: str = ""
    #: The first prompt, on one line, cut to ``TITLE_LENGTH`` characters.
    title: str = ""

    @classmethod
    def of(cls, session: Session, cwd: str | os.PathLike[str] | None = None) -> SessionInfo:
        """``cwd``: the directory the session's agent works in (its workspace); the
        process's working directory when not given."""
        shown = _shown(os.fspath(cwd) if cwd is not None else os.getcwd())
        return cls(session.id, session.created, dict(session.meta), shown, title_of(session))


def title_of(session: Session) -> str:
    for event in session.events:
        if event.type == "user/message":
            text = _shown(_SPACES.sub(" ", str(event.data.get("content", ""))).strip())
            return text if len(text) <= TITLE_LENGTH else text[: TITLE_LENGTH - 1] + "…"
    return ""


def _shown(text: str) -> str:
    """``text`` for display: a lone surrogate (bytes that were not UTF-8) becomes U+FFFD,
    so the title and directory can be written as UTF-8 (the events keep the original)."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def check_contiguous(events: Sequence[SessionEvent], session_id: str) -> None:
    """Refuse a batch whose seqs are not consecutive (``SessionConflictError``)."""
    first = events[0].seq
    for offset, event in enumerate(events):
        if event.seq != first + offset:
            raise SessionConflictError(
                f"session {session_id!r}: events to append are not contiguous (seq "
                f"{event.seq} where {first + offset} was expected); nothing was written"
            )


def encode_events(events: Sequence[SessionEvent], session_id: str) -> list[bytes]:
    """The JSON line of each event; ``UnencodableEventError`` names the first that has none."""
    try:
        return [event.to_json_bytes() for event in events]
    except Exception:  # find which one, and say why
        lines = []
        for event in events:
            try:
                lines.append(event.to_json_bytes())
            except Exception as exc:
                raise UnencodableEventError(session_id, event.seq, event.type, exc) from exc
        return lines


@dataclass(frozen=True, slots=True)
class StoredTail:
    """Where a stored log ends: the seq the next append must start with, and the last
    stored event (so a writer can check the live log really continues this one)."""

    next_seq: int
    last: SessionEvent | None


@dataclass(frozen=True, slots=True)
class LoadedSession:
    """A loaded log and what loading did to it.

    ``stored.events`` is the readable prefix plus the closers. Nothing of the repair is
    written back: a writer appends the closers with its first batch.
    """

    stored: StoredSession
    #: Events read from storage (the longest prefix whose seq equals its index).
    kept: int
    #: Records after that prefix that were ignored as what a crash left of a file: a
    #: torn last line, or a page of NUL bytes and what follows it in the unfinished
    #: turn (a database has none: a transaction lands whole).
    dropped: int
    #: Synthetic events appended to close an interrupted turn.
    closers: int


class SessionBackend(ABC):
    """Stores session logs. Subclass it, and run ``dsh_persistence.testing.BackendContract``
    against your subclass."""

    #: Where the sessions are, for messages (a directory, a database file, a URL).
    location: str = ""
    #: The absolute path of the directory or database file that holds the sessions, or
    #: None (they are not files on this machine, or the backend does not say). The
    #: service gives it as its ``location`` (see ``dsh.persistence.SessionPersistence``):
    #: dsh-permissions keeps it out of ``accept-edits``.
    stored_in: str | None = None
    #: True when an append with ``durable=False`` costs only a write to the operating
    #: system (never a lock of another process's to wait for, nor a network round trip):
    #: such an append is made on the event loop; any other runs in a worker thread.
    appends_cheaply: bool = False

    @abstractmethod
    def tail(self, session_id: str) -> StoredTail | None:
        """Where the stored log of ``session_id`` ends, or None if it is not stored.
        Raises ``SessionCorruptError`` or ``SessionFormatError`` like ``load``."""

    @abstractmethod
    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        """Store ``events`` (at least one) at the end of the log of ``info.id``.

        ``events[0].seq`` must equal the stored ``next_seq`` (0 for a session not yet
        stored, which is then created with ``info``, atomically: a reader sees all of
        the first batch or no session), and seqs must be contiguous; otherwise raise
        ``SessionConflictError`` and store nothing. ``durable``: return only once the
        events (and any earlier ones of this session) survive a power cut.
        """

    @abstractmethod
    def sync(self, session_id: str) -> None:
        """Make every stored event of ``session_id`` durable (after non-durable appends)."""

    @abstractmethod
    def load(self, session_id: str) -> LoadedSession | None:
        """The stored log, read by ``_records.read_log``, its open turn closed by
        ``close_turn`` and the result checked by ``check_repaired``, or None."""

    @abstractmethod
    def headers(self) -> list[SessionHeader]:
        """One header per stored session, without reading whole logs."""

    @abstractmethod
    def delete(self, session_id: str) -> bool:
        """Remove a stored session; True if there was one."""

    def prepare(self) -> None:  # noqa: B027 - optional: a backend may check nothing early
        """Check (creating it if needed) that the storage location is usable; raise
        ``PersistenceError`` saying where and why if not. Called when a harness starts,
        so that a bad location is reported then rather than at the first flush."""

    def claim(self, session_id: str) -> bool:
        """Reserve a session for an agent of this process until ``release``, so that no
        other process continues it meanwhile: False when another holds it. The built-in
        backends reserve a session not stored yet too (a new agent's id, which another
        process may not create meanwhile), through its first save. Optional: a backend
        that cannot reserve returns True, and a second writer is then refused only when
        it writes (``SessionConflictError``). The built-in backends also refuse at once an
        ``append`` by an instance that holds no claim while another holds one
        (``SessionInUseError``); ``BackendContract`` does not require that."""
        return True

    def release(self, session_id: str) -> None:  # noqa: B027 - optional, as ``claim``
        """Give up the ``claim`` of ``session_id`` (nothing if it holds none)."""

    def forget(self, session_id: str) -> None:  # noqa: B027 - optional
        """Drop what is kept in memory about a session no live agent writes any more
        (a long-running process creates and disposes many); it is read again from
        storage if the session is written later."""

    def close(self) -> None:  # noqa: B027 - optional: backends without resources skip it
        """Release resources (connections). The backend is not used afterwards."""
