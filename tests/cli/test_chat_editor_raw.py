"""The line editor (dsh/_cli_editor.py) keeps the terminal in raw mode while lines are
printed above it. In canonical mode, even for the moment of one write, the kernel
echoes a key typed then into the answer and takes a Ctrl-D for itself, so that the
permission question it was meant to deny waits on (seen on CI: the Ctrl-D of
test_chat_permissions' end-of-input test, sent as the question showed, was lost)."""

from __future__ import annotations

import io
import os
import pty
import sys
import termios
import threading
from collections.abc import Iterator
from typing import TextIO

import anyio
import pytest

pytest.importorskip("prompt_toolkit", reason="the line editor needs pip install 'dsh-core[chat]'")


class Recording(io.TextIOBase):
    """The terminal's writing end, noting for each text written whether the terminal
    was in canonical mode or echoing as it was written."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.written: list[tuple[str, bool]] = []
        self.shown = anyio.Event()  # set once the question is written
        self.reader: TextIO = sys.stdin  # the terminal's reading end (the fixture's)

    def write(self, text: str) -> int:
        lflag = termios.tcgetattr(self.fd)[3]
        self.written.append((text, bool(lflag & (termios.ICANON | termios.ECHO))))
        os.write(self.fd, text.encode())
        if "allow?" in text:
            self.shown.set()
        return len(text)

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return True

    @property
    def encoding(self) -> str:
        return "utf-8"


def _drain(fd: int) -> None:
    """Read what is written to the terminal, so that no write waits for a reader."""
    try:
        while os.read(fd, 4096):
            pass
    except OSError:  # the other end closed
        pass


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recording]:
    """A pseudo-terminal, its writes recorded (set as stdin and stderr by the test:
    pytest's capture sets them again between a fixture and the test)."""
    main, tty = pty.openpty()
    threading.Thread(target=_drain, args=(main,), daemon=True).start()
    recording = Recording(tty)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("DSH_CHAT_EDITOR", raising=False)
    with open(tty, closefd=False) as recording.reader:
        yield recording
    os.close(tty)
    os.close(main)


async def test_a_line_printed_above_the_editor_is_written_in_raw_mode(
    terminal: Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh._cli_editor import line_editor

    monkeypatch.setattr(sys, "stdin", terminal.reader)
    monkeypatch.setattr(sys, "stderr", terminal)
    editor = line_editor()
    assert editor is not None
    with editor.streams():
        async with editor.running():
            print("? bash(echo hi): allow? y = once", file=sys.stderr)
            with anyio.fail_after(10):
                await terminal.shown.wait()
            editor.end_input()
            assert [line async for line in editor.lines()] == []
    lines = [(text, cooked) for text, cooked in terminal.written if "allow?" in text]
    assert lines == [("? bash(echo hi): allow? y = once\n", False)]
