"""The ``SessionPersistence`` service: list, load and delete stored sessions."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import anyio.to_thread

from dsh_persistence._errors import PersistenceError, SessionConflictError, SessionInUseError
from dsh_persistence._writer import continues

if TYPE_CHECKING:
    from dsh.persistence import SessionHeader, StoredSession
    from dsh.session import SessionEvent
    from dsh_persistence._backend import LoadedSession, SessionBackend
    from dsh_persistence._claim_notes import ClaimNotes
    from dsh_persistence._settings import PersistenceSettings

__all__ = ["StoredSessions"]


class StoredSessions:
    """What ``session_persistence`` returns: a backend's sessions, read in worker threads
    so the event loop never waits on the disk. ``agents.resume`` loads through it.
    ``settings``: those the sessions it claims are written with (the asking harness's)."""

    def __init__(
        self,
        backend: SessionBackend,
        is_live: Callable[[str], bool] = lambda _: False,
        claims: ClaimNotes | None = None,
        settings: PersistenceSettings | None = None,
    ) -> None:
        self.backend = backend
        self._is_live = is_live
        self._claims = claims
        self._settings = settings

    @property
    def location(self) -> str | None:
        """The directory or database file of the backend (``SessionBackend.stored_in``):
        the optional ``location`` of ``dsh.persistence.SessionPersistence``."""
        stored_in = getattr(self.backend, "stored_in", None)
        return stored_in if isinstance(stored_in, str) else None

    async def list(self) -> list[SessionHeader]:
        """Every stored session, most recently updated first (headers only); those the
        store cannot read (``error``) after the others: the first is one that can be
        continued, when there is one."""
        headers = await anyio.to_thread.run_sync(self.backend.headers)
        return sorted(headers, key=lambda header: (bool(header.error), -header.updated, header.id))

    async def load(self, session_id: str) -> StoredSession | None:
        """The stored log, with an interrupted last turn closed (see ``inspect``)."""
        loaded = await self.inspect(session_id)
        return None if loaded is None else loaded.stored

    async def inspect(self, session_id: str) -> LoadedSession | None:
        """``load`` with what loading did: events kept, records ignored, closers added."""
        if not _is_text(session_id):
            return None
        return await anyio.to_thread.run_sync(self.backend.load, session_id)

    async def claim(self, session_id: str, events: Sequence[SessionEvent] = ()) -> None:
        """Reserve a session for an agent of this process, ``events`` its log so far (the
        core calls this as the agent is created or resumed): ``SessionInUseError`` when
        another process continues it, or continued it since ``events`` were loaded;
        ``SessionConflictError`` when a new session's id is stored already; another
        ``PersistenceError`` when the session could not be claimed or saved there. The claim
        ends when the agent is disposed (or ``release``). A caller cancelled meanwhile
        holds nothing: asyncio's own cancellation (``wait_for``, ``task.cancel()``) does
        not wait for the worker thread, so the claim it takes is let go again."""
        # noted before the thread starts: the session's writer, made later, writes to the
        # store its claim is in, with this service's settings (a harness started meanwhile
        # may choose another store, or the same one with other settings)
        claims = self._claims
        settings, backend = self._settings, self.backend
        note = None if claims is None else claims.note(settings, backend, session_id, events)
        call = _Call()
        try:
            try:
                await anyio.to_thread.run_sync(self._claim, session_id, events, call)
            except anyio.get_cancelled_exc_class():
                with call.lock:
                    call.abandoned = True
                    taken = call.taken
                if taken:  # the thread was done, its result not yet delivered
                    with anyio.CancelScope(shield=True):
                        await anyio.to_thread.run_sync(self.backend.release, session_id)
                raise
        except BaseException:
            if claims is not None:
                claims.drop(note)
            raise

    def _claim(self, session_id: str, events: Sequence[SessionEvent], call: _Call) -> None:
        # A session that cannot be claimed, new or resumed, is not run (fail closed):
        # what it did could not be saved (an id no file can be named after, a claims
        # directory that cannot be made, a store that cannot be read)
        self._claim_stored(session_id, events)
        with call.lock:
            if not call.abandoned:
                call.taken = True
                return
        self.backend.release(session_id)  # the caller was cancelled: nobody holds it

    def _claim_stored(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        backend = self.backend
        if not backend.claim(session_id):
            raise SessionInUseError(
                f"session {session_id!r} is in use: another process or harness is continuing it "
                f"(stored in {backend.location}); try again when it is done"
            )
        try:
            tail = backend.tail(session_id)
            if tail is not None and not continues(events, tail):
                if not events:
                    raise SessionConflictError(
                        f"session {session_id!r} is stored already (in {backend.location}): "
                        "resume it, or give the new agent another session id"
                    )
                raise SessionInUseError(
                    f"session {session_id!r} changed since it was loaded: another process "
                    "or harness continued it meanwhile; try again"
                )
        except BaseException:
            backend.release(session_id)
            raise

    async def release(self, session_id: str) -> None:
        """End the claim of ``session_id`` (nothing if this process holds none)."""
        if self._claims is not None:
            self._claims.released(self.backend, session_id)
        await anyio.to_thread.run_sync(self.backend.release, session_id)

    async def in_use(self, session_id: str) -> bool:
        """Whether another process holds the claim of ``session_id`` (continues it now):
        its claim is tried, and let go at once. False when the claim cannot be tried (a
        file this process may not write): nothing says the session runs then."""

        def probe() -> bool:
            try:
                if not self.backend.claim(session_id):
                    return True
            except PersistenceError:
                return False
            self.backend.release(session_id)
            return False

        return await anyio.to_thread.run_sync(probe)

    async def delete(self, session_id: str) -> bool:
        """Remove a stored session; refuses one that an agent of this process is writing."""
        return (await self.delete_counting(session_id))[0]

    async def delete_counting(self, session_id: str) -> tuple[bool, int]:
        """``delete``, and how many events it deleted that no stored session held (a
        database's rows of ``session_id`` left without their sessions row)."""
        if self._is_live(session_id):
            raise PersistenceError(
                f"session {session_id!r} is live in this process; dispose its agent first"
            )
        if not _is_text(session_id):
            return False, 0
        counting = _counting_delete(self.backend)  # SQLite's, PostgreSQL's
        if counting is None:
            return await anyio.to_thread.run_sync(self.backend.delete, session_id), 0
        deleted: tuple[bool, int] = await anyio.to_thread.run_sync(counting, session_id)
        return deleted


def _counting_delete(backend: SessionBackend) -> Callable[[str], tuple[bool, int]] | None:
    """``backend.delete_counting`` (SQLite's, PostgreSQL's), unless its class overrides
    ``delete`` in a subclass of the one that defines ``delete_counting``: that
    ``delete`` is the one to honour then (it may do more, or refuse)."""
    mro = type(backend).__mro__
    counting = next((n for n, cls in enumerate(mro) if "delete_counting" in vars(cls)), None)
    deleting = next((n for n, cls in enumerate(mro) if "delete" in vars(cls)), len(mro))
    if counting is None or counting > deleting:
        return None
    found: Callable[[str], tuple[bool, int]] = getattr(backend, "delete_counting")  # noqa: B009
    return found


def _is_text(session_id: str) -> bool:
    """Whether ``session_id`` is valid text: one that is not (a lone surrogate, from a
    non-UTF-8 argument) names no stored session, as no backend can store it."""
    try:
        session_id.encode()
    except UnicodeEncodeError:
        return False
    return True


class _Call:
    """One ``claim`` call, shared with its worker thread: whether the thread took the
    claim, and whether the caller stopped waiting for it (cancelled)."""

    __slots__ = ("abandoned", "lock", "taken")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.taken = False
        self.abandoned = False
