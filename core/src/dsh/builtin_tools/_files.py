"""File tools: ``read``, ``write`` and ``edit``, confined to the workspace (``_paths``).

Blocking file work runs in a worker thread so a big file never stalls the event loop.
``read`` abandons its thread on abort (it changes nothing), telling it to stop
scanning; ``write`` and ``edit`` let theirs finish. Only regular files are opened, and
a file is written in place, its space reserved first and its old content put back
should a write fail (``_regular``).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Final

import anyio.to_thread
from pydantic import Field

from dsh.builtin_tools._paths import roots_of
from dsh.builtin_tools._regular import (
    file_status,
    open_regular,
    special_file,
    status_or_none,
    write_file,
)
from dsh.builtin_tools._text import (
    SNIFF_BYTES,
    clip_line,
    count_lines,
    decode_text,
    looks_binary,
    skip_lines,
    split_lines,
)
from dsh.tools import ToolContext, ToolError, tool

__all__ = [
    "MAX_COUNT_BYTES",
    "MAX_EDIT_BYTES",
    "MAX_READ_BYTES",
    "MAX_READ_LINES",
    "MAX_READ_LINE_CHARS",
    "edit",
    "read",
    "write",
]

#: At most this many lines per ``read`` (a larger ``limit`` is lowered to it).
MAX_READ_LINES: Final = 2000
#: At most this many bytes of file text per ``read``.
MAX_READ_BYTES: Final = 50_000
#: Longer lines are cut (with a note).
MAX_READ_LINE_CHARS: Final = 2000
#: ``read`` counts the lines after those it shows in at most this many bytes; in a
#: larger file, it says "of at least N lines" and the file's size.
MAX_COUNT_BYTES: Final = 100_000_000
#: ``edit`` refuses larger files (it holds the file, and its new content, in memory).
MAX_EDIT_BYTES: Final = 10_000_000
_BARE_LF: Final = re.compile(r"(?<!\r)\n")


def _lines(file: IO[bytes], keep: int) -> Iterator[tuple[bytes, bool]]:
    """Each line of ``file`` without its line ending: its first ``keep`` bytes and
    whether more was dropped. A huge line is never held in memory whole."""
    while line := file.readline(keep):
        cut = False
        if len(line) == keep and not line.endswith(b"\n"):
            rest = file.readline(keep)
            cut = rest not in (b"", b"\n", b"\r\n")  # more than the line's ending
            while rest and not rest.endswith(b"\n"):
                rest = file.readline(keep)
        yield line.rstrip(b"\n").removesuffix(b"\r"), cut


def _read(target: Path, shown: str, offset: int, limit: int, stop: threading.Event) -> str:
    status = file_status(target, shown, "use ls to list it")
    wanted = min(limit, MAX_READ_LINES)
    keep = MAX_READ_LINE_CHARS * 4  # bytes: enough for the kept characters in UTF-8
    shown_lines: list[str] = []
    used = 0
    full = False  # the byte cap was reached
    total = 0
    whole = True  # every line was counted
    not_utf8 = 0  # bytes of the lines shown
    with open_regular(target, shown) as file:
        if looks_binary(file.read(SNIFF_BYTES)):
            size = status.st_size
            raise ToolError(f"{shown} is a binary file ({size} bytes); read shows text only")
        file.seek(0)
        skipped = skip_lines(file, offset - 1, stop)  # the lines before offset, in chunks
        total = skipped
        for total, (raw, cut) in enumerate(_lines(file, keep), start=skipped + 1):
            if stop.is_set():
                raise ToolError("stopped: the call was aborted")
            if total < offset:  # the last line, without \n, of a file that ends before
                continue
            if len(shown_lines) >= wanted:  # this line and the rest are counted
                rest, whole = count_lines(file, stop, most=MAX_COUNT_BYTES)
                total += rest
                break
            decoded, wrong = decode_text(raw, complete=not cut)
            text = clip_line(decoded, MAX_READ_LINE_CHARS, longer=cut)
            line = f"{total:>6}\t{text}"
            size = len(line.encode()) + 1
            if shown_lines and used + size > MAX_READ_BYTES:
                full = True
                rest, whole = count_lines(file, stop, most=MAX_COUNT_BYTES)
                total += rest
                break
            shown_lines.append(line)
            used += size
            not_utf8 += wrong
    if total == 0:
        return f"({shown} is empty)"
    if offset > total:
        raise ToolError(f"offset {offset} is past the end of {shown} ({_count(total, 'line')})")
    last = offset + len(shown_lines) - 1
    notes = []
    if not (offset == 1 and last == total):
        why = f"output cap of {MAX_READ_BYTES} bytes reached; " if full else ""
        more = f"; continue with offset={last + 1}" if last < total else ""
        of = f"{total}" if whole else f"at least {total} lines ({status.st_size} bytes)"
        notes.append(f"[{why}showing lines {offset}-{last} of {of} in {shown}{more}]")
    if not_utf8:
        said = "1 byte that is" if not_utf8 == 1 else f"{not_utf8} bytes that are"
        notes.append(f"[{said} not UTF-8 {'is' if not_utf8 == 1 else 'are'} shown as U+FFFD]")
    return "\n".join([*shown_lines, *notes])


@tool(name="read", path_args=("path",))
async def read(
    path: str = Field(description="File to read, relative to the workspace or absolute."),
    offset: int = Field(1, ge=1, description="First line to show (1-based)."),
    limit: int = Field(
        MAX_READ_LINES, ge=1, description=f"How many lines to show (at most {MAX_READ_LINES})."
    ),
    *,
    context: ToolContext,
) -> str:
    """Read a text file. Each line is shown with its line number (a tab follows the
    number). Shows at most 2000 lines and 50000 bytes per call, and says how to read
    on when there is more; cuts lines longer than 2000 characters. Binary files are
    refused."""
    roots = roots_of(context)
    target = roots.resolve(path)
    stop = threading.Event()  # the thread is abandoned on abort: it stops at this
    try:
        return await anyio.to_thread.run_sync(
            _read, target, roots.show(target), offset, limit, stop, abandon_on_cancel=True
        )
    finally:
        stop.set()


def _unencodable(name: str, text: str) -> str:
    """Why ``text`` (the argument ``name``) cannot be written, or "" when it can."""
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        return (
            f"{name} cannot be written as UTF-8: {exc.reason} "
            f"(character {exc.start}, {text[exc.start]!r})"
        )
    return ""


def _make_parents(target: Path, shown: str, show: Callable[[Path], str]) -> list[Path]:
    """Make ``target``'s missing parent directories, one at a time, and return those
    made here, deepest first (not one another process made meanwhile: a failed write
    removes them); refuse a ``target`` below a file or in a directory that may not be
    written. A directory that cannot be made is a ``ToolError``, and none is left."""
    missing = []
    for parent in target.parents:
        if (status := status_or_none(parent, shown)) is not None:
            if not stat.S_ISDIR(status.st_mode):
                raise _below_a_file(show(parent), shown)
            break
        missing.append(parent)
    made: list[Path] = []
    for directory in reversed(missing):
        try:
            os.mkdir(directory)
        except FileExistsError:  # made by another process since the check: not ours
            if _is_directory(directory):
                continue
            _remove_empty(made[::-1])  # a file, or a link (not resolved when checked)
            raise _below_a_file(show(directory), shown) from None
        except OSError as exc:  # permission, a full disk, a read-only one, a long name
            _remove_empty(made[::-1])
            if isinstance(exc, PermissionError):
                raise ToolError(
                    f"{shown} cannot be created: {show(directory.parent)} may not be "
                    f"written (permission denied), so {show(directory)} cannot be made"
                ) from None
            raise ToolError(
                f"{shown} cannot be created: {show(directory)} cannot be made "
                f"({exc.strerror or exc})"
            ) from None
        made.append(directory)
    return made[::-1]


def _below_a_file(file: str, shown: str) -> ToolError:
    return ToolError(f"{file} is a file, not a directory: {shown} cannot be created below it")


def _is_directory(path: Path) -> bool:
    """Whether ``path`` is a directory, not a symlink to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:  # gone again
        return False


def _remove_empty(directories: list[Path]) -> None:
    """Remove ``directories`` (deepest first) that exist and are empty."""
    for directory in directories:
        with contextlib.suppress(OSError):  # not made, or something was put in it
            directory.rmdir()


def _write(target: Path, show: Callable[[Path], str], content: str) -> str:
    shown = show(target)
    if why := _unencodable("content", content):
        raise ToolError(f"{why}; nothing was written")
    data = content.encode()
    status = status_or_none(target, shown)
    made: list[Path] = []
    if status is None:
        made = _make_parents(target, shown, show)
    elif stat.S_ISDIR(status.st_mode):
        raise ToolError(f"{shown} is a directory; give the path of a file")
    elif not stat.S_ISREG(status.st_mode):
        raise special_file(status.st_mode, shown)
    try:
        write_file(target, shown, data, new=status is None)
    except BaseException:
        _remove_empty(made)  # a file not created leaves no directory made for it
        raise
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    verb = "created" if status is None else "overwrote"
    return f"{verb} {shown} ({_count(lines, 'line')}, {_count(len(data), 'byte')})"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


@tool(name="write", mutating=True, path_args=("path",), reads=False)
async def write(
    path: str = Field(description="File to write, relative to the workspace or absolute."),
    content: str = Field(description="The whole new content of the file."),
    *,
    context: ToolContext,
) -> str:
    """Write a file with exactly this content (UTF-8), replacing it if it exists and
    creating missing parent directories. To change part of a file, use edit."""
    if path.endswith(("/", os.sep)):
        raise ToolError(f"{path!r} ends with '/', so it names a directory; give the path of a file")
    roots = roots_of(context)
    target = roots.resolve(path)
    return await anyio.to_thread.run_sync(_write, target, roots.show, content)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _lines_of(text: str, indexes: list[int], most: int) -> str:
    """The first ``most`` distinct lines the (sorted) ``indexes`` are on, said."""
    lines: list[int] = []
    line, done = 1, 0
    for index in indexes:
        line += text.count("\n", done, index)
        done = index
        if not lines or lines[-1] != line:
            if len(lines) == most:
                break
            lines.append(line)
    return f"line {lines[0]}" if len(lines) == 1 else f"lines {', '.join(map(str, lines))}"


def _occurrences(text: str, old: str) -> list[int]:
    """Start of every occurrence of ``old``, overlapping ones included."""
    found: list[int] = []
    index = text.find(old)
    while index != -1:
        found.append(index)
        index = text.find(old, index + 1)
    return found


def _not_found(text: str, old: str, shown: str) -> str:
    """The error for an ``old`` that does not occur, with the likeliest reason."""
    message = f"old was not found in {shown}"
    if " ".join(old.split()) in " ".join(text.split()):
        return (
            f"{message}; it matches if whitespace is ignored: copy indentation, tabs and "
            "line ends exactly"
        )
    first = next((line.strip() for line in split_lines(old) if line.strip()), "")
    lines = [n for n, line in enumerate(split_lines(text), start=1) if first and first in line]
    if lines:
        where = ", ".join(map(str, lines[:5])) + (" ..." if len(lines) > 5 else "")
        return f"{message}; its first line occurs at line {where}, the lines after it differ"
    return f"{message}; read the file and copy the exact text to replace"


def _edit(target: Path, shown: str, old: str, new: str, replace_all: bool) -> str:
    if why := _unencodable("new", new):
        raise ToolError(f"{why}; {shown} is unchanged")
    status = file_status(target, shown, "edit changes files")
    with open_regular(target, shown) as file:
        data = file.read(SNIFF_BYTES)
        if looks_binary(data):
            raise ToolError(f"{shown} is a binary file; edit changes text files only")
        size = status.st_size
        if size <= MAX_EDIT_BYTES:
            data += file.read(MAX_EDIT_BYTES + 1 - len(data))
            size = max(size, len(data))  # it may have grown since
    if size > MAX_EDIT_BYTES:
        raise ToolError(
            f"{shown} is {size} bytes, more than edit changes ({MAX_EDIT_BYTES} bytes); "
            "change it with bash (sed, for one)"
        )
    try:
        text = data.decode("utf-8")  # \r\n kept, so the file's line endings survive
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{shown} is not UTF-8 text ({exc.reason} at byte {exc.start}); edit changes "
            "UTF-8 text only, and write would lose the bytes that are not UTF-8 (read shows "
            "them as U+FFFD): change it with bash (sed, or iconv to convert it to UTF-8)"
        ) from None
    found = _occurrences(text, old)
    crlf = text.count("\r\n")
    if not found and crlf and "\n" in old and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        found = _occurrences(text, old)
    if not found:
        raise ToolError(_not_found(text, old, shown))
    if crlf > text.count("\n") - crlf:  # the file's line ending, for every line new adds
        new = _BARE_LF.sub("\r\n", new)  # (not a mostly-\n file's: one \r\n in a string)
    count = text.count(old)  # what str.replace replaces: no overlapping matches
    if len(found) > 1 and not replace_all:
        times = _count(count, "time")
        overlaps = (
            f", and overlaps itself ({len(found)} matches counting overlaps)"
            if len(found) > count
            else ""
        )
        raise ToolError(
            f"old matches {times} in {shown} ({_lines_of(text, found, 10)}){overlaps}; add "
            "surrounding lines to old so it matches once, or set replace_all=true to replace "
            "every one"
        )
    first_line = _line_of(text, found[0])
    count = count if replace_all else 1
    write_file(target, shown, text.replace(old, new, count).encode(), new=False, was=data)
    if count == 1:
        return f"edited {shown}: replaced 1 occurrence (line {first_line})"
    return f"edited {shown}: replaced {count} occurrences"


@tool(name="edit", mutating=True, path_args=("path",))
async def edit(
    path: str = Field(description="File to change, relative to the workspace or absolute."),
    old: str = Field(description="The exact text to replace (whitespace included)."),
    new: str = Field(description="The text to put in its place."),
    replace_all: bool = Field(False, description="Replace every occurrence of old."),
    *,
    context: ToolContext,
) -> str:
    """Replace exact text in a file. old must occur exactly once, unless replace_all is
    set; when it occurs several times, add surrounding lines to make it unique. Read
    the file first to copy the text exactly."""
    if not old:
        raise ToolError("old is empty; to create or replace a whole file, use write")
    if old == new:
        raise ToolError("old and new are the same; nothing to change")
    roots = roots_of(context)
    target = roots.resolve(path)
    return await anyio.to_thread.run_sync(_edit, target, roots.show(target), old, new, replace_all)
