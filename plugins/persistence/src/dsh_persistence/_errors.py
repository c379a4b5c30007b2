"""The failures of stored sessions: one type per family, each with a stable code."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dsh import DshError
from dsh.errors import SessionInUseError as _SessionInUse
from dsh.errors import exception_words

if TYPE_CHECKING:
    from dsh.session import SessionEvent

__all__ = [
    "PersistenceError",
    "SessionConflictError",
    "SessionCorruptError",
    "SessionDeletedError",
    "SessionFormatError",
    "SessionInUseError",
    "SessionStoreUnusableError",
    "UnencodableEventError",
    "leftover_events",
    "unstored",
]


class PersistenceError(DshError):
    """A stored session cannot be read or written (I/O, a bad path, a locked database)."""

    code = "PERSISTENCE"


class SessionStoreUnusableError(PersistenceError):
    """The store itself cannot be used, whichever session is asked for: its database
    cannot be opened or reached (locked by another process past the timeout, a server
    that refuses the connection, a directory that cannot be created). Said on one line.
    ``dsh sessions delete`` stops at it rather than failing alike for every id. Its code
    stays ``PERSISTENCE``, as before the type was told apart."""


class SessionCorruptError(PersistenceError):
    """A stored log has a hole or an unreadable record before its last ``turn/end``.

    The message names the file (or database) and the line (or event); nothing is
    rewritten, so the evidence stays as found.
    """

    code = "SESSION_CORRUPT"


class SessionFormatError(PersistenceError):
    """A stored session uses a format this version cannot read (a newer one, or none)."""

    code = "SESSION_FORMAT"


class NotASessionError(SessionFormatError):
    """The file is no dsh session at all (no dsh header): another program's."""


class SessionConflictError(PersistenceError):
    """Writing would not continue the stored log exactly where it ends: a seq gap or
    overlap, another writer, or a different session stored under the same id. Nothing
    is written."""

    code = "SESSION_CONFLICT"


class SessionDeletedError(SessionConflictError):
    """The session was deleted while an append waited for its lock (a writer that holds
    no claim of it): nothing is written, rather than events into a file no one can read
    again. The events are still the caller's to store (from seq 0: a new session)."""

    code = "SESSION_DELETED"


class SessionInUseError(PersistenceError, _SessionInUse):
    """Another process (or another harness of this one) is continuing the stored session
    (it holds its claim): this one may not run turns on it or delete it until that one is
    done. Also a ``dsh.SessionInUseError``, which ``InMemoryPersistence`` raises."""

    code = "SESSION_IN_USE"
    exit_status = 1  # not a mistake of the command: it may pass when tried again


class UnencodableEventError(PersistenceError):
    """An event of a batch cannot be written as JSON: nothing from it on was written.
    ``seq`` says which (the events before it can still be stored)."""

    def __init__(self, session_id: str, seq: int, kind: str, cause: BaseException) -> None:
        super().__init__(
            f"session {session_id!r}: event seq {seq} ({kind!r}) cannot be written as JSON "
            f"({exception_words(cause)}); it and the events after it were not written"
        )
        self.seq = seq


def leftover_events(session_id: str, count: int, location: str) -> SessionConflictError:
    """A new session ``session_id`` would clash with ``count`` events of that id left in
    the database at ``location`` without their session (its row removed by hand or by
    another program): refused, the events kept, saying how to delete them."""
    command = f"dsh sessions delete {shlex.quote(session_id)}"
    return SessionConflictError(
        f"session {session_id!r} is not stored, but {count} events of it are left in "
        f"{location} (its session was removed without them): run `{command}` to delete "
        "them, or give the new agent another session id"
    )


def unstored(session_id: str, events: Sequence[SessionEvent], *, whole: bool = True) -> str:
    """Said after why a write of ``events`` failed: none of them is stored (``whole``: a
    transaction, a new file, lands whole), or perhaps only some (lines appended), and
    the session's writer keeps every event it did not store."""
    first, last = events[0].seq, events[-1].seq
    which, them = (
        (f"event seq {last}", "it") if last == first else (f"events seq {first}-{last}", "them")
    )
    if whole:
        return (
            f"{which} of session {session_id!r} not stored (the running session keeps "
            f"{them}; its next save tries again)"
        )
    return (
        f"{which} of session {session_id!r} not stored, or not all of {them} (the running "
        f"session keeps {them}; its next save stores what is missing)"
    )
