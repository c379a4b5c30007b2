"""Who may write a session file of the JSONL backend: claims, the turns of writers
without one, and what they check once they hold the file's lock (``_claims`` explains
the locks).

A claim is the file's advisory lock, held from ``claim`` to ``release``. A session not
stored yet has no file: its claim is a lock file beside where that will be
(``claim_path``), held until its file is made (locked before it appears) and then
removed (one a kill left, that no process holds, is removed by ``remove_leftovers``:
as the store is prepared, once old, and as its session is deleted). Every first
publish of a session file holds that lock file (``_publishing``), so no other process
claims or stores the session meanwhile. A writer without a claim
opens the file, takes its turn, then the file's lock; a delete by another process can
come in between, so once locked it checks that the path still leads to the file it
opened (``_open_to_append``). The turn's lock file (``turn_path``) is removed as it is
let go; one a kill left mid-append is removed as a claim's is, when no process holds it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from dsh_persistence._claims import hold_lock_file, let_go, try_lock_awhile
from dsh_persistence._errors import (
    PersistenceError,
    SessionConflictError,
    SessionDeletedError,
    SessionInUseError,
    unstored,
)
from dsh_persistence._files import LOCKS, leads_to, open_regular, still_leads_to, try_lock_file
from dsh_persistence._session_file import check_session_file

if TYPE_CHECKING:
    from dsh.session import SessionEvent

__all__ = ["PENDING", "FileLocks", "claim_path", "turn_path"]

#: In ``_claims``: the session is claimed and not stored yet; its lock file (``claim_path``,
#: in ``_pending``) holds the claim until its file is made, locked then.
PENDING = -1


class FileLocks:
    """The claims and locks of ``JsonlBackend`` (mixed into it)."""

    #: The sessions this process writes: an open file each, holding its lock (or
    #: ``PENDING`` until the file is made).
    _claims: dict[str, int]
    #: The claims of sessions not stored yet: the open lock file (``claim_path``) each.
    _pending: dict[str, int]
    _guard: threading.Lock
    directory: Path

    if TYPE_CHECKING:

        def path(self, session_id: str) -> Path: ...

        def _lock(self, session_id: str) -> threading.Lock: ...

        def _failed(
            self, exc: OSError, doing: str, path: Path | None = None, unstored: str = ""
        ) -> PersistenceError: ...

    def claim(self, session_id: str) -> bool:
        """Hold the lock of the session's file (an advisory ``flock``) until ``release``:
        other processes can neither claim the session nor append to it or delete it. The
        file is opened for writing, so one this process may not write is refused (a
        ``PersistenceError`` naming it) before the session's agent runs anything. A
        session not stored yet is claimed by its lock file (``_claim_unstored``) until
        its file is made, locked before it appears."""
        if not LOCKS:  # no advisory locks here (Windows): no claims
            return True
        path = self.path(session_id)
        with self._lock(session_id):
            if session_id in self._claims:  # an agent of another harness of this process
                return False
            while True:
                try:  # for writing: a file this process may not write is refused now
                    fd = open_regular(path, os.O_WRONLY)
                except (FileNotFoundError, NotADirectoryError):  # not stored (here)
                    claimed = self._claim_unstored(session_id, path)
                    if claimed is None:  # stored meanwhile: its file's lock is the claim
                        continue
                    return claimed
                except OSError as exc:
                    raise self._failed(exc, "open the session file to write", path) from exc
                try:
                    held = try_lock_file(fd)
                    current = held and leads_to(path, fd)
                except OSError as exc:  # no locks on this file system (ENOLCK), say
                    os.close(fd)
                    raise self._failed(exc, "lock the session file", path) from exc
                if current:
                    self._claims[session_id] = fd
                    return True
                os.close(fd)
                if not held:
                    return False
                # deleted since it was opened (and maybe stored anew): its lock would
                # hold nothing, and leave a new file free for another claim

    def _claim_unstored(self, session_id: str, path: Path) -> bool | None:
        """Claim a session that has no file (under its ``_lock``): hold its lock file,
        ``claim_path`` (made, with the directory if missing), until its file is made or
        the claim released. False when another holds it; None when the session's file
        appeared meanwhile (its creator holds the lock file until the file is there):
        that file's lock is the session's claim now."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise self._failed(exc, "create it") from exc
        pending = claim_path(path)
        try:
            fd = hold_lock_file(pending, wait=False)
        except OSError as exc:
            raise self._failed(exc, "lock it to claim the session", pending) from exc
        if fd is None:
            return False
        if os.path.exists(path):
            let_go(pending, fd)
            return None
        self._claims[session_id] = PENDING
        self._pending[session_id] = fd
        return True

    @contextmanager
    def _publishing(
        self, session_id: str, path: Path, events: Sequence[SessionEvent]
    ) -> Iterator[None]:
        """Around the publish of a session's first file (under its ``_lock``): hold the
        lock file a claim of a session not stored holds, so that no other process claims
        or stores the session meanwhile, and let it go once the file is there (locked by
        the claim, if any). A claim holds it already (taken again if it was removed
        meanwhile, a user tidying, while no other process took it). A writer without a
        claim first takes its turn (``_lock_unclaimed``), so that two such writers meet
        as a conflict when they store one session at once. Another process's claim:
        ``SessionInUseError``, nothing written. A lock that fails says that ``events``
        are not stored (and kept)."""
        if not LOCKS:
            yield
            return
        claimed = session_id in self._claims
        turns = turn_path(path)
        pending = claim_path(path)
        turn = None
        try:
            if not claimed:
                turn = hold_lock_file(turns, wait=True)
            held = self._pending.pop(session_id, None)
            if held is not None and not still_leads_to(pending, held):
                os.close(held)  # removed: no one else meets it
                held = None
            if held is None:
                held = hold_lock_file(pending, wait=False)
        except OSError as exc:
            if turn is not None:
                let_go(turns, turn)
            kept = unstored(session_id, events)
            raise self._failed(exc, "lock it to store the session", pending, kept) from exc
        try:
            if held is None:
                raise SessionInUseError(
                    f"{path}: cannot store session {session_id!r}: another process or "
                    "harness is continuing it (it holds the session's claim); nothing was "
                    "written"
                )
            stored = False
            try:
                yield
                stored = True
            finally:
                if claimed and not stored:  # the claim goes on, holding it
                    self._pending[session_id] = held
                else:
                    self._let_go_pending(path, held)
        finally:
            if turn is not None:
                let_go(turns, turn)

    def _let_go_pending(self, path: Path, fd: int) -> None:
        """End the lock of ``claim_path(path)`` held as ``fd``, removing the file if it
        is still the one held (one made anew since is another's)."""
        pending = claim_path(path)
        if still_leads_to(pending, fd):
            let_go(pending, fd)
        else:
            os.close(fd)

    def release(self, session_id: str) -> None:
        with self._lock(session_id):
            fd = self._claims.pop(session_id, PENDING)
            if fd != PENDING:
                os.close(fd)
            pending = self._pending.pop(session_id, None)
            if pending is not None:
                self._let_go_pending(self.path(session_id), pending)

    def close(self) -> None:
        with self._guard:
            claims, self._claims = self._claims, {}
            pending, self._pending = self._pending, {}
        for fd in claims.values():
            if fd != PENDING:
                os.close(fd)
        for session_id, fd in pending.items():
            self._let_go_pending(self.path(session_id), fd)

    def _open_to_append(
        self, session_id: str, path: Path, events: Sequence[SessionEvent]
    ) -> tuple[int, int | None] | None:
        """The session file, open to append to and locked for it: (the open file, the
        turn's lock file to let go once it is closed, or None), or None when there is no
        file. Without a claim the file is opened before its lock is taken, so a delete
        by another process can come in between: once locked, the path must still lead
        to the file opened. When no file is there any more, the append fails
        (``SessionDeletedError``: nothing goes into a file no one can read again, and
        the caller still has its events) unless it starts a session (seq 0); when
        another file took the name, that one is appended to, as if opened after the
        delete. A failure to open or lock it says that ``events`` are not stored (and
        that the caller keeps them)."""
        deleted = False
        while True:
            try:
                fd = open_regular(path, os.O_WRONLY)
            except FileNotFoundError:
                if deleted and events[0].seq != 0:
                    raise SessionDeletedError(
                        f"{path}: cannot append to session {session_id!r}: it was deleted "
                        "while this append waited for its lock; nothing was written (store "
                        "its whole log again, from seq 0, to keep it)"
                    ) from None
                return None
            except OSError as exc:
                kept = unstored(session_id, events)
                raise self._failed(exc, "open the session file", path, kept) from exc
            claimed = self._claims.get(session_id, PENDING)
            if claimed != PENDING:  # our claim holds its lock: no other process deletes it
                if _same_file(fd, claimed):
                    return fd, None
                os.close(fd)  # unless it takes no lock (rm, a version before claims)
                raise SessionConflictError(
                    f"{path}: cannot append to session {session_id!r}: its file was "
                    "deleted or replaced while this process held its claim (by a program "
                    "that takes no lock: a sync or backup tool, an editor); nothing was "
                    "written: end this agent and resume the session to go on from the file"
                )
            turn: int | None = None
            try:
                turn = self._lock_unclaimed(session_id, path, fd, events)
                if turn is None or leads_to(path, fd):  # no locks (Windows): no check
                    return fd, turn
            except BaseException as exc:
                os.close(fd)
                if turn is not None:
                    let_go(turn_path(path), turn)
                if isinstance(exc, OSError):
                    kept = unstored(session_id, events)
                    raise self._failed(exc, "lock the session file", path, kept) from exc
                raise
            os.close(fd)
            let_go(turn_path(path), turn)
            deleted = True

    def _lock_unclaimed(
        self, session_id: str, path: Path, fd: int, events: Sequence[SessionEvent]
    ) -> int | None:
        """Lock the session file ``fd`` for an append by a writer that holds no claim of
        it: first wait for the other such writers' appends (their turn: ``_claims``), then
        lock it, or refuse if it stays locked while it is there (``try_lock_awhile``): a
        claim holds it (a delete holds it only as it removes the file: the caller then
        finds it gone). Returns the turn's open lock file (None without locks), let go
        once ``fd`` is closed. A lock that fails says that ``events`` are not stored."""
        if not LOCKS:
            return None
        turns = turn_path(path)
        try:
            turn = hold_lock_file(turns, wait=True)
        except OSError as exc:
            kept = unstored(session_id, events)
            raise self._failed(exc, "lock it to append to the session", turns, kept) from exc
        assert turn is not None  # waited for
        try:
            held = try_lock_file(fd) or try_lock_awhile(path, fd)
            if not held and leads_to(path, fd):
                raise SessionInUseError(
                    f"{path}: cannot append to session {session_id!r}: another process or "
                    "harness is continuing it (it holds the session's claim); nothing was "
                    "written"
                )
        except BaseException:
            let_go(turns, turn)
            raise
        return turn

    def _unlink_unclaimed(self, session_id: str, path: Path) -> None:
        """Remove the file, holding its lock, unless another process holds that. The file
        locked must be the one removed: one stored anew after the file opened was deleted
        is locked in its turn (a claim may hold it)."""
        claimed = self._claims.get(session_id, PENDING)
        if not LOCKS or claimed != PENDING:
            if claimed == PENDING:  # no claims here: the header is read all the same
                with open(path, "rb") as file:
                    check_session_file(file.fileno(), path, "deleted")
                os.unlink(path)
                return
            # ours (the service refuses a live session): its lock holds a removed file,
            # so the claim goes on as one of a session not stored, taken before it goes
            pending = hold_lock_file(claim_path(path), wait=False)
            try:
                os.unlink(path)
            except BaseException:
                if pending is not None:
                    let_go(claim_path(path), pending)
                raise
            self._claims[session_id] = PENDING
            os.close(claimed)
            if pending is not None:
                self._pending[session_id] = pending
            return
        while True:
            fd = open_regular(path)
            try:
                held = try_lock_file(fd) or try_lock_awhile(path, fd)
                if not held and leads_to(path, fd):
                    raise SessionInUseError(_delete_refused(path))
                if leads_to(path, fd):
                    check_session_file(fd, path, "deleted")
                    os.unlink(path)
                    return
            finally:
                os.close(fd)
            # deleted since it was opened: the file there now (if any) is the session


def _delete_refused(path: Path) -> str:
    """Why a delete (holding no claim) found the session file held: an append holding
    no claim, in its turn (``_lock_unclaimed``), holds it while it writes; else a claim."""
    if _held(turn_path(path)):
        return (
            f"{path}: cannot delete the session: it is being written by another process "
            "(an append holding no claim); nothing was deleted: try again"
        )
    return f"{path}: cannot delete the session: another process or harness is continuing it"


def _held(path: Path) -> bool:
    """Whether another open file holds the lock of the lock file ``path`` (False when
    there is none)."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return not try_lock_file(fd)
    finally:
        os.close(fd)  # and a lock taken ends with it


def _same_file(fd: int, other: int) -> bool:
    """Whether two open files are one."""
    one, two = os.fstat(fd), os.fstat(other)
    return (one.st_dev, one.st_ino) == (two.st_dev, two.st_ino)


def turn_path(path: Path) -> Path:
    """The lock file writers holding no claim of the session take turns on."""
    return path.with_name(f".{path.name}.lock")


def claim_path(path: Path) -> Path:
    """The lock file of the claim of a session whose file ``path`` is not made yet."""
    return path.with_name(f".{path.name}.claim")
