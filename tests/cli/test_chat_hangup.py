"""`dsh chat` when its terminal goes away (its window closed, the ssh connection
dropped), with the line editor and with the canonical reader. The tests close the
pseudo-terminal's master side as a terminal emulator does: dsh's reads of it end, its
writes to it fail (EIO) and, as the session leader, it is sent SIGHUP. The chat must end
by its ordinary way out (a traceback is an unhandled exception: status 1; a failed flush
at exit: 120), and what was done must be in the stored session.

Nothing can be read from the terminal once it is gone: what the tests check is the exit
status and the session on disk."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import text_reply
from hangup_support import dsh_in_terminal, hang_up, stored, turn_ends

pytestmark = pytest.mark.plugins("persistence")


@pytest.fixture(params=["editor", "canonical"])
def hangup_env(cli_env: dict[str, str], request: pytest.FixtureRequest) -> dict[str, str]:
    """A chat with dsh-persistence, with the line editor or the canonical reader, its
    output buffered as without a test (no PYTHONUNBUFFERED: what waits in a buffer is
    flushed at exit)."""
    env = {k: v for k, v in cli_env.items() if k not in ("DSH_CHAT_EDITOR", "PYTHONUNBUFFERED")}
    env["TERM"] = "xterm-256color"
    env["DSH_LOAD_PLUGINS"] = "persistence"
    if request.param == "editor":
        pytest.importorskip(
            "prompt_toolkit", reason="the editor needs pip install 'dsh-core[chat]'"
        )
    else:
        env["DSH_CHAT_EDITOR"] = "0"
    return env


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Any]:
    """``start(server, env, ignore_sighup=False)``: see ``chat_in_terminal``; every chat
    started is closed at the end of the test."""
    children: list[pexpect.spawn] = []

    def started(server: Any, env: dict[str, str], ignore_sighup: bool = False) -> Any:
        children.append(chat_in_terminal(server, env, tmp_path, ignore_sighup))
        return children[-1]

    yield started
    for child in children:
        child.close(force=True)


def chat_in_terminal(server: Any, env: dict[str, str], cwd: Path, ignore_sighup: bool) -> Any:
    """``dsh chat`` in a pseudo-terminal at its first prompt (``ignore_sighup``: started
    with SIGHUP ignored, as from ``trap '' HUP``: the terminal's end is only its input
    ending)."""
    model = f"openai-compatible:tiny@{server.url}"
    child = dsh_in_terminal("-m", model, "chat", env=env, cwd=cwd, ignore_sighup=ignore_sighup)
    child.expect_exact("> ", timeout=30)
    editor = "DSH_CHAT_EDITOR" not in env
    assert ("\x1b[?2004h" in child.logfile_read.getvalue()) == editor  # bracketed paste on
    return child


def test_the_terminal_closing_at_the_idle_prompt_ends_the_chat(
    model_server: Any, start: Any, hangup_env: dict[str, str]
) -> None:
    server = model_server([text_reply("First answer.")])
    child = start(server, hangup_env)
    child.sendline("hello")
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    child.send("half typed")  # not sent: no Enter
    child.expect_exact("typed")
    # SIGHUP (129) comes with the end of input; should the chat see the end first, it
    # quits as on Ctrl-D (0): either is its way out, not a failure (1, 120)
    assert hang_up(child) in (0, 128 + signal.SIGHUP)
    assert turn_ends(stored(hangup_env)) == ["completed"]
    assert len(server.bodies()) == 1


def test_the_terminal_closing_during_a_turn_stops_it_and_saves_it(
    model_server: Any, start: Any, hangup_env: dict[str, str]
) -> None:
    server = model_server([text_reply("First answer."), text_reply("work", then="stall")])
    child = start(server, hangup_env)
    child.sendline("hello")
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    child.sendline("a long task")
    child.expect_exact("work")
    child.send("typed meanwhile")
    child.expect_exact("meanwhile")
    assert hang_up(child) == 128 + signal.SIGHUP
    events = stored(hangup_env)
    assert turn_ends(events) == ["completed", "aborted"]
    prompts = [e["data"]["content"] for e in events if e["type"] == "user/message"]
    assert prompts == ["hello", "a long task"]


@pytest.mark.parametrize("when", ["idle", "during a turn"])
def test_with_sighup_ignored_the_chat_ends_with_its_input(
    model_server: Any, start: Any, hangup_env: dict[str, str], when: str
) -> None:
    """No SIGHUP comes: the terminal's end is the end of input (as Ctrl-D): a running
    turn goes on to its end, its answer written nowhere, and is saved; status 0."""
    slow = text_reply("The ", "whole ", "answer.", pause=0.5)
    server = model_server([text_reply("First answer."), slow])
    child = start(server, hangup_env, ignore_sighup=True)
    child.sendline("hello")
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    if when == "during a turn":
        child.sendline("a long task")
        child.expect_exact("The")
    assert hang_up(child) == 0
    events = stored(hangup_env)
    ends = ["completed"] if when == "idle" else ["completed", "completed"]
    assert turn_ends(events) == ends
    if when == "during a turn":
        (*_, last) = [e["data"]["message"] for e in events if e["type"] == "assistant/message"]
        assert last["content"] == [{"type": "text", "text": "The whole answer."}]


@pytest.mark.parametrize("when", ["idle", "during a turn"])
def test_sighup_with_the_terminal_open_ends_the_chat_and_says_so(
    model_server: Any, start: Any, hangup_env: dict[str, str], when: str
) -> None:
    """`kill -HUP`, the terminal still there: what the chat writes on its way out can be
    read, and it is no traceback; the editor leaves bracketed paste mode."""
    server = model_server([text_reply("First answer."), text_reply("work", then="stall")])
    child = start(server, hangup_env)
    child.sendline("hello")
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    if when == "during a turn":
        child.sendline("a long task")
        child.expect_exact("work")
    child.kill(signal.SIGHUP)
    child.expect_exact("dsh: terminated")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 128 + signal.SIGHUP
    written = child.logfile_read.getvalue()
    assert "Traceback" not in written
    assert written.rfind("\x1b[?2004l") >= written.rfind("\x1b[?2004h")
    ends = ["completed"] if when == "idle" else ["completed", "aborted"]
    assert turn_ends(stored(hangup_env)) == ends


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
async def test_a_read_failing_with_eio_as_the_terminal_closes_is_the_end_of_input(
    monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    """Linux answers EIO, not EOF, to a read of a pseudo-terminal made while its other
    side is closing (a read blocked then gets it every time; one made after, EOF): the
    chat above met it now and then (status 120: the traceback could not be written).
    At a terminal that EIO is the end of input; from a pipe or a file it is an I/O
    error, raised (what could not be read is not taken for the end)."""
    import errno
    import os
    import pty

    from dsh import _cli_terminal

    writer, reader = pty.openpty() if terminal else os.pipe()[::-1]
    real_read = os.read

    def read(fd: int, size: int) -> bytes:
        if fd == reader:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real_read(fd, size)

    os.write(writer, b"hello\n")  # something to read: the wait for input returns
    with os.fdopen(reader) as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        monkeypatch.setattr(_cli_terminal.os, "read", read)
        lines = _cli_terminal.lines_typed()
        if terminal:
            assert [line async for line in lines] == [None]
        else:
            with pytest.raises(OSError, match="Input/output error"):
                await lines.__anext__()
    os.close(writer)


async def test_one_read_failing_with_eio_at_the_terminal_is_not_yet_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """EIO also comes from a read begun in the background when dsh is brought back
    (``fg``) before it looks whether it is in the background: the terminal is read once
    more, and only a second EIO in a row is the end of input."""
    import errno
    import os
    import pty

    from dsh import _cli_terminal

    writer, reader = pty.openpty()
    real_read = os.read
    failed: list[int] = []

    def read(fd: int, size: int) -> bytes:
        if fd == reader and not failed:
            failed.append(fd)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real_read(fd, size)

    os.write(writer, b"hello\n")
    with os.fdopen(reader) as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        monkeypatch.setattr(_cli_terminal.os, "read", read)
        lines = _cli_terminal.lines_typed()
        assert await lines.__anext__() == "hello"
        await lines.aclose()
    assert failed == [reader]
    os.close(writer)
