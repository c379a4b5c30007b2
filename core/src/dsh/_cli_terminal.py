"""Lines typed on the terminal (stdin), as ``dsh chat`` and ``dsh run`` read them; the
questions put to the person at it are ``_cli_approvals``'.

A dsh started in the background of its terminal (``dsh run ... &`` in an interactive
shell) does not read it: the kernel would stop it (SIGTTIN) until ``fg``. It reads once
it is in the foreground again, and a question asked meanwhile is denied (no one can be
asked), so that the run ends instead of waiting for a ``fg`` that may never come."""

from __future__ import annotations

import errno
import os
import re
import select
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import suppress

import anyio
import anyio.lowlevel

__all__ = [
    "BACKGROUND_POLL",
    "PromptLine",
    "drop_typed",
    "in_background",
    "lines_typed",
    "nothing_back",
    "taken",
    "utf8_only",
]

#: A byte that was not UTF-8, as the decoding with ``surrogateescape`` keeps it.
_NOT_UTF8 = re.compile("[\ud800-\udfff]")
#: A UTF-8 byte order mark, which an editor on Windows may put before the first line.
_BOM = "\ufeff".encode()
#: How often a dsh in the background looks whether it has been brought to the foreground.
BACKGROUND_POLL = 0.2


def in_background(fd: int) -> bool:
    """Whether ``fd`` is this process's controlling terminal and another process group
    is in its foreground (``dsh run ... &``, or Ctrl-Z then ``bg``): reading it would
    stop this one (SIGTTIN). False for a pipe, a file, or a terminal not controlling."""
    try:
        return os.tcgetpgrp(fd) != os.getpgrp()
    except (AttributeError, OSError):  # not a terminal, none controlling, or Windows
        return False


class _Closing(Exception):
    """A read of the terminal failed with EIO while this process is in its foreground."""


# The kernel holds a line typed in canonical mode in a buffer of 4096 bytes, its line end
# included: of a longer line only the first 4095 bytes and the line end reach dsh.
_CANONICAL_LINE = 4095


def _cut_note() -> str:
    """What dsh says of a line the terminal cut at 4095 bytes: to install the line
    editor, or, when it is installed (found, not imported), to turn it on."""
    from importlib.util import find_spec

    if find_spec("prompt_toolkit") is None:
        editor = "install the line editor: pip install 'dsh-core[chat]'"
    else:  # installed, and off
        editor = (
            "turn the line editor on: it is off when DSH_CHAT_EDITOR is 0 or off, TERM "
            "is dumb, or stdin or stderr is not a terminal"
        )
    return (
        "(that line was dropped: it reached the terminal's limit of 4095 bytes, so its "
        f"end may be lost; give long text with `dsh run - < file`, or {editor})"
    )


def _read(fd: int, terminal: bool) -> bytes | None:
    """Up to 4096 bytes of ``fd``; None if this process went into the background of the
    terminal since it looked (the read fails with EIO instead of stopping it: SIGTTIN is
    blocked for the read, on this thread only, so no child inherits it). At a
    ``terminal``, EIO otherwise raises ``_Closing``: Linux answers EIO to a read made
    while the other side of a pseudo-terminal is closing (its window closed), EOF to
    one made after it has closed; which a read gets is a race. (So is a process sent to
    the background and brought back between its read and its look: ``lines_typed``
    reads once more before taking EIO for the end.)"""
    ttin = getattr(signal, "SIGTTIN", None)
    if ttin is None or not hasattr(signal, "pthread_sigmask"):
        return os.read(fd, 4096)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {ttin})
    try:
        return os.read(fd, 4096)
    except OSError as error:
        if error.errno != errno.EIO or not terminal:  # a file's I/O error is not its end
            raise
        if in_background(fd):
            return None
        raise _Closing from None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _waiting(fd: int) -> bool:
    """Whether more input is there to be read already: at a terminal in canonical mode,
    a whole line more (what a paste brings behind a line end)."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return False


def utf8_only(text: str) -> tuple[str, str | None]:
    """A line read with ``surrogateescape`` (as prompt_toolkit reads keys), each byte
    that was not UTF-8 replaced by U+FFFD; and a note saying how many were (None when
    none was). The line is kept, not refused (``dsh run -`` refuses its stdin): a
    person typing at a terminal set to another encoding, or pasting, loses nothing
    typed, and the note says what the model got."""
    text, count = _NOT_UTF8.subn("\ufffd", text)
    if not count:
        return text, None
    subject = "1 byte that was" if count == 1 else f"{count} bytes that were"
    verb = "was" if count == 1 else "were"
    return text, f"({subject} not UTF-8 {verb} replaced by \ufffd in the line sent)"


def _decoded(data: bytes) -> str:
    """``data`` as text, each byte that was not UTF-8 a lone surrogate, for ``taken``
    to replace (and say so) where the line is used, not where it is read ahead."""
    return data.decode(errors="surrogateescape")


def taken(line: str) -> str:
    """A line of ``lines_typed`` as it is used (a prompt, a steer, an answer): each byte
    that was not UTF-8 a U+FFFD, said on stderr."""
    text, note = utf8_only(line)
    if note is not None:
        print(note, file=sys.stderr)
    return text


class PromptLine:
    """The ``> `` chat writes at a terminal in canonical mode, and whether the cursor is
    still on its line (nothing typed and sent since: the echo of Enter ends it)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.open = False
        self._ended = False

    def show(self) -> None:
        """Write the prompt, unless chat is quitting (``end``)."""
        if self._ended or not self.text:
            return
        sys.stderr.write(self.text)
        sys.stderr.flush()
        self.open = True

    def end(self) -> None:
        """Chat quits: end the prompt's line if the cursor is on it, as the line editor
        does (the shell's prompt comes on a line of its own), and show no prompt again."""
        self._ended = True
        if self.open:
            self.open = False
            sys.stderr.write("\n")
            sys.stderr.flush()


async def lines_typed(prompt: PromptLine | None = None) -> AsyncIterator[str | None]:
    """Lines typed on stdin, read without a blocking thread; None at end of input. The
    text after the last line end is a last line when it comes from a pipe or a file; at
    a terminal it is a line left unfinished (Ctrl-D twice to quit), which is not sent.
    At a terminal, lines that arrive together (a block pasted without the brackets: a
    line end with more already behind it, no one types that fast) are one item, joined
    by line ends, as the line editor takes them; a pipe or a file gives line by line.
    While dsh is in the background of the terminal nothing is read (``in_background``).
    A byte order mark before the first line of a pipe or a file is dropped, as ``dsh
    run -`` drops it. A line read, or the note on an unfinished one, ends the line of ``prompt``."""
    fd = sys.stdin.fileno()
    terminal = os.isatty(fd)
    pollable = True
    buffer = b""
    closing = False  # the last read failed with EIO in the foreground
    marked = not terminal  # a pipe's or a file's byte order mark (Windows) is dropped
    while True:
        if in_background(fd):  # what is typed is the shell's: look again later
            await anyio.sleep(BACKGROUND_POLL)
            continue
        if pollable:
            try:
                await anyio.wait_readable(fd)
            except PermissionError:
                # epoll refuses regular files and /dev/null (EPERM); reading them never
                # blocks, so read on, letting the other tasks run between reads.
                pollable = False
        if not pollable:
            await anyio.lowlevel.checkpoint()
        try:
            data = _read(fd, terminal)
        except _Closing:
            if not closing:  # a window closing answers EIO (or EOF) again at once
                closing = True
                continue
            data = b""  # the end, as EOF
        else:
            closing = False
        if data is None:  # sent to the background while it waited
            continue
        if not data:
            buffer = buffer.removeprefix(_BOM) if marked else buffer  # a file of a BOM alone
            if buffer and not terminal:  # after a hangup isatty() is False: ask first
                yield _decoded(buffer)
            elif buffer:
                print("\n(the unfinished line was not sent)", file=sys.stderr)
                if prompt is not None:
                    prompt.open = False
            yield None
            return
        buffer += data
        if marked:
            if _BOM.startswith(buffer):  # the mark, or the start of it: wait for more
                continue
            buffer, marked = buffer.removeprefix(_BOM), False
        if prompt is not None and b"\n" in buffer:
            prompt.open = False
        if terminal and b"\n" in buffer:
            if _waiting(fd):  # more of a block that came at once
                continue
            block, buffer = buffer.rsplit(b"\n", 1)
            if any(len(line) >= _CANONICAL_LINE for line in block.split(b"\n")):
                print(_cut_note(), file=sys.stderr)
                yield ""  # nothing sent (a question waiting is denied); the prompt comes again
                continue
            lines = _decoded(block).split("\n")
            yield "\n".join(line.rstrip("\r") for line in lines)
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield _decoded(line).rstrip("\r")


def drop_typed() -> Callable[[], None]:
    """Drop what was typed on the terminal and not yet sent (a line half typed, which
    the terminal holds in canonical mode until Enter), as the terminal drops it itself
    at a Ctrl-C. Returns what gives it back: nothing (it is gone)."""
    try:
        import termios
    except ImportError:  # no POSIX terminal (Windows)
        return nothing_back
    # SIGTTOU blocked: a dsh not in the foreground gets an error, rather than be stopped
    ttou = getattr(signal, "SIGTTOU", None)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {ttou}) if ttou is not None else None
    try:
        with suppress(OSError, termios.error, ValueError):
            if sys.stdin is not None and sys.stdin.isatty():
                termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    finally:
        if blocked is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return nothing_back


def nothing_back() -> None:
    pass
