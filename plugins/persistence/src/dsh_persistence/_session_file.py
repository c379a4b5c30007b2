"""Reading a whole session file of the JSONL backend: its header, the readable prefix of
its log, what was ignored, and where it ends (``FileEnd``, which the backend keeps so
that an append after a load need not read the file again)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh.session import SessionEvent
from dsh_persistence._errors import SessionCorruptError
from dsh_persistence._header import parse_header
from dsh_persistence._records import read_log

__all__ = ["FileEnd", "read_session_file"]


@dataclass(frozen=True, slots=True)
class FileEnd:
    """What this process last saw of a session file, valid while (inode, size) match."""

    inode: int
    size: int
    valid: int  # bytes of the header and the readable prefix; the rest is cut on append
    next_seq: int
    last: SessionEvent | None
    cwd: str  # the header's: turn lines written from another workspace name theirs


def read_session_file(
    session_id: str, path: Path
) -> tuple[dict[str, Any], list[SessionEvent], int, FileEnd]:
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
    end = FileEnd(inode, len(data), valid, len(events), last, str(header.get("cwd") or ""))
    return header, events, ignored + torn, end
