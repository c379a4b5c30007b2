"""Reading a whole session file of the JSONL backend: its header, the readable prefix of
its log, what was ignored, and where it ends (``FileEnd``, which the backend keeps so
that an append after a load need not read the file again)."""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from dsh.session import SessionEvent
from dsh_persistence._errors import NotASessionError, SessionCorruptError, SessionFormatError
from dsh_persistence._files import open_regular
from dsh_persistence._header import FORMAT, first_line, misnamed, parse_header
from dsh_persistence._records import check_repaired, close_turn, read_log, whole_event

__all__ = ["FileEnd", "SessionFile", "check_session_file", "mend_tail", "read_session_file"]


@dataclass(frozen=True, slots=True)
class FileEnd:
    """What this process last saw of a session file, valid while (inode, size) match."""

    inode: int
    size: int
    valid: int  # bytes of the header and the readable prefix; the rest is cut on append
    next_seq: int
    last: SessionEvent | None
    cwd: str  # the header's: turn lines written from another workspace name theirs
    #: The last event's line has no line end (``valid`` is where it starts, ``size``
    #: where it ends): the next append writes one first (``mend_tail``).
    unended: bool = False


class SessionFile(NamedTuple):
    """A whole session file as read (``read_session_file``)."""

    header: dict[str, Any]
    events: list[SessionEvent]  # the readable prefix
    closers: list[SessionEvent]  # what closes its turn left open (``close_turn``)
    dropped: int  # records ignored: what a crash left
    end: FileEnd


def read_session_file(session_id: str, path: Path) -> SessionFile:
    """Parse a whole file, its repaired log checked (``check_repaired``). It is read a
    line at a time: no more of it is held at once than ``read_log`` holds (a batch of
    short lines, or one long line), besides the events parsed."""
    with open(open_regular(path), "rb") as file:  # a FIFO must not block: refused
        inode = os.fstat(file.fileno()).st_ino
        lines = _Lines(file)
        records = iter(lines)
        first = next(records, None)
        if first is None:
            raise SessionCorruptError(f"{path}:1: the file has no complete header line")
        header = parse_header(first, path)
        found = header.get("id")
        if found != session_id:
            # a file renamed or copied by hand: said as ``dsh sessions list`` says it
            said = misnamed(str(path), session_id, found) if isinstance(found, str) else None
            raise SessionCorruptError(
                said or f"{path}:1: the header names session {found!r}, not {session_id!r}"
            )
        where = lambda index: f"{path}:{index + 2}"  # noqa: E731
        events, ignored = read_log(records, where, lost_pages=True)
    # a whole next event after the last line end is no torn write: a file saved
    # without its final line end (one after blank lines is cut off with them)
    whole = None
    if lines.torn and not ignored and not lines.blank:
        whole = whole_event(lines.rest, len(events))
        if whole is not None:
            events.append(whole)
    unended = whole is not None
    closers = close_turn(events)
    check_repaired(events, closers, where)
    valid = lines.ends[len(events)] if ignored else lines.complete
    last = events[-1] if events else None
    size = lines.complete + lines.blank + lines.torn
    cwd = str(header.get("cwd") or "")
    end = FileEnd(inode, size, valid, len(events), last, cwd, unended)
    dropped = ignored + (1 if lines.torn and not unended else 0)
    return SessionFile(header, events, closers, dropped, end)


def mend_tail(fd: int, end: FileEnd) -> FileEnd:
    """Before an append to the file ``fd`` at ``end.valid``, past which it goes on: cut
    off its torn tail, or end the line of its last event (``unended``); where it ends
    then."""
    if not end.unended:
        os.ftruncate(fd, end.valid)
        return end
    os.pwrite(fd, b"\n", end.size)
    return replace(end, size=end.size + 1, valid=end.size + 1, unended=False)


class _Lines:
    """The complete lines of a file, without their newlines, read one at a time; what
    follows the last newline is a torn line (``torn`` bytes), not yielded. Blank lines
    (only whitespace) at the end (``blank`` bytes, before a torn line if any), which an
    editor may add, are not yielded either: the next append writes over them. One
    before a line that is not blank is yielded, a record that is no event (damage)."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        #: Bytes up to and with the newline of the last line yielded.
        self.complete = 0
        self.blank = 0
        self.torn = 0
        self.rest = b""  # the torn line
        #: Where each line yielded ends (after its newline).
        self.ends = array("q")

    def __iter__(self) -> Iterator[bytes]:
        blanks: list[bytes] = []  # read since the last line yielded: at the end, or not
        for line in self._file:
            if not line.endswith(b"\n"):
                self.torn, self.rest = len(line), line
                break
            if line.isspace():
                blanks.append(line)
                continue
            if blanks:  # inside the log: records that are no event (damage, said so)
                for blank in blanks:
                    self.complete += len(blank)
                    self.ends.append(self.complete)
                    yield blank[:-1]
                blanks.clear()
            self.complete += len(line)
            self.ends.append(self.complete)
            yield line[:-1]
        self.blank = sum(map(len, blanks))


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
