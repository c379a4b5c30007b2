"""What the line editor drew above its input line is printed, at its exit, in the order
it was drawn (dsh/_cli_screen.py): an unfinished line, the lines typed after it (held
until it ends), then a stream's line begun after those."""

from __future__ import annotations

import asyncio
import io
import threading
from types import SimpleNamespace
from typing import Any

import anyio

from dsh._cli_editor import LineEditor
from dsh._cli_screen import TerminalStream


async def test_at_exit_a_line_begun_after_the_held_ones_is_printed_after_them() -> None:
    editor = LineEditor()
    screen = editor._screen
    terminal = io.StringIO()  # stdout and stderr are the one terminal
    out, err = TerminalStream(terminal, screen), TerminalStream(terminal, screen)
    app: Any = SimpleNamespace(is_running=True, invalidate=lambda: None)
    app.renderer = SimpleNamespace(erase=lambda: None)

    async def run_async(**_: object) -> None:
        out.write("thinking")  # the answer streams, unfinished
        screen.echo(terminal, "> /model\n")  # typed meanwhile: held below it
        err.write("a warning, unfinished")  # begun after the line typed
        await asyncio.sleep(0)
        drawn.append(screen.tails())
        app.is_running = False  # the chat quits (Ctrl-C twice) before either ends

    drawn: list[str] = []
    app.run_async = run_async
    screen.app = app
    screen.loop, screen.thread = asyncio.get_running_loop(), threading.get_ident()
    await editor._run(app, anyio.Event())
    editor.end_input()
    editor._received.close()
    assert drawn == ["thinking\n> /model\na warning, unfinished"]
    assert terminal.getvalue() == "thinking\n> /model\na warning, unfinished\n"
