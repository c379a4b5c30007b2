"""The first line of a session file (the header) and the summary ``list()`` shows.

The header is written once, when the file is published; ``summary`` reads it and the
last few KB of the file, so listing sessions does not read whole logs. The header's
``cwd`` is where the session was started; a run in another workspace writes its own
into the lines of its turn boundaries (``tag_workspace``), where ``summary``, reading
back to the last boundary anyway, finds where the session last ran.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh.persistence import SessionHeader
from dsh_persistence._backend import FORK_KEYS, SessionInfo
from dsh_persistence._errors import (
    NotASessionError,
    PersistenceError,
    SessionCorruptError,
    SessionFormatError,
)
from dsh_persistence._files import file_name, open_regular, read_at
from dsh_persistence._lossless import NotLossless, loads

if TYPE_CHECKING:
    from dsh.session import SessionEvent

__all__ = [
    "FORMAT",
    "HEADER_LIMIT",
    "VERSION",
    "first_line",
    "header_line",
    "misnamed",
    "named_as",
    "parse_header",
    "summary",
    "tag_workspace",
]

FORMAT = "dsh-session"
#: The newest header version this code reads and the one it writes.
VERSION = 1
#: The longest header line (its newline included) written and read: the agent's
#: options, a long system prompt among them, are in it. A longer one is refused when
#: the session is created, and read no further (another program's file may have no
#: newline at all).
HEADER_LIMIT = 64 << 20
_TAIL_BLOCK = 4096
_BOUNDARIES = ("turn/start", "turn/end")
_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def parse_header(line: bytes, path: Path) -> dict[str, Any]:
    """The header of a session file, read as lossless JSON (``_lossless``); refuses
    other files and newer formats, and UTF-16 (``_utf16``), which ``json.loads`` reads
    too: the event lines, not read that way, would pass for a page a power cut lost
    (they hold NUL bytes), and the next save would cut them off."""
    if _utf16(line):
        raise SessionCorruptError(
            f"{path}:1: the header line is not UTF-8 text (it holds NUL bytes: was the file "
            "saved as UTF-16?); dsh reads and writes session files in UTF-8"
        )
    try:
        header = loads(line)
    except NotLossless as exc:  # NaN, 1e400: no value dsh writes, so damage
        raise SessionCorruptError(f"{path}:1: the header line is damaged: {exc}") from None
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise SessionCorruptError(f"{path}:1: the header line is not JSON ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise NotASessionError(f"{path}:1: not a dsh session file (no {FORMAT!r} header)")
    version = header.get("version")
    if type(version) is not int or version < 1:
        raise SessionFormatError(f"{path}:1: unknown session format version {version!r}")
    if version > VERSION:
        raise SessionFormatError(
            f"{path}: session format version {version} is newer than this dsh-persistence "
            f"reads (up to {VERSION}); upgrade dsh-persistence to open it. The file was "
            "not changed."
        )
    meta = header.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise SessionCorruptError(
            f"{path}:1: the header's meta is not an object (a JSON {_JSON_TYPES[type(meta)]})"
        )
    return header


def _utf16(line: bytes) -> bool:
    """Whether ``line`` starts as UTF-16 text does: a byte order mark, or one NUL byte
    in the first two (the high byte of ``{``). dsh writes UTF-8, which has no NUL byte
    outside a string's escapes; a page lost to a power cut starts with two or more."""
    if line[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    return len(line) > 1 and (line[0] == 0) != (line[1] == 0)


def header_line(info: SessionInfo) -> bytes:
    """Line 1 of a new session file."""
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
        line = text.encode() + b"\n"
    except UnicodeEncodeError:  # a lone surrogate in the meta: written as an ASCII escape
        line = json.dumps(header, allow_nan=False, separators=(",", ":")).encode() + b"\n"
    if len(line) > HEADER_LIMIT:  # read back no further: ``first_line``
        raise PersistenceError(
            f"session {info.id!r}: its header (the agent's options and meta) would be "
            f"{len(line)} bytes, longer than the {HEADER_LIMIT} a session file's header "
            "may be; nothing was written"
        )
    return line


def first_line(fd: int, path: str | Path) -> bytes | None:
    """Line 1 of the open file ``fd`` (at ``path``), without its newline; None when the
    file ends before one. Read in growing blocks, up to ``HEADER_LIMIT`` bytes: a line
    longer is a ``SessionCorruptError`` that says so."""
    blocks: list[bytes] = []
    read = 0
    block = _TAIL_BLOCK
    while read < HEADER_LIMIT:
        data = read_at(fd, min(block, HEADER_LIMIT - read), read)
        if not data:
            return None
        end = data.find(b"\n")
        if end >= 0:
            return b"".join([*blocks, data[:end]])
        blocks.append(data)
        read += len(data)
        block = min(block * 4, 1 << 20)
    raise SessionCorruptError(
        f"{path}:1: the header line is longer than {HEADER_LIMIT} bytes, the most dsh reads"
    )


def summary(path: str) -> SessionHeader:
    """A header from the first line and the last few KB of the file."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        line = first_line(fd, path)
        if line is None:
            raise SessionCorruptError(f"{path}:1: the header line is incomplete")
        header = parse_header(line, Path(path))
        updated, turns, ran = _tail_summary(fd, len(line) + 1, size)
    finally:
        os.close(fd)
    created = _time(header.get("created")) or 0.0
    identity = header.get("id")
    if not isinstance(identity, str):
        raise SessionCorruptError(f"{path}:1: the header has no session id")
    return SessionHeader(
        identity,
        created,
        updated if updated is not None else created,
        turns,
        str(header.get("title") or ""),
        ran or str(header.get("cwd") or ""),
    )


def named_as(header: SessionHeader, named: str, path: str) -> SessionHeader:
    """``header`` as listed from the file ``path``, whose name encodes the session id
    ``named``. A file renamed or copied by hand (its header names another session, or
    its name is not the one dsh gives that session) cannot be reached by the header's
    id: it is listed under ``named``, with an ``error`` (``misnamed``) that says how to
    make it a session again. Its dates, turns, title and workspace are kept."""
    said = misnamed(path, named, header.id)
    return header if said is None else replace(header, id=named, error=said)


def misnamed(path: str, named: str, header_id: str) -> str | None:
    """What is wrong with the file ``path``, whose name encodes the session id
    ``named``, holding session ``header_id``, and how to make it a session again; None
    when its name is the one dsh gives that session. ``dsh sessions list`` says it of
    the file, and ``show`` (any reader of it) when it is asked for it by its name."""
    name = os.path.basename(path)
    try:
        wanted = file_name(header_id)
    except PersistenceError:
        wanted = ""
    if wanted == name:
        return None
    if header_id == named:
        said = f"{path}: the file name is not the one dsh gives session {named!r}"
    else:
        said = f"{path}: the file name says session {named!r}, its header says {header_id!r}"
    if not wanted:
        fix = "the header's id cannot be a file name"
    elif os.path.lexists(os.path.join(os.path.dirname(path), wanted)):
        fix = f"{wanted} holds that session (is this file a copy?)"
    else:
        fix = f"rename it to {wanted} to reach it"
    return f"{said}; {fix}"


def tag_workspace(lines: list[bytes], events: Sequence[SessionEvent], cwd: str) -> list[bytes]:
    """``lines`` (the JSON of ``events``) with ``"cwd":cwd`` added to those of turn
    boundaries: a run in another workspace than the header's says where it ran. Readers
    of the events ignore keys besides ``type``, ``seq``, ``time`` and ``data``."""
    try:
        text = json.dumps(cwd, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate (``SessionInfo.of`` leaves none): escaped
        text = json.dumps(cwd).encode()
    tag = b',"cwd":' + text + b"}"
    return [
        line[:-1] + tag if event.type in _BOUNDARIES else line
        for line, event in zip(lines, events, strict=True)
    ]


def _tail_summary(fd: int, body: int, size: int) -> tuple[float | None, int, str]:
    """(time of the last readable event, number of the last turn, the workspace its
    line names or "") from the file's end, reading backwards in growing blocks until a
    turn boundary is found."""
    updated: float | None = None
    block = _TAIL_BLOCK
    while True:
        start = max(body, size - block)
        lines = read_at(fd, size - start, start).split(b"\n")
        if not lines[-1]:  # what follows the last line end: a torn line is no JSON
            lines.pop()
        if start > body and lines:
            lines.pop(0)  # the block starts mid-line
        for line in reversed(lines):
            if updated is None or b'"turn/' in line:
                raw = _loads(line)
                if raw is None:
                    continue
                if updated is None:
                    updated = _time(raw.get("time"))
                if raw.get("type") in _BOUNDARIES:
                    data = raw.get("data")
                    turn = data.get("turn") if isinstance(data, dict) else None
                    ran = raw.get("cwd")
                    return (
                        updated,
                        turn if type(turn) is int else 0,
                        ran if isinstance(ran, str) else "",
                    )
        if start == body:
            return updated, 0, ""
        block *= 8


def _time(value: object) -> float | None:
    """A time read from the file; None unless it is a finite number (damage such as
    ``1e400`` reads as infinity)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        found = float(value)
    except OverflowError:  # an int too large for a float
        return None
    return found if math.isfinite(found) else None


def _loads(line: bytes) -> dict[str, Any] | None:
    try:
        raw = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return raw if isinstance(raw, dict) else None
