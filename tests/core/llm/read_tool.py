"""A ``read_file`` tool that records the paths it was given, for tests that run real
turns over the loopback server (``Tools`` registers it; ``CALLS`` is cleared by each
test that reads it)."""

from __future__ import annotations

from typing import Any

from dsh import hookimpl
from dsh.tools import tool

CALLS: list[str] = []


@tool
def read_file(path: str) -> str:
    """Read a file."""
    CALLS.append(path)
    return f"contents of {path}"


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(read_file)
