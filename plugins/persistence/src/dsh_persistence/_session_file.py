"""Reading a whole session file of the JSONL backend: its header, the readable prefix of
its log, what was ignored, and where it ends (``FileEnd``, which the backend keeps so
that an append after a load need not read the file again)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from dsh.session import SessionEvent
from dsh_persistence._errors import NotASessionError, SessionCorruptError, SessionFormatError
from dsh_persistence._files import open_regular
from dsh_persistence._header import FORMAT, first_line, misnamed, parse_header
from dsh_persistence._records import check_repaired, close_turn, read_log

__all__ = ["FileEnd", "SessionFile", "check_session_file", "read_session_file"]


@dataclass(frozen=True, slots=True)
class FileEnd:
    """What this process last saw of a session file, valid while (inode, size) match."""

    inode: int
    size: int
    valid: int  # bytes of the header and the readable prefix; the rest is cut on append
    next_seq: int
    last: SessionEvent | None
    cwd: str  # the header's: turn lines written from another workspace name theirs


class SessionFile(NamedTuple):
    """A whole session file as read (``read_session_file``)."""

    header: dict[str, Any]
    events: list[SessionEvent]  # the readable prefix
    closers: list[SessionEvent]  # what closes its turn left open (``close_turn``)
    dropped: int  # records ignored: what a crash left
    end: FileEnd


def read_session_file(session_id: str, path: Path) -> SessionFile:
    """Parse a whole file, its repaired log checked (``check_repaired``)."""
    with open(open_regular(path), "rb") as file:  # a FIFO must not block: refused
        data = file.read()
        inode = os.fstat(file.fileno()).st_ino
    complete = data.rfind(b"\n") + 1
    lines = data[:complete].split(b"\n")
    lines.pop()  # after the last newline: b""
    if not lines:
        raise SessionCorruptError(f"{path}:1: the file has no complete header line")
    header = parse_header(lines[0], path)
    found = header.get("id")
    if found != session_id:
        # a file renamed or copied by hand: said as ``dsh sessions list`` says it
        said = misnamed(str(path), session_id, found) if isinstance(found, str) else None
        raise SessionCorruptError(
            said or f"{path}:1: the header names session {found!r}, not {session_id!r}"
        )
    records = lines[1:]
    where = lambda index: f"{path}:{index + 2}"  # noqa: E731
    events, ignored = read_log(records, where, lost_pages=True)
    closers = close_turn(events)
    check_repaired(events, closers, where)
    if ignored:
        valid = len(lines[0]) + 1 + sum(len(line) + 1 for line in records[: len(events)])
    else:
        valid = complete
    torn = 1 if complete < len(data) else 0
    last = events[-1] if events else None
    end = FileEnd(inode, len(data), valid, len(events), last, str(header.get("cwd") or ""))
    return SessionFile(header, events, closers, ignored + torn, end)


def check_session_file(fd: int, path: Path, doing: str) -> None:
    """Refuse (``SessionFormatError``) a file whose first line is not a dsh session
    header (``"format": "dsh-session"``, any version): another program's ``.jsonl`` file
    in the directory, which ``list`` shows as not a session, is not ``doing`` (deleted).
    One whose header is longer than dsh reads (``first_line``) is refused saying so."""
    try:
        line = first_line(fd, path)
    except SessionCorruptError as exc:  # dsh cannot tell whose it is: a person can
        raise SessionFormatError(f"{exc}; not {doing} (remove the file by hand: {path})") from None
    try:
        header = json.loads(b"" if line is None else line)
    except (ValueError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise NotASessionError(
            f"{path}: not a dsh session file (no {FORMAT!r} header); not {doing}"
        )
