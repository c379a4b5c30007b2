"""Claims of sessions held as locked files, for a store with no file per session (SQLite).

A claim is an open file in ``directory``, named by a hash of the session id, holding an
advisory ``flock`` (released by the OS when the process dies, so no claim outlives its
process). The file is removed when its claim ends; a process that opened it just
before finds, once it has the lock, that the name now leads elsewhere, and tries again.
"""

from __future__ import annotations

import hashlib
import os
import threading
from contextlib import suppress
from pathlib import Path

from dsh_persistence._files import LOCKS, try_lock_file

__all__ = ["ClaimFiles"]


class ClaimFiles:
    """The claims of one store: ``claim`` / ``release`` as ``SessionBackend`` has them."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._held: dict[str, int] = {}
        self._guard = threading.Lock()  # backends are called from worker threads

    def path(self, session_id: str) -> Path:
        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
        return self.directory / f"{digest[:40]}.lock"

    def claim(self, session_id: str) -> bool:
        """Hold the session's claim; False when another process (or another agent of
        this one) holds it. Without file locks (no ``fcntl``) every claim is granted."""
        with self._guard:
            if session_id in self._held:
                return False
            if not LOCKS:
                return True
            path = self.path(session_id)
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            while True:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
                try:
                    held = try_lock_file(fd)
                    current = held and _same_file(path, fd)
                except BaseException:
                    os.close(fd)
                    raise
                if current:
                    self._held[session_id] = fd
                    return True
                os.close(fd)
                if not held:
                    return False
                # its holder removed it between our open and our lock: lock the new one

    def holds(self, session_id: str) -> bool:
        """Whether this process holds the claim of ``session_id``."""
        return session_id in self._held

    def release(self, session_id: str) -> None:
        with self._guard:
            fd = self._held.pop(session_id, None)
            if fd is not None:
                self._let_go(session_id, fd)

    def close(self) -> None:
        with self._guard:
            held, self._held = self._held, {}
            for session_id, fd in held.items():
                self._let_go(session_id, fd)

    def _let_go(self, session_id: str, fd: int) -> None:
        """Remove the claim's file (still locked: no one else has it), then close it."""
        try:
            with suppress(OSError):  # gone, or cannot be removed: an empty file stays
                os.unlink(self.path(session_id))
        finally:
            os.close(fd)


def _same_file(path: Path, fd: int) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False
