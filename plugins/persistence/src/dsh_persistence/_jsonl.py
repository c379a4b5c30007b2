"""The JSONL backend (the default): one append-only file per session.

Line 1 is the header, every further line one event (``SessionEvent.to_json()``)::

    {"format":"dsh-session","version":1,"id":"...","created":...,"cwd":"...",
     "title":"...","parent":null,"seed_length":null,"meta":{}}
    {"type":"turn/start","seq":0,"time":...,"data":{"turn":1}}
    ...

A new file is published whole (temp file, fsync, link, fsync of the directory), so a
file always has its header. Appends happen under an advisory lock, at the end of the
readable prefix (a torn or unfinished tail left by a crash is cut off first).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh.persistence import SessionHeader, StoredSession
from dsh.session import SessionEvent
from dsh_persistence._backend import (
    FORK_KEYS,
    LoadedSession,
    SessionBackend,
    SessionInfo,
    StoredTail,
    check_contiguous,
)
from dsh_persistence._errors import (
    PersistenceError,
    SessionConflictError,
    SessionCorruptError,
    SessionFormatError,
)
from dsh_persistence._files import (
    SUFFIX,
    file_name,
    fsync_directory,
    lock_file,
    publish,
    read_at,
    session_id_of,
    write_all,
)
from dsh_persistence._records import close_turn, read_log

__all__ = ["FORMAT", "VERSION", "JsonlBackend"]

FORMAT = "dsh-session"
#: The newest header version this code reads and the one it writes.
VERSION = 1
_HEADER_LIMIT = 1 << 20
_TAIL_BLOCK = 4096
_PATHS_KEPT = 4096  # file paths remembered by session id (computing one is not free)


@dataclass(frozen=True, slots=True)
class _FileEnd:
    """What this process last saw of a session file, valid while (inode, size) match."""

    inode: int
    size: int
    valid: int  # bytes of the header and the readable prefix; the rest is cut on append
    next_seq: int
    last: SessionEvent | None


class JsonlBackend(SessionBackend):
    """Sessions as ``<directory>/<id>.jsonl``. ``fsync=False`` never waits for the disk."""

    def __init__(self, directory: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.directory = Path(directory)
        self.location = str(self.directory)
        self._fsync = fsync
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._ends: dict[str, _FileEnd] = {}
        self._paths: dict[str, Path] = {}

    def path(self, session_id: str) -> Path:
        path = self._paths.get(session_id)
        if path is None:
            if len(self._paths) >= _PATHS_KEPT:
                self._paths.clear()
            path = self._paths[session_id] = self.directory / file_name(session_id)
        return path

    def _lock(self, session_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(session_id, threading.Lock())

    # -- writing -------------------------------------------------------------------------

    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        if not events:
            return
        check_contiguous(events, info.id)
        payload = b"\n".join([event.to_json_bytes() for event in events]) + b"\n"
        path = self.path(info.id)
        with self._lock(info.id):
            try:
                fd = os.open(path, os.O_WRONLY | getattr(os, "O_BINARY", 0))
            except FileNotFoundError:
                self._ends.pop(info.id, None)
                self._create(info, path, payload, events)
                return
            try:
                lock_file(fd)
                stat = os.fstat(fd)
                end = self._ends.get(info.id)
                if end is None or (end.inode, end.size) != (stat.st_ino, stat.st_size):
                    end = self._read(info.id, path)[3]
                if events[0].seq != end.next_seq:
                    raise SessionConflictError(
                        f"{path}: cannot append seq {events[0].seq}: the stored log ends "
                        f"at seq {end.next_seq - 1}, so the next is {end.next_seq} (another "
                        "writer, or a stale session); nothing was written"
                    )
                if end.valid < end.size:
                    os.ftruncate(fd, end.valid)  # the torn tail of a crashed write
                write_all(fd, payload, end.valid)
                if durable and self._fsync:
                    os.fsync(fd)
            except BaseException:
                self._ends.pop(info.id, None)
                raise
            finally:
                os.close(fd)
            size = end.valid + len(payload)
            self._ends[info.id] = _FileEnd(stat.st_ino, size, size, events[-1].seq + 1, events[-1])

    def _create(
        self, info: SessionInfo, path: Path, payload: bytes, events: Sequence[SessionEvent]
    ) -> None:
        if events[0].seq != 0:
            raise SessionConflictError(
                f"{path}: session {info.id!r} is not stored, so its log must start at seq 0, "
                f"not {events[0].seq} (was the file deleted?); nothing was written"
            )
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        header = _header_line(info)
        stat = publish(path, header + payload, fsync=self._fsync)
        size = len(header) + len(payload)
        self._ends[info.id] = _FileEnd(stat.st_ino, size, size, events[-1].seq + 1, events[-1])

    def sync(self, session_id: str) -> None:
        if not self._fsync:
            return
        with self._lock(session_id):
            try:
                fd = os.open(self.path(session_id), os.O_RDONLY)
            except FileNotFoundError:
                return
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def delete(self, session_id: str) -> bool:
        with self._lock(session_id):
            self._ends.pop(session_id, None)
            try:
                os.unlink(self.path(session_id))
            except FileNotFoundError:
                return False
            if self._fsync:
                fsync_directory(self.directory)
            return True

    # -- reading -------------------------------------------------------------------------

    def tail(self, session_id: str) -> StoredTail | None:
        with self._lock(session_id):
            path = self.path(session_id)
            try:
                stat = os.stat(path)
            except FileNotFoundError:
                self._ends.pop(session_id, None)
                return None
            end = self._ends.get(session_id)
            if end is None or (end.inode, end.size) != (stat.st_ino, stat.st_size):
                end = self._read(session_id, path)[3]
            return StoredTail(end.next_seq, end.last)

    def load(self, session_id: str) -> LoadedSession | None:
        path = self.path(session_id)
        with self._lock(session_id):
            try:
                header, events, dropped, _ = self._read(session_id, path)
            except FileNotFoundError:
                self._ends.pop(session_id, None)
                return None
        closers = close_turn(events)
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

    def _read(
        self, session_id: str, path: Path
    ) -> tuple[dict[str, Any], list[SessionEvent], int, _FileEnd]:
        """Parse a whole file: header, readable prefix, ignored records, and its end."""
        with open(path, "rb") as file:
            data = file.read()
            inode = os.fstat(file.fileno()).st_ino
        complete = data.rfind(b"\n") + 1
        lines = data[:complete].split(b"\n")
        lines.pop()  # after the last newline: b""
        if not lines:
            raise SessionCorruptError(f"{path}:1: the file has no complete header line")
        header = parse_header(lines[0], path)
        if header.get("id") != session_id:
            raise SessionCorruptError(
                f"{path}:1: the header names session {header.get('id')!r}, not {session_id!r}"
            )
        records = lines[1:]
        events, ignored = read_log(records, lambda index: f"{path}:{index + 2}")
        if ignored:
            valid = len(lines[0]) + 1 + sum(len(line) + 1 for line in records[: len(events)])
        else:
            valid = complete
        torn = 1 if complete < len(data) else 0
        last = events[-1] if events else None
        end = _FileEnd(inode, len(data), valid, len(events), last)
        self._ends[session_id] = end
        return header, events, ignored + torn, end

    def headers(self) -> list[SessionHeader]:
        try:
            entries = list(os.scandir(self.directory))
        except FileNotFoundError:
            return []
        found = []
        for entry in entries:
            if entry.name.startswith(".") or not entry.name.endswith(SUFFIX):
                continue
            try:
                found.append(_summary(entry.path))
            except FileNotFoundError:
                continue  # deleted meanwhile
            except (OSError, PersistenceError) as exc:
                found.append(
                    SessionHeader(session_id_of(entry.name), 0.0, 0.0, 0, f"(unreadable: {exc})")
                )
        return found


def parse_header(line: bytes, path: Path) -> dict[str, Any]:
    """The header of a session file; refuses other files and newer formats."""
    try:
        header = json.loads(line)
    except ValueError as exc:
        raise SessionCorruptError(f"{path}:1: the header line is not JSON ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise SessionFormatError(f"{path}:1: not a dsh session file (no {FORMAT!r} header)")
    version = header.get("version")
    if type(version) is not int or version < 1:
        raise SessionFormatError(f"{path}:1: unknown session format version {version!r}")
    if version > VERSION:
        raise SessionFormatError(
            f"{path}: session format version {version} is newer than this dsh-persistence "
            f"reads (up to {VERSION}); upgrade dsh-persistence to open it. The file was "
            "not changed."
        )
    return header


def _header_line(info: SessionInfo) -> bytes:
    header = {
        "format": FORMAT,
        "version": VERSION,
        "id": info.id,
        "created": info.created,
        "cwd": info.cwd,
        "title": info.title,
        **{key: info.meta.get(key) for key in FORK_KEYS},
        "meta": {key: value for key, value in info.meta.items() if key not in FORK_KEYS},
    }
    try:
        text = json.dumps(header, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise PersistenceError(
            f"session {info.id!r}: its meta is not JSON ({exc}); nothing was written"
        ) from None
    try:
        return text.encode() + b"\n"
    except UnicodeEncodeError:  # a lone surrogate in the meta: written as an ASCII escape
        return json.dumps(header, allow_nan=False, separators=(",", ":")).encode() + b"\n"


def _summary(path: str) -> SessionHeader:
    """A header from the first line and the last few KB of the file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        size = os.fstat(fd).st_size
        head = read_at(fd, _TAIL_BLOCK, 0)
        end = head.find(b"\n")
        while end < 0 and len(head) < min(size, _HEADER_LIMIT):
            head += read_at(fd, _TAIL_BLOCK * 16, len(head))
            end = head.find(b"\n")
        if end < 0:
            raise SessionCorruptError(f"{path}:1: the header line is incomplete")
        header = parse_header(head[:end], Path(path))
        updated, turns = _tail_summary(fd, end + 1, size)
    finally:
        os.close(fd)
    created = header.get("created")
    created = float(created) if isinstance(created, int | float) else 0.0
    identity = header.get("id")
    if not isinstance(identity, str):
        raise SessionCorruptError(f"{path}:1: the header has no session id")
    return SessionHeader(
        identity,
        created,
        updated if updated is not None else created,
        turns,
        str(header.get("title") or ""),
    )


def _tail_summary(fd: int, body: int, size: int) -> tuple[float | None, int]:
    """(time of the last readable event, number of the last turn) from the file's end,
    reading backwards in growing blocks until a turn boundary is found."""
    updated: float | None = None
    block = _TAIL_BLOCK
    while True:
        start = max(body, size - block)
        lines = read_at(fd, size - start, start).split(b"\n")
        lines.pop()  # a torn last line, or b""
        if start > body and lines:
            lines.pop(0)  # the block starts mid-line
        for line in reversed(lines):
            if updated is None or b'"turn/' in line:
                raw = _loads(line)
                if raw is None:
                    continue
                if updated is None and isinstance(raw.get("time"), int | float):
                    updated = float(raw["time"])
                if raw.get("type") in ("turn/start", "turn/end"):
                    turn = (raw.get("data") or {}).get("turn")
                    return updated, turn if type(turn) is int else 0
        if start == body:
            return updated, 0
        block *= 8


def _loads(line: bytes) -> dict[str, Any] | None:
    try:
        raw = json.loads(line)
    except ValueError:
        return None
    return raw if isinstance(raw, dict) else None
