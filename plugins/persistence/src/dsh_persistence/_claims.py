"""Lock files: claims of sessions for a store with no file per session (SQLite), and
the turns that writers holding no claim take so that they can tell a claim from another
such writer's append.

A lock file is an open file holding an advisory ``flock`` (released by the OS when the
process dies, so no lock outlives its process). It is removed when let go; a process
that opened it just before finds, once it has the lock, that the name now leads
elsewhere, and tries again.

A claim holds the session's lock for as long as its agent lives; a writer that holds no
claim takes the same lock only while it appends. Such writers first take their *turn*,
another lock file that they alone use, waiting for it: holding that, they meet no other
such writer at the session's lock, so a session lock held then is a claim, and the
append is refused at once rather than waiting for as long as the claim lasts.

A claim's file removed while held (a user tidying "stale" lock files) no longer keeps
another process out. So ``check``, before each write of a claimed session, looks (one
``stat``) that the path still leads to the file held: when it does not, the claim is
taken again, or, when another process holds it now, it is lost: ``check`` says so and
the claim is forgotten (as a PostgreSQL claim whose connection ended).

A process killed outright (``kill -9``, the OOM killer) lets go of its locks but removes
no file: ``remove_leftovers`` removes the ones no process holds, as the JSONL backend
removes its own (``_leftovers.remove_unheld``, which says why that is safe).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal

from dsh_persistence._files import LOCKS, leads_to, lock_file, still_leads_to, try_lock_file
from dsh_persistence._leftovers import LEFTOVER_AGE, remove_probe, remove_unheld

__all__ = ["BUSY_PAUSES", "ClaimFiles", "hold_lock_file", "let_go", "try_lock_awhile"]


#: The names ``ClaimFiles.path`` gives: a claim's ``<digest>.lock``, a turn's ``.turn``.
_LOCK_FILE = re.compile(r"[0-9a-f]{40}\.(?:lock|turn)")


#: The pauses (seconds, 31 ms in all) after which a lock file found held is tried again
#: while its name still leads to it, before it is taken as held by another
#: (``hold_lock_file``).
BUSY_PAUSES = (0.001, 0.002, 0.004, 0.008, 0.016)
#: How long (seconds, in pauses of ``BUSY_PAUSES[-1]``) a lock file this process has just
#: made (``O_EXCL``) and finds held is tried again while its name still leads to it: no
#: claim holds a file made an instant ago, only another process's cleanup (a delete's,
#: which removes it at once, unless that process is preempted: a busy machine) or,
#: rarely, a claimant of the same new session that opened it first, which holds it for
#: good: that claim is refused after this long (kept short for it, as ``claim`` waits
#: holding the store's guard).
MADE_PATIENCE = 0.5


def hold_lock_file(path: Path, *, wait: bool) -> int | None:
    """Open ``path`` (creating it) and lock it; the open file holding the lock. When
    another holds it: wait for it if ``wait``, else None. A file held only as it is
    removed (let go by its holder, or a leftover being removed) is no one's: the name
    leads elsewhere by then, and the file there is taken. Without ``wait``, a lock
    found held is tried again a few times (``BUSY_PAUSES``) while the name still leads
    to its file: another process's cleanup (``_leftovers.remove_unheld``: a ``prepare()``
    removing a kill's leftover, a delete) holds the lock of a file no one holds for the
    instant before it removes it, which is no claim to refuse this one for; one this
    call has just made, for ``MADE_PATIENCE`` (the cleanup may be preempted)."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0)
    while True:
        try:
            fd, made = os.open(path, flags | os.O_EXCL, 0o600), True
        except FileExistsError:
            fd, made = os.open(path, flags, 0o600), False
        try:
            if wait:
                lock_file(fd)
                held = True
            else:
                held = try_lock_awhile(path, fd, made=made)
            current = leads_to(path, fd)
        except BaseException:
            os.close(fd)
            raise
        if held and current:
            return fd
        os.close(fd)
        if current:  # held by another, still there
            return None
        # removed between our open and our lock (held meanwhile, or still): take the new


def try_lock_awhile(path: Path, fd: int, *, made: bool = False) -> bool:
    """Try to lock ``fd``, again after each of ``BUSY_PAUSES`` (and ``MADE_PATIENCE``
    more if ``made``) while ``path`` still leads to it (removed meanwhile: False, for the
    caller to take the file there)."""
    if try_lock_file(fd):
        return True
    pauses = list(BUSY_PAUSES)
    if made:
        pauses += [BUSY_PAUSES[-1]] * round(MADE_PATIENCE / BUSY_PAUSES[-1])
    for pause in pauses:
        time.sleep(pause)
        if not leads_to(path, fd):
            return False
        if try_lock_file(fd):
            return True
    return False


def let_go(path: Path, fd: int) -> None:
    """Remove a lock file held (no one else has it), then close it, ending its lock."""
    try:
        with suppress(OSError):  # gone, or cannot be removed: an empty file stays
            os.unlink(path)
    finally:
        os.close(fd)


class ClaimFiles:
    """The claims of one store: ``claim`` / ``release`` as ``SessionBackend`` has them,
    and ``unclaimed_write`` for a write by a writer that holds no claim."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        #: session id -> the open lock file held, and its (st_dev, st_ino)
        self._held: dict[str, tuple[int, tuple[int, int]]] = {}
        self._guard = threading.Lock()  # backends are called from worker threads

    def path(self, session_id: str, kind: str = "lock") -> Path:
        """The claim's file (``kind`` "turn": the turn of writers without a claim)."""
        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
        return self.directory / f"{digest[:40]}.{kind}"

    def claim(self, session_id: str) -> bool:
        """Hold the session's claim; False when another process (or another agent of
        this one) holds it. Without file locks (no ``fcntl``) every claim is granted."""
        with self._guard:
            if session_id in self._held:
                return False
            if not LOCKS:
                return True
            return self._take(session_id)

    def _take(self, session_id: str) -> bool:
        """Lock the session's file (under ``_guard``); False when another holds it."""
        self._make_directory()
        fd = hold_lock_file(self.path(session_id), wait=False)
        if fd is None:
            return False
        opened = os.fstat(fd)
        self._held[session_id] = (fd, (opened.st_dev, opened.st_ino))
        return True

    def _make_directory(self) -> None:
        """The claims' directory, and the database's if missing, private (0700)."""
        self.directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.directory.mkdir(mode=0o700, exist_ok=True)

    def holds(self, session_id: str) -> bool:
        """Whether this process holds the claim of ``session_id``."""
        return session_id in self._held

    def check(self, session_id: str) -> Literal["held", "unclaimed", "lost"]:
        """Before a write of ``session_id``: "unclaimed" when this process did not claim
        it; "held" when it does (taken again if its file was removed or replaced); "lost"
        when the file was removed and another process holds the claim now (it is
        forgotten: the session is this process's no more). ``OSError``: the directory
        cannot be used."""
        with self._guard:
            held = self._held.get(session_id)
            if held is None:
                return "unclaimed"
            try:
                there = os.stat(self.path(session_id))
                if (there.st_dev, there.st_ino) == held[1]:
                    return "held"
            except FileNotFoundError:
                pass
            del self._held[session_id]
            os.close(held[0])  # the lock of a file no longer there: no one meets it
            return "held" if self._take(session_id) else "lost"

    @contextmanager
    def unclaimed_write(self, session_id: str) -> Iterator[bool]:
        """Around a write by a writer that holds no claim of ``session_id``: wait for the
        other such writers' writes, then hold the claim until the write is done. Yields
        False, holding nothing, when a claim holds the session (another process's, or
        another agent's of this one): the write is to be refused."""
        if not LOCKS:
            yield True
            return
        self._make_directory()
        turn = self.path(session_id, "turn")
        fd = hold_lock_file(turn, wait=True)
        assert fd is not None  # waited for
        try:
            claimed = self.claim(session_id)
            try:
                yield claimed
            finally:
                if claimed:
                    self.release(session_id)
        finally:
            let_go(turn, fd)

    def release(self, session_id: str) -> None:
        with self._guard:
            held = self._held.pop(session_id, None)
            if held is not None:
                self._let_go(session_id, held)

    def _let_go(self, session_id: str, held: tuple[int, tuple[int, int]]) -> None:
        """Remove the claim's file if it is still the one held, and end its lock."""
        path = self.path(session_id)
        if not still_leads_to(path, held[0]):  # removed, another's now, or the directory
            os.close(held[0])  # cannot be looked in: not ours to remove
            return
        let_go(path, held[0])

    def remove_leftovers(self, session_id: str | None = None, *, age: float = LEFTOVER_AGE) -> None:
        """Remove the lock files a kill left (of ``session_id`` only, if given) that no
        process holds and that have not changed for ``age`` seconds (``remove_unheld``:
        a claim or turn held, by this process too, is kept), and the temp files of
        ``_sqlite_check``'s probe of the directory (``remove_probe``). Best effort:
        nothing is raised, nothing is created."""
        if session_id is not None:
            for kind in ("lock", "turn"):
                remove_unheld(self.path(session_id, kind), age=age)
            return
        try:
            entries = list(os.scandir(self.directory))
        except OSError:
            return
        for entry in entries:
            if _LOCK_FILE.fullmatch(entry.name):
                remove_unheld(Path(entry.path), age=age)
            else:
                remove_probe(entry, age=age)

    def close(self) -> None:
        with self._guard:
            held, self._held = self._held, {}
            for session_id, claim in held.items():
                self._let_go(session_id, claim)
