"""Text helpers shared by the file tools: binary sniffing, decoding, lines (counting
and clipping them)."""

from __future__ import annotations

import codecs
import threading
from typing import IO, Final

from dsh.tools import ToolError

__all__ = [
    "SNIFF_BYTES",
    "clip_line",
    "count_lines",
    "decode_text",
    "looks_binary",
    "skip_lines",
    "split_lines",
]

#: How much of a file is inspected to decide whether it is text.
SNIFF_BYTES: Final = 8192


def looks_binary(sample: bytes) -> bool:
    """Text files hold no NUL byte (the test git and grep use)."""
    return b"\0" in sample


def split_lines(text: str) -> list[str]:
    """``text``'s lines as every file tool numbers them: split at ``\n`` only (not at
    ``\f``, ``\x1c`` or ``\u2028`` as ``str.splitlines`` does), without a ``\r`` before it."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def clip_line(line: str, limit: int, *, longer: bool = False) -> str:
    """``line`` cut to ``limit`` characters, saying so; ``longer``: the caller already
    dropped the end of the line."""
    if len(line) <= limit and not longer:
        return line
    return f"{line[:limit]} [... line cut at {limit} characters]"


#: How much of a file ``count_lines`` reads at a time.
_CHUNK: Final = 1 << 20
#: The UTF-8 bytes of U+FFFD, which a file may hold as text.
_REPLACEMENT: Final = "\ufffd".encode()


def count_lines(
    file: IO[bytes], stop: threading.Event, *, most: int, chunk: int = _CHUNK
) -> tuple[int, bool]:
    """How many lines ``file`` has from where it is (a last line without ``\n``
    counted), read in chunks; and whether it was read to its end: it reads at most
    ``most`` bytes (and one more, to tell). Raises ``ToolError`` once ``stop`` is set
    (its caller has gone: a thread the read tool abandoned on abort scans no more)."""
    lines, done, last = 0, 0, b"\n"
    while done <= most:
        if stop.is_set():
            raise ToolError("stopped: the call was aborted")
        data = file.read(min(chunk, most + 1 - done))
        if not data:
            return lines + (last != b"\n"), True
        lines += data.count(b"\n")
        done += len(data)
        last = data[-1:]
    return lines + (last != b"\n"), False


def skip_lines(file: IO[bytes], count: int, stop: threading.Event, *, chunk: int = _CHUNK) -> int:
    """Move ``file`` (seekable) past its next ``count`` lines, to the start of the line
    after them, reading chunks; how many lines it passed: fewer when the file ends
    first (it is then left at the start of its last line, one without ``\n``, or at its
    end). Raises ``ToolError`` once ``stop`` is set, as ``count_lines``."""
    passed, after = 0, file.tell()
    while passed < count:
        if stop.is_set():
            raise ToolError("stopped: the call was aborted")
        start = file.tell()
        data = file.read(chunk)
        if not data:
            file.seek(after)
            break
        found = data.count(b"\n")
        if passed + found < count:
            passed += found
            if found:
                after = start + data.rfind(b"\n") + 1
            continue
        index = -1
        for _ in range(count - passed):
            index = data.find(b"\n", index + 1)
        file.seek(start + index + 1)
        passed = count
    return passed


def decode_text(raw: bytes, *, complete: bool = True) -> tuple[str, int]:
    """``raw`` decoded as UTF-8, each run of bytes that are not UTF-8 shown as U+FFFD,
    and how many such bytes there were; ``complete=False``: ``raw`` was cut, and a
    character cut at its end is left out (not counted as bytes that are not UTF-8)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(raw, final=complete)
    used = len(raw) - len(decoder.getstate()[0])
    replaced = text.count("\ufffd") - raw.count(_REPLACEMENT, 0, used)
    return text, used - (len(text.encode()) - 3 * replaced)
