"""Text helpers shared by the file tools: binary sniffing, lines and clipping them."""

from __future__ import annotations

from typing import Final

__all__ = ["SNIFF_BYTES", "clip_line", "looks_binary", "split_lines"]

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
