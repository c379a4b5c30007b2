"""Support for the line editor's tests (dsh/_cli_editor.py), imported as
``editor_support``: the screen as the person sees it, rendered with pyte from the bytes
written to the pseudo-terminal, and the steps those tests share. A test module that
imports it is skipped without prompt_toolkit (the ``chat`` extra) or pyte."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest

pytest.importorskip("prompt_toolkit", reason="the line editor needs pip install 'dsh-core[chat]'")
pyte = pytest.importorskip("pyte")

ROWS, COLUMNS = 40, 200


def screen(child: pexpect.spawn) -> list[str]:
    """The terminal's rows as the person sees them now, without trailing blank ones."""
    view = pyte.Screen(COLUMNS, ROWS)
    pyte.Stream(view).feed(child.logfile_read.getvalue())
    rows = [row.rstrip() for row in view.display]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def row_of(rows: list[str], start: str, after: int = -1) -> int:
    """The index of the first row after ``after`` that starts with ``start``."""
    for index in range(after + 1, len(rows)):
        if rows[index].startswith(start):
            return index
    raise AssertionError(f"no row starts with {start!r} after row {after}:\n" + "\n".join(rows))


def screen_when(child: pexpect.spawn, check: Any, what: str) -> list[str]:
    """The screen once ``check(rows)`` holds for it (what the chat writes is read
    meanwhile: an ``expect`` after this one does not see it); fails after 10 seconds,
    naming ``what``."""
    deadline = time.monotonic() + 10
    while not check(rows := screen(child)):
        assert time.monotonic() < deadline, f"{what} never showed:\n" + "\n".join(rows)
        child.expect([pexpect.TIMEOUT, pexpect.EOF], timeout=0.1)
    return rows


def quit_after_turn(child: pexpect.spawn) -> list[str]:
    """Wait for turn 1 to end and "> " to come back, quit, and return the screen as it
    was at the prompt."""
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    rows = screen(child)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    return rows


def users(server: Any) -> list[list[Any]]:
    """The user messages of each request."""
    return [[m["content"] for m in b["messages"] if m["role"] == "user"] for b in server.bodies()]


def in_shell(script: str, env: dict[str, str], cwd: Path) -> pexpect.spawn:
    """``bash -c SCRIPT`` in a pseudo-terminal, ``$0`` naming this Python."""
    child = pexpect.spawn(
        "bash",
        ["-c", script, sys.executable],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=30,
        dimensions=(ROWS, COLUMNS),
    )
    child.logfile_read = io.StringIO()
    return child
