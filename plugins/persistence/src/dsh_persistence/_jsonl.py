"""The JSONL backend (the default): one append-only file per session.

Line 1 is the header, every further line one event (``SessionEvent.to_json_bytes()``)::

    {"format":"dsh-session","version":1,"id":"...","created":...,"cwd":"...",
     "title":"...","parent":null,"seed_length":null,"meta":{}}
    {"type":"turn/start","seq":0,"time":...,"data":{"turn":1}}
    ...
    {"type":"turn/end",...,"data":{...},"cwd":"/b"}  (a turn of a run in another workspace)

A new file is published whole (temp file, fsync, link, fsync of the directory), so a
file always has its header. Appends happen under the file's advisory lock (held by the
session's claim, or by a writer without one while it appends: ``_claims``), at the end
of the readable prefix (a torn or unfinished tail left by a crash is cut off first).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

from dsh.errors import exception_words
from dsh.persistence import SessionHeader, StoredSession
from dsh.session import SessionEvent
from dsh_persistence._backend import (
    FORK_KEYS,
    LoadedSession,
    SessionBackend,
    SessionInfo,
    StoredTail,
    check_contiguous,
    encode_events,
)
from dsh_persistence._claims import let_go
from dsh_persistence._errors import (
    NotASessionError,
    PersistenceError,
    SessionConflictError,
    unstored,
)
from dsh_persistence._files import (
    SUFFIX,
    denied,
    file_name,
    fsync_directory,
    may,
    open_regular,
    probe_directory,
    publish,
    session_id_of,
    write_lines,
)
from dsh_persistence._header import header_line, named_as, summary, tag_workspace
from dsh_persistence._jsonl_locks import PENDING, FileLocks, turn_path
from dsh_persistence._leftovers import remove_leftovers
from dsh_persistence._session_file import FileEnd, SessionFile, mend_tail, read_session_file

__all__ = ["JsonlBackend"]

_PATHS_KEPT = 4096  # file paths remembered by session id (computing one is not free)
#: File ends remembered (so an append after a load need not read the file again); past
#: this many, a load forgets the oldest (a service reading many sessions keeps no more).
#: The ends of sessions this process holds a claim of are kept besides: it writes them.
_ENDS_KEPT = 1024


class JsonlBackend(FileLocks, SessionBackend):
    """Sessions as ``<directory>/<id>.jsonl``. ``fsync=False`` never waits for the disk.
    ``source`` names the setting the directory comes from, for messages."""

    appends_cheaply = True  # a non-durable append is one write(2) to an open file

    def __init__(
        self, directory: str | os.PathLike[str], *, fsync: bool = True, source: str = ""
    ) -> None:
        self.directory = Path(directory)
        self.location = str(self.directory)
        self.stored_in = os.path.abspath(self.directory)
        self._source = source
        self._fsync = fsync
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._ends: dict[str, FileEnd] = {}
        self._paths: dict[str, Path] = {}
        #: The sessions this process writes: an open file each, holding its lock (or
        #: ``PENDING`` until the file is made).
        self._claims: dict[str, int] = {}
        #: The claims of sessions not stored yet: the open lock file (``claim_path``) each.
        self._pending: dict[str, int] = {}

    def path(self, session_id: str) -> Path:
        path = self._paths.get(session_id)
        if path is None:
            if len(self._paths) >= _PATHS_KEPT:
                self._paths.clear()
            path = self._paths[session_id] = self.directory / file_name(session_id)
        return path

    def forget(self, session_id: str) -> None:
        with self._guard:
            self._ends.pop(session_id, None)
            lock = self._locks.get(session_id)
            if lock is not None and not lock.locked():
                del self._locks[session_id]

    def _lock(self, session_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(session_id, threading.Lock())

    def _failed(
        self, exc: OSError, doing: str, path: Path | None = None, unstored: str = ""
    ) -> PersistenceError:
        """``exc`` as a PersistenceError saying what failed, on which path, and why (and
        then ``unstored``: what was not stored). When the directory itself is the problem,
        the message names it and its setting."""
        reason = exc.strerror or str(exc)
        if unstored:
            reason = f"{reason}; {unstored}"
        usable = os.path.isdir(self.directory) and not isinstance(exc, NotADirectoryError)
        if path is not None and usable:  # the file is the problem
            return PersistenceError(f"{path}: cannot {doing}: {reason}")
        if path is None and isinstance(exc, FileExistsError):
            reason = "it exists and is not a directory"
        source = f" ({self._source})" if self._source else ""
        target = "" if path is None else f" {path}"
        return PersistenceError(
            f"{self.directory}{source} is not a usable session directory: cannot {doing}"
            f"{target}: {reason}"
        )

    def prepare(self) -> None:
        """Create the directory (private) if needed, and check that files can be made in it."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise self._failed(exc, "create it") from exc
        if not may(self.directory, os.W_OK | os.X_OK):
            raise self._failed(denied(), "create files in it")
        try:  # what access() does not know: /proc, a read-only mount, root's own limits
            probe_directory(self.directory)
        except OSError as exc:
            raise self._failed(exc, "create files in it") from exc
        # temp files of publishes a kill cut short, lock files of claims and turns a kill
        # ended
        remove_leftovers(self.directory)

    # -- writing -------------------------------------------------------------------------

    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        if not events:
            return
        check_contiguous(events, info.id)
        lines = encode_events(events, info.id)
        path = self.path(info.id)
        with self._lock(info.id):
            opened = self._open_to_append(info.id, path, events)
            if opened is None:
                self._ends.pop(info.id, None)
                self._create(info, path, lines, events)
                return
            fd, turn = opened
            try:
                stat = os.fstat(fd)
                end = self._ends.get(info.id)
                if end is None or (end.inode, end.size) != (stat.st_ino, stat.st_size):
                    end = self._read(info.id, path).end
                if events[0].seq != end.next_seq:
                    raise SessionConflictError(
                        f"{path}: cannot append seq {events[0].seq}: the stored log ends "
                        f"at seq {end.next_seq - 1}, so the next is {end.next_seq} (another "
                        "writer, or a stale session); nothing was written"
                    )
                if info.cwd != end.cwd:  # a run in another workspace than the first
                    lines = tag_workspace(lines, events, info.cwd)
                if end.valid < end.size:  # the torn tail of a crashed write, or the
                    end = mend_tail(fd, end)  # last line saved without its line end
                written = write_lines(fd, lines, end.valid)
                if durable and self._fsync:
                    os.fsync(fd)
            except OSError as exc:
                self._ends.pop(info.id, None)
                kept = unstored(info.id, events, whole=False)  # lines written may stay
                raise self._failed(exc, "append to the session file", path, kept) from exc
            except BaseException:
                self._ends.pop(info.id, None)
                raise
            finally:
                os.close(fd)
                if turn is not None:
                    let_go(turn_path(path), turn)
            size = end.valid + written
            last = events[-1]
            self._ends[info.id] = FileEnd(stat.st_ino, size, size, last.seq + 1, last, end.cwd)

    def _create(
        self, info: SessionInfo, path: Path, lines: list[bytes], events: Sequence[SessionEvent]
    ) -> None:
        if events[0].seq != 0:
            raise SessionConflictError(
                f"{path}: session {info.id!r} is not stored, so its log must start at seq 0, "
                f"not {events[0].seq} (was the file deleted?); nothing was written"
            )
        header = header_line(info)[:-1]  # written with its newline by ``publish``
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise self._failed(exc, "create it", unstored=unstored(info.id, events)) from exc
        # claimed: the new file is locked before it appears (a claim whose file was
        # removed, by its holder or a program that takes no lock, holds the new one)
        claimed = info.id in self._claims
        with self._publishing(info.id, path, events):
            try:
                stat, held = publish(path, [header, *lines], fsync=self._fsync, hold=claimed)
            except OSError as exc:
                kept = unstored(info.id, events)
                raise self._failed(exc, "create the session file", path, kept) from exc
        if held is not None:
            previous = self._claims.get(info.id, PENDING)
            self._claims[info.id] = held
            if previous != PENDING:
                os.close(previous)
        size = len(header) + 1 + sum(len(line) + 1 for line in lines)
        self._ends[info.id] = FileEnd(stat.st_ino, size, size, len(events), events[-1], info.cwd)

    def sync(self, session_id: str) -> None:
        if not self._fsync:
            return
        path = self.path(session_id)
        with self._lock(session_id):
            try:
                fd = open_regular(path)
            except FileNotFoundError:
                return
            except OSError as exc:
                raise self._failed(exc, "open the session file", path) from exc
            try:
                os.fsync(fd)
            except OSError as exc:
                raise self._failed(exc, "sync the session file", path) from exc
            finally:
                os.close(fd)

    def delete(self, session_id: str) -> bool:
        if not _nameable(session_id):  # no file holds it: not stored, as in a database
            return False
        path = self.path(session_id)
        with self._lock(session_id):
            self._ends.pop(session_id, None)
            try:
                self._unlink_unclaimed(session_id, path)
            except FileNotFoundError:  # a temp file now may be a first publish elsewhere
                remove_leftovers(self.directory, of=path.name)
                return False
            except OSError as exc:
                raise self._failed(exc, "delete the session file", path) from exc
            # a temp file of the session's first publish that a kill cut short holds
            # its first prompt: gone with the session (its process is not running), as
            # the lock file of its claim a kill left between that publish's link and
            # the file's removal, and of its turn a kill left mid-append (unless a process
            # holds it: a claim taken meanwhile, an append waiting to find it deleted)
            remove_leftovers(self.directory, of=path.name, age=0)
            if self._fsync:
                try:
                    fsync_directory(self.directory)
                except OSError as exc:
                    raise self._failed(exc, "sync it after deleting", path) from exc
            return True

    # -- reading -------------------------------------------------------------------------

    def tail(self, session_id: str) -> StoredTail | None:
        with self._lock(session_id):
            path = self.path(session_id)
            try:
                stat = os.stat(path)
                end = self._ends.get(session_id)
                if end is None or (end.inode, end.size) != (stat.st_ino, stat.st_size):
                    end = self._read(session_id, path).end
            except FileNotFoundError:
                self._ends.pop(session_id, None)
                return None
            except OSError as exc:
                raise self._failed(exc, "read the session file", path) from exc
            return StoredTail(end.next_seq, end.last)

    def load(self, session_id: str) -> LoadedSession | None:
        path = self.path(session_id)
        with self._lock(session_id):
            try:
                header, events, closers, dropped, _ = self._read(session_id, path)
            except FileNotFoundError:
                self._ends.pop(session_id, None)
                return None
            except OSError as exc:
                raise self._failed(exc, "read the session file", path) from exc
        meta = dict(header.get("meta") or {})
        meta.update({key: header[key] for key in FORK_KEYS if header.get(key) is not None})
        created = header.get("created")
        stored = StoredSession(
            session_id,
            float(created) if isinstance(created, int | float) else 0.0,
            events + closers,
            meta,
        )
        return LoadedSession(stored, len(events), dropped, len(closers))

    def _read(self, session_id: str, path: Path) -> SessionFile:
        """``read_session_file``, remembering where the file ends."""
        found = read_session_file(session_id, path)
        self._ends.pop(session_id, None)
        self._make_room()
        self._ends[session_id] = found.end
        return found

    def _make_room(self) -> None:
        """With ``_ENDS_KEPT`` ends of unclaimed sessions remembered, forget the oldest
        (one more read if it is written). The end of a session this process claims is
        kept, moved to the back: its every append would read the whole file again. So
        ``_ENDS_KEPT`` ends at most, and one per claim held (an end released is forgotten
        as the others, and the plugin forgets it when the agent is disposed)."""
        with self._guard:  # other sessions' threads change the dict meanwhile
            moves = len(self._ends)  # each claimed end is moved back once at most
            while self._ends and len(self._ends) - len(self._claims) >= _ENDS_KEPT:
                oldest = next(iter(self._ends))
                if oldest not in self._claims:
                    self._ends.pop(oldest, None)
                    continue
                if not moves:  # all claimed (claims made since the count began)
                    return
                moves -= 1
                end = self._ends.pop(oldest, None)
                if end is not None:
                    self._ends.setdefault(oldest, end)  # unless its writer set a newer one

    def headers(self) -> list[SessionHeader]:
        try:
            entries = list(os.scandir(self.directory))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise self._failed(exc, "list it") from exc
        found = []
        for entry in entries:
            if entry.name.startswith(".") or not entry.name.endswith(SUFFIX):
                continue
            named = session_id_of(entry.name)
            try:
                found.append(named_as(summary(entry.path), named, entry.path))
            except FileNotFoundError:
                continue  # deleted meanwhile
            except (OSError, PersistenceError) as exc:
                if isinstance(exc, OSError):  # said as every other read failure is
                    exc = self._failed(exc, "read the session file", Path(entry.path))
                foreign = isinstance(exc, NotASessionError)
                found.append(SessionHeader(named, 0.0, 0.0, 0, error=str(exc), foreign=foreign))
            except Exception as exc:  # damage no check foresaw: one file, not the list
                said = f"{entry.path}: cannot read it ({exception_words(exc)})"
                found.append(SessionHeader(named, 0.0, 0.0, 0, error=said))
        return found


def _nameable(session_id: str) -> bool:
    """Whether ``session_id`` can be a file name (not empty, not too long, valid text):
    a session whose id cannot is never stored here."""
    try:
        file_name(session_id)
    except PersistenceError:
        return False
    return True
