"""What the line editor draws above its input line (dsh/_cli_screen.py, the streams'
unfinished lines and the lines typed after them): a line taller than the terminal shows
its newest text as it streams, and at the editor's exit all of it is printed in the
order it was drawn (an unfinished line, the lines typed after it, held until it ends,
then a stream's line begun after those)."""

from __future__ import annotations

import asyncio
import io
import threading
from types import SimpleNamespace
from typing import Any

import anyio
import pexpect
from cli_support import text_reply
from editor_support import ROWS, screen_when

from dsh._cli_editor import LineEditor
from dsh._cli_screen import TerminalStream


def test_an_unfinished_line_taller_than_the_terminal_shows_its_end_as_it_streams(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    """Not its first screenful, frozen until the line ends."""
    pieces = [f"[piece {n:03}] " + "x" * 188 for n in range(ROWS + 10)]  # a row each
    server = model_server([text_reply(*pieces, pause=0.02, then="stall")])
    child = chat(server, env=editor_env, plugins="")
    child.sendline("go")
    last = f"[piece {len(pieces) - 1:03}]"
    rows = screen_when(child, lambda rows: last in "".join(rows), "the newest text")
    assert rows[-1].startswith(last), rows[-3:]
    child.sendintr()
    child.expect_exact("[turn 1 aborted")
    child.sendintr()
    child.expect(pexpect.EOF)


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
