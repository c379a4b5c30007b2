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
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from dsh_persistence._files import LOCKS, leads_to, lock_file, try_lock_file

__all__ = ["ClaimFiles", "hold_lock_file", "let_go"]


def hold_lock_file(path: Path, *, wait: bool) -> int | None:
    """Open ``path`` (creating it) and lock it; the open file holding the lock. When
    another holds it: wait for it if ``wait``, else None."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
        try:
            if wait:
                lock_file(fd)
                held = True
            else:
                held = try_lock_file(fd)
            current = held and leads_to(path, fd)
        except BaseException:
            os.close(fd)
            raise
        if current:
            return fd
        os.close(fd)
        if not held:
            return None
        # its holder removed it between our open and our lock: lock the new one


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
        self._held: dict[str, int] = {}
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
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = hold_lock_file(self.path(session_id), wait=False)
            if fd is None:
                return False
            self._held[session_id] = fd
            return True

    def holds(self, session_id: str) -> bool:
        """Whether this process holds the claim of ``session_id``."""
        return session_id in self._held

    @contextmanager
    def unclaimed_write(self, session_id: str) -> Iterator[bool]:
        """Around a write by a writer that holds no claim of ``session_id``: wait for the
        other such writers' writes, then hold the claim until the write is done. Yields
        False, holding nothing, when a claim holds the session (another process's, or
        another agent's of this one): the write is to be refused."""
        if not LOCKS:
            yield True
            return
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
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
            fd = self._held.pop(session_id, None)
            if fd is not None:
                let_go(self.path(session_id), fd)

    def close(self) -> None:
        with self._guard:
            held, self._held = self._held, {}
            for session_id, fd in held.items():
                let_go(self.path(session_id), fd)
