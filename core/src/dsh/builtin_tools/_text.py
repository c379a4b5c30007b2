"""Text helpers shared by the file tools: binary sniffing and clipping long lines."""

from __future__ import annotations

from pathlib import Path
from typing import Final

__all__ = ["SNIFF_BYTES", "clip_line", "is_binary", "looks_binary"]

#: How much of a file is inspected to decide whether it is text.
SNIFF_BYTES: Final = 8192


def looks_binary(sample: bytes) -> bool:
    """Text files hold no NUL byte (the test git and grep use)."""
    return b"\0" in sample


def is_binary(path: Path) -> bool:
    with path.open("rb") as file:
        return looks_binary(file.read(SNIFF_BYTES))


def clip_line(line: str, limit: int, *, longer: bool = False) -> str:
    """``line`` cut to ``limit`` characters, saying so; ``longer``: the caller already
    dropped the end of the line."""
    if len(line) <= limit and not longer:
        return line
    return f"{line[:limit]} [... line cut at {limit} characters]"
