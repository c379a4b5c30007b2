"""`dsh chat`'s line editor (dsh/_cli_editor.py, the `chat` extra) in a pseudo-terminal:
a pasted block is one prompt, a long line arrives whole, a streamed answer is not cut by
the prompt, Ctrl-C and Ctrl-D act as in canonical mode, a permission question is
answered at the prompt, and the terminal is left as it was. Where a test checks what
the person sees it renders the bytes written with pyte."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import text_reply, tool_call_reply
from editor_support import (
    COLUMNS,
    ROWS,
    in_shell,
    quit_after_turn,
    row_of,
    screen,
    screen_when,
    users,
)


def test_a_bracketed_paste_of_lines_is_one_prompt(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    server = model_server([text_reply("It is a KeyError.")])
    child = chat(server, env=editor_env, plugins="")
    block = "why does this fail?\nTraceback (most recent call last):\nKeyError: 'x'"
    child.send(f"\x1b[200~{block}\n\x1b[201~")  # as a terminal pastes, its last line end too
    child.send("\r")
    rows = quit_after_turn(child)
    assert users(server) == [[block]]
    first = row_of(rows, "> why does this fail?")
    assert rows[first + 1 : first + 3] == [
        "  Traceback (most recent call last):",
        "  KeyError: 'x'",
    ]


@pytest.mark.parametrize("lines", [3, 96])
def test_lines_that_arrive_together_are_one_prompt(
    model_server: Any, chat: Any, editor_env: dict[str, str], lines: int
) -> None:
    """A block pasted without the brackets (or written at once): a line end with more
    input right behind it is a line of the block, the last one sends it. 96 lines of 32
    bytes are more than the editor reads at once (1024 bytes), and end where a read
    does: the input still waiting counts too."""
    server = model_server([text_reply("One answer.")])
    child = chat(server, env=editor_env, plugins="")
    block = "\n".join(f"line {n:05} of the pasted block." for n in range(lines))
    assert all(len(line) == 31 for line in block.split("\n"))
    child.send(block + "\n")
    rows = quit_after_turn(child)
    assert users(server) == [[block]]
    assert len(server.bodies()) == 1
    last = row_of(rows, f"  line {lines - 1:05} of the pasted block.")
    assert rows[last + 1] == "One answer."  # shown as one prompt, its lines set in
    if lines < ROWS:  # all of it still on the screen
        assert rows[last - lines + 1] == "> line 00000 of the pasted block."


def test_a_line_of_5000_characters_arrives_whole(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    server = model_server([text_reply("Read it.")])
    child = chat(server, env=editor_env, plugins="")
    line = "0123456789" * 500
    child.sendline(line)
    quit_after_turn(child)
    assert users(server) == [[line]]


def test_a_streamed_answer_and_a_steer_typed_meanwhile(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    """The answer's line is whole on the screen (no prompt drawn into it), the steer
    and the next step's answer are lines of their own, and "> " comes back last. The
    steer shows once, marked as one: not the line typed and then the note again."""
    slow = text_reply("thinking", ".", ".", ".", ".", ".", pause=0.4)
    server = model_server([slow, text_reply("Steered.")])
    child = chat(server, env=editor_env, plugins="")
    child.sendline("start")
    child.expect_exact("thinking")
    child.sendline("use metric units")
    child.expect_exact("↪ steered by you: use metric units")
    rows = quit_after_turn(child)
    answer = row_of(rows, "thinking", row_of(rows, "> start"))
    assert rows[answer] == "thinking....."
    steered = row_of(rows, "↪ steered by you: use metric units", answer)
    assert steered == answer + 1
    assert [row for row in rows if "metric" in row] == ["↪ steered by you: use metric units"]
    assert rows[steered + 1] == "Steered."
    assert rows[steered + 2].startswith("[turn 1 completed")
    assert rows[-1] == ">"  # the prompt, its space a cursor position
    assert users(server)[1][-1] == "use metric units"


def test_a_line_typed_while_an_answer_streams_shows_after_the_answers_line(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    """Below the answer's unfinished line while it goes on, then printed once that line
    ends: not above it, where it would look typed before the answer began."""
    slow = text_reply("thinking", ".", ".", ".", ".", ".", "\n", "Done.", pause=0.4)
    server = model_server([slow, text_reply("Noted.")])
    child = chat(server, env=editor_env, plugins="")
    child.sendline("start")
    child.expect_exact("thinking")
    child.sendline("/queue and then this")

    def below_the_unfinished_answer(rows: list[str]) -> bool:
        answer = row_of(rows, "thinking")
        return rows[answer] != "thinking....." and rows[answer + 1 :] == ["/queue and then this"]

    screen_when(child, below_the_unfinished_answer, "the line below the answer's")
    rows = screen_when(
        child,
        lambda rows: rows[-1] == ">" and any(r.startswith("[turn 2 completed") for r in rows),
        "the end of turn 2",
    )
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    answer = row_of(rows, "thinking", row_of(rows, "> start"))
    assert rows[answer : answer + 3] == ["thinking.....", "/queue and then this", "Done."]
    assert users(server)[1] == ["start", "and then this"]


def test_a_commands_answer_during_a_turn_shows_after_the_commands_line(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    """The answer of ``/model`` (printed at once) waits with the line typed for the
    answer's unfinished line to end, below it: it was printed above it, the line typed
    coming after its own answer (the chat journey review)."""
    slow = text_reply("thinking", ".", ".", ".", ".", ".", "\n", "Done.", pause=0.4)
    server = model_server([slow])
    child = chat(server, env=editor_env, plugins="")
    child.sendline("start")
    child.expect_exact("thinking")
    child.sendline("/model")

    def below_the_unfinished_answer(rows: list[str]) -> bool:
        answer = row_of(rows, "thinking")
        return rows[answer] != "thinking....." and rows[answer + 1 :] == [
            "/model",
            "  openai-compatible:tiny",
        ]

    screen_when(child, below_the_unfinished_answer, "the command and its answer below")
    rows = quit_after_turn(child)
    answer = row_of(rows, "thinking", row_of(rows, "> start"))
    assert rows[answer : answer + 4] == [
        "thinking.....",
        "/model",
        "  openai-compatible:tiny",
        "Done.",
    ]


def test_ctrl_c_cancels_then_quits_and_the_terminal_is_restored(
    model_server: Any, editor_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("working", then="stall")])
    model = f"openai-compatible:tiny@{server.url}"
    env = {**editor_env, "DSH_LOAD_PLUGINS": ""}
    child = in_shell(
        f'stty -g > before; "$0" -m dsh.cli -m {model} chat; echo "status $?"; stty -g > after',
        env,
        tmp_path,
    )
    try:
        child.expect_exact("> ")
        child.sendline("long task")
        child.expect_exact("working")
        child.sendintr()
        child.expect_exact("(cancelled; Ctrl-C again to quit)")
        child.expect_exact("[turn 1 aborted")
        rows = screen(child)
        child.sendintr()
        child.expect_exact("status 0")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    answer = row_of(rows, "working")
    assert rows[answer + 1] == "(cancelled; Ctrl-C again to quit)"  # the answer's line ended
    assert (tmp_path / "after").read_text() == (tmp_path / "before").read_text()
    written = child.logfile_read.getvalue()
    assert "\x1b[?2004h" in written
    assert written.rfind("\x1b[?2004l") > written.rfind("\x1b[?2004h")  # paste mode off
    assert "Traceback" not in written


def test_ctrl_d_at_an_empty_prompt_quits(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    server = model_server([])
    child = chat(server, env=editor_env, plugins="")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert server.bodies() == []


@pytest.mark.plugins("permissions")
def test_a_permission_question_is_answered_at_the_prompt(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Done.")]
    )
    child = chat(server, env=editor_env, plugins="permissions")
    child.sendline("run it")
    child.expect_exact("allow? y = once")
    child.expect_exact("> ")  # a question waits: the prompt shows although a turn runs
    asked = screen(child)
    child.sendline("y")
    child.expect_exact("Done.")
    rows = quit_after_turn(child)
    assert asked[-2].startswith("  allow? y = once")
    assert asked[-1] == ">"
    row_of(rows, "> y", row_of(rows, "  allow? y = once"))
    assert "approved-output" in server.bodies()[1]["messages"][-1]["content"]


def test_a_byte_that_is_not_utf8_is_sent_as_u_fffd(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    server = model_server([text_reply("Coffee.")])
    child = chat(server, env=editor_env, plugins="")
    os.write(child.child_fd, b"caf\xe9 please\r")
    rows = quit_after_turn(child)
    assert users(server) == [["caf\ufffd please"]]
    said = row_of(rows, "> caf\ufffd please") + 1  # said once, below the line sent
    assert rows[said] == "(1 byte that was not UTF-8 was replaced by \ufffd in the line sent)"


def test_with_stdout_redirected_the_answer_goes_to_the_file(
    model_server: Any, editor_env: dict[str, str], tmp_path: Path
) -> None:
    """`dsh chat > file`: the editor still reads the terminal; the answer is in the file
    only, the notes and the prompt on the screen."""
    server = model_server([text_reply("One ", "answer.")])
    model = f"openai-compatible:tiny@{server.url}"
    env = {**editor_env, "DSH_LOAD_PLUGINS": ""}
    child = in_shell(f'"$0" -m dsh.cli -m {model} chat > out.txt', env, tmp_path)
    try:
        child.expect_exact("> ")
        child.sendline("hello")
        rows = quit_after_turn(child)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert (tmp_path / "out.txt").read_text() == "One answer.\n"
    assert "\x1b[?2004h" in child.logfile_read.getvalue()  # the editor was in use
    assert row_of(rows, "[turn 1 completed") == row_of(rows, "> hello") + 1
    assert not any("answer." in row for row in rows)


@pytest.mark.parametrize("setting", ["0", "off"])
def test_dsh_chat_editor_0_keeps_the_canonical_reader(
    model_server: Any, chat: Any, editor_env: dict[str, str], setting: str
) -> None:
    child = chat(model_server([]), env={**editor_env, "DSH_CHAT_EDITOR": setting}, plugins="")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert "\x1b[?2004h" not in child.logfile_read.getvalue()  # no bracketed paste mode


def test_ctrl_z_suspends_the_chat_and_fg_brings_back_the_line(
    model_server: Any, editor_env: dict[str, str], tmp_path: Path
) -> None:
    """In raw mode Ctrl-Z is a key: the editor stops the process as the terminal would."""
    server = model_server([text_reply("Done.")])
    env = {**editor_env, "DSH_LOAD_PLUGINS": "", "PS1": "$ "}
    child = pexpect.spawn(
        "bash",
        ["--norc", "--noprofile", "-i"],  # interactive: job control
        env=env,
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=30,
        dimensions=(ROWS, COLUMNS),
    )
    try:
        child.expect_exact("$ ")
        child.sendline(f'"{sys.executable}" -m dsh.cli -m openai-compatible:tiny@{server.url} chat')
        child.expect_exact("> ")
        child.send("half")
        child.sendcontrol("z")
        child.expect_exact("Stopped")
        child.expect_exact("$ ")
        child.sendline("fg")
        child.expect_exact("> ")
        child.send(" a line\r")
        child.expect_exact("[turn 1 completed")
        child.expect_exact("> ")
        child.sendline("/quit")
        child.expect_exact("$ ")
        child.sendline("exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert users(server) == [["half a line"]]


async def test_a_write_from_another_thread_is_made_in_the_editors_thread() -> None:
    """prompt_toolkit draws from its loop's thread only: a line a worker thread writes
    while the editor runs (a log record, say) is handed to that thread, in order."""
    import asyncio
    import threading
    from types import SimpleNamespace

    from dsh._cli_screen import Screen, TerminalStream

    view = Screen()
    view.app = SimpleNamespace(is_running=True, invalidate=lambda: None)  # type: ignore[assignment]
    view.loop, view.thread = asyncio.get_running_loop(), threading.get_ident()
    stream = TerminalStream(io.StringIO(), view)
    worker = threading.Thread(target=stream.write, args=("from a worker",))
    worker.start()
    worker.join()
    assert stream.tail == ""  # not touched from the worker's thread...
    await asyncio.sleep(0)
    assert stream.tail == "from a worker"  # ...but in the loop's, next
