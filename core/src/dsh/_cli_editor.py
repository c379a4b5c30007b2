"""``dsh chat``'s line editor: one prompt_toolkit Application for the whole chat (the
``chat`` extra, ``pip install 'dsh-core[chat]'``).

The kernel's canonical mode, which chat reads otherwise, cuts a line at 4095 bytes and
hands over a pasted block line by line. Here a bracketed paste lands in the input line
as one piece and Enter sends it as one prompt, however long; so do lines that arrive
together without the brackets (a line end with more input already behind it is a line
of the block: no one types that fast).

While the Application runs, what dsh writes to a stream that is the terminal goes
through ``_cli_screen.TerminalStream``: whole lines are printed above the Application,
in the order written; each stream's unfinished line (an answer still streaming) is drawn
by the Application itself, above the input line, so that the prompt is not redrawn in
the middle of it. ``DSH_CHAT_EDITOR=0`` (or ``off``) keeps the canonical reader.
"""

from __future__ import annotations

import asyncio
import math
import os
import select
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager
from typing import TYPE_CHECKING, TextIO

import anyio

from dsh._cli_screen import Screen, streams_through
from dsh._cli_terminal import utf8_only
from dsh._render import STEERED
from dsh._visible import visible

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyPressEvent

__all__ = ["LineEditor", "line_editor"]


def _waiting(stream: TextIO) -> bool:
    """Whether input is there to be read already (what a paste brings after a line end
    when the editor reads less than all of it at once)."""
    try:
        return bool(select.select([stream.fileno()], [], [], 0)[0])
    except (OSError, ValueError):
        return False


def line_editor() -> LineEditor | None:
    """The editor when it can serve: stdin and stderr are terminals, TERM is not
    ``dumb``, prompt_toolkit is installed and ``DSH_CHAT_EDITOR`` is not ``0``/``off``;
    None otherwise (chat reads the terminal in canonical mode)."""
    if os.environ.get("DSH_CHAT_EDITOR", "").strip().lower() in ("0", "off"):
        return None
    if os.environ.get("TERM") == "dumb" or not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None
    try:
        import prompt_toolkit  # noqa: F401  (~190 ms: only here, only when used)
    except ImportError:
        return None
    return LineEditor()


_SET_ASIDE = "  (the line you were typing is set aside until this is answered)"


class LineEditor:
    """The input line of ``dsh chat`` and the screen above it; ``lines()`` yields what
    Enter sends (None at the end of input), as ``lines_typed`` does."""

    def __init__(self) -> None:
        self._screen = Screen()
        self._err = sys.stderr  # the terminal, not the stream chat's output goes through
        self._send, self._received = anyio.create_memory_object_stream[str | None](math.inf)
        self._ended = False
        #: Whether "> " shows: the agent is idle or a question waits (set by chat).
        self.ready: Callable[[], bool] = lambda: True
        #: Ctrl-C: what chat does on SIGINT (the terminal is raw: no signal comes).
        self.on_interrupt: Callable[[], object] = lambda: None
        #: Whether Ctrl-C with text typed clears the input line instead (set by chat:
        #: when Ctrl-C would quit it, at an idle prompt).
        self.clears_line: Callable[[], bool] = lambda: False
        #: Whether a permission question waits (set by chat): Ctrl-C then also clears
        #: the input line, which held the answer, not a prompt for later.
        self.asking: Callable[[], bool] = lambda: False
        #: The prompt a line sends, None for a command (set by chat): a line sent while
        #: "> " does not show (the agent works) steers the turn with it, and is shown
        #: once, as a steer, in place of the line typed.
        self.steer_of: Callable[[str], str | None] = lambda text: None
        self._buffer: Buffer | None = None

    def set_aside(self) -> Callable[[], None]:
        """A permission question shows: the text typed and not sent (a ``y`` typed while
        the turn streamed, a steer half written) leaves the input line, so that only
        what is typed for the question answers it; it is said, and the function
        returned puts it back once the question is answered (before what was typed
        since, if anything)."""
        buffer = self._buffer
        if buffer is None or not buffer.text:
            return lambda: None
        from prompt_toolkit.document import Document

        kept = buffer.document
        buffer.reset()
        print(_SET_ASIDE, file=sys.stderr, flush=True)  # below the question, as it is written

        def give_back() -> None:
            typed = buffer.text
            cursor = len(kept.text) + len(typed) if typed else kept.cursor_position
            buffer.document = Document(kept.text + typed, cursor)
            self._screen.redraw()

        return give_back

    def streams(self) -> AbstractContextManager[None]:
        """sys.stdout and sys.stderr through the screen, each if it is the terminal."""
        return streams_through(self._screen)

    async def lines(self) -> AsyncIterator[str | None]:
        async with self._received:
            async for line in self._received:
                yield line
                self.refresh()  # chat has acted on it: the agent may be busy, or idle

    def refresh(self) -> None:
        """Redraw: what ``ready()`` says may have changed."""
        self._screen.redraw()

    def end_input(self) -> None:
        """No more lines are taken (chat quits once the agent is idle)."""
        self._ended = True
        self._send.close()
        self._screen.redraw()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The Application on the terminal for the body's duration; at the end the
        terminal is as it was and the streams' unfinished lines are printed below."""
        app = self._screen.app = self._application()
        self._screen.loop, self._screen.thread = asyncio.get_running_loop(), threading.get_ident()
        async with anyio.create_task_group() as tg:
            started = anyio.Event()
            tg.start_soon(self._run, app, started)
            await started.wait()
            try:
                yield
            finally:
                if app.is_running and app.future is not None and not app.future.done():
                    app.exit()

    async def _run(self, app: Application[None], started: anyio.Event) -> None:
        try:
            # SIGINT stays with chat's receiver (kill -INT); Ctrl-C is a key here.
            await app.run_async(
                pre_run=started.set, handle_sigint=False, set_exception_handler=False
            )
        except EOFError:  # the input ended: the terminal went away (it sends SIGHUP)
            self._end_of_input()
        except OSError as error:  # it went away while being written to (EIO)
            self._screen.gone(error)
            self._end_of_input()
        finally:
            started.set()
            self._screen.finish()

    def _prompt(self) -> StyleAndTextTuples:
        # In the terminal's own colour, named: the renderer skips a trailing space that
        # has no colour (it moves the cursor past it), and "> " would not be written.
        return [("fg:ansidefault", "> ")] if self.ready() and not self._ended else []

    def _accept(self, buffer: Buffer) -> bool:
        if self._ended:
            return False
        # bytes typed that are not UTF-8 reach the buffer as lone surrogates
        text, not_utf8 = utf8_only(buffer.text)
        text = text.removesuffix("\n")  # a pasted block's last line end
        shown = visible(text).replace("\n", "\n  ")
        steer = None if self._prompt() else self.steer_of(text)
        if self._prompt():
            echo = f"> {shown}"
        elif steer is not None:
            echo = STEERED + visible(steer).replace("\n", "\n  ")
        else:
            echo = f"  {shown}" if "\n" in text else shown
        self._screen.echo(self._err, echo + "\n")
        if not_utf8 is not None:
            self._screen.echo(self._err, not_utf8 + "\n")
        self._send.send_nowait(text)
        return False  # the input line is emptied

    def _end_of_input(self, note: str = "") -> None:
        if note:
            self._screen.above(self._err, note + "\n")
        if not self._ended:
            self._send.send_nowait(None)
        self.end_input()

    def _application(self) -> Application[None]:
        from prompt_toolkit.application import Application
        from prompt_toolkit.buffer import Buffer
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.history import InMemoryHistory
        from prompt_toolkit.input import create_input
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.keys import Keys
        from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, Window
        from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
        from prompt_toolkit.layout.processors import BeforeInput
        from prompt_toolkit.output.vt100 import Vt100_Output

        buffer = Buffer(multiline=False, accept_handler=self._accept, history=InMemoryHistory())
        self._buffer = buffer
        keys = KeyBindings()

        @keys.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            line = event.current_buffer
            clears = bool(line.text) and self.clears_line()  # as in bash: not the chat
            if clears or (line.text and self.asking()):  # the question's answer goes too
                line.save_to_undo_stack()  # Ctrl-_ (undo) brings it back
                line.text = ""
            if not clears:
                self.on_interrupt()

        @keys.add("c-d")
        def _eof(event: KeyPressEvent) -> None:
            line = event.current_buffer
            if not line.text:
                self._end_of_input()
            elif line.cursor_position < len(line.text):
                line.delete()  # as in emacs (and bash): the character under the cursor
            elif event.is_repeat:  # twice at the end of a line, as in canonical mode
                self._end_of_input("(the unfinished line was not sent)")

        @keys.add("enter")
        def _enter(event: KeyPressEvent) -> None:
            if event.key_processor.input_queue or _waiting(sys.stdin):
                # more came with it: a line end of a block pasted without the brackets
                # (or written at once), which is one prompt, as a bracketed paste is
                event.current_buffer.insert_text("\n")
            else:
                event.current_buffer.validate_and_handle()

        @keys.add(Keys.Vt100MouseEvent)
        def _mouse(event: KeyPressEvent) -> None:
            """Nothing: the chat uses no mouse, and prompt_toolkit reads a colour code
            typed or pasted unbracketed (ESC [31m) as a mouse event it then fails on."""

        @keys.add("escape", "[", "I")
        @keys.add("escape", "[", "O")
        def _focus(event: KeyPressEvent) -> None:
            """Nothing: a terminal reports its window gaining or losing focus so (when a
            program left focus reporting on), and prompt_toolkit, which knows neither,
            put ``[I`` and ``[O`` into the line."""

        @keys.add("c-z")
        def _suspend(event: KeyPressEvent) -> None:
            event.app.suspend_to_background()  # as the terminal's Ctrl-Z does without it

        screen = self._screen

        def drawn() -> StyleAndTextTuples:
            # the cursor at the end: what is taller than the terminal shows its end,
            # the newest text, not its first screenful until the line ends
            return [("", screen.tails()), ("[SetCursorPosition]", "")]

        tails = ConditionalContainer(
            Window(
                FormattedTextControl(drawn),
                wrap_lines=True,
                dont_extend_height=True,
            ),
            filter=Condition(lambda: bool(screen.tails())),
        )
        line = Window(
            BufferControl(buffer, input_processors=[BeforeInput(self._prompt)]),
            wrap_lines=True,
            dont_extend_height=True,
            get_line_prefix=lambda number, wrapped: "  " if number and not wrapped else "",
        )
        output = Vt100_Output.from_pty(self._err, term=os.environ.get("TERM"))
        output.enable_cpr = False  # a cursor position request waits (and warns) on a pty
        return Application(
            layout=Layout(HSplit([tails, line])),
            key_bindings=keys,
            output=output,
            input=create_input(sys.stdin),
            erase_when_done=True,
        )
