"""`dsh chat` in a pseudo-terminal: streaming, steering, Ctrl-C, quitting, the status."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import refused_reply, text_reply

TIMEOUT = 30


def test_chat_streams_answers_and_keeps_history(model_server: Any, chat: Any) -> None:
    server = model_server([text_reply("Hi ", "there."), text_reply("Again.")])
    child = chat(server)
    child.sendline("hello")
    child.expect_exact("Hi there.")
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    child.sendline("and again")
    child.expect_exact("Again.")
    child.expect_exact("[turn 2 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert child.wait() == 0
    second = server.bodies()[1]["messages"]
    assert [m["role"] for m in second[1:]] == ["user", "assistant", "user"]
    assert second[2]["content"] == "Hi there."


def test_a_line_typed_while_the_agent_runs_steers_the_turn(model_server: Any, chat: Any) -> None:
    slow = text_reply("thinking", ".", ".", ".", ".", ".", pause=0.4)
    server = model_server([slow, text_reply("Steered.")])
    # canonical: what follows the note is checked in the bytes written; with the line
    # editor a redraw comes between (test_chat_editor.py checks the screen)
    child = chat(server, canonical=True)
    child.sendline("start")
    child.expect_exact("thinking")
    child.sendline("use metric units")
    # acknowledged on a line of its own: the next step's answer does not run on
    child.expect_exact("\r\n↪ steered by you: use metric units\r\nSteered.")
    child.expect_exact("[turn 1 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    second = server.bodies()[1]["messages"]
    assert second[-1] == {"role": "user", "content": "use metric units"}
    assert len(server.bodies()) == 2  # one turn, two steps


def test_ctrl_c_cancels_the_turn_and_the_agent_stays(model_server: Any, chat: Any) -> None:
    server = model_server([text_reply("working", then="stall"), text_reply("Back.")])
    child = chat(server)
    child.sendline("long task")
    child.expect_exact("working")
    child.sendintr()
    child.expect_exact("[turn 1 aborted")
    child.expect_exact("> ")
    child.sendline("still there?")
    child.expect_exact("Back.")
    child.expect_exact("[turn 2 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)


def test_ctrl_c_at_an_idle_prompt_quits_without_a_traceback(model_server: Any, chat: Any) -> None:
    child = chat(model_server([]))
    child.sendintr()
    child.expect(pexpect.EOF)
    assert "Traceback" not in (child.before or "")
    child.close()
    assert child.exitstatus == 0


def test_at_the_terminal_a_turn_that_ended_in_error_leaves_the_status_0(
    model_server: Any, chat: Any
) -> None:
    """The person saw the error and went on (a script's status would be 1:
    test_chat_input.py); the last turn's error counts no more than an earlier one's."""
    server = model_server([refused_reply(), text_reply("Fine."), refused_reply()])
    child = chat(server)
    for number, (line, end) in enumerate(
        [("first", "error"), ("second", "completed"), ("third", "error")], 1
    ):
        child.sendline(line)
        child.expect_exact(f"[turn {number} {end}")
        child.expect_exact("> ")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert child.wait() == 0


def _chat_then_shell(server: Any, env: dict[str, str], cwd: Any) -> pexpect.spawn:
    """``dsh chat; echo SHELL-PROMPT$`` in a pseudo-terminal, without the line editor,
    at its first prompt: what the shell writes next shows where chat left the cursor."""
    model = f"openai-compatible:tiny@{server.url}"
    dsh = shlex.join([sys.executable, "-m", "dsh.cli", "-m", model, "chat"])
    command = f"{dsh}; echo 'SHELL-PROMPT$'"
    child = pexpect.spawn(
        "bash",
        ["--norc", "--noprofile", "-c", command],
        env={**env, "DSH_CHAT_EDITOR": "0"},
        cwd=str(cwd),
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(40, 200),
    )
    child.expect_exact("> ")
    return child


@pytest.mark.parametrize("key", ["eof", "intr", "eof-in-a-turn"])
def test_without_the_editor_quitting_ends_the_prompt_line(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, key: str
) -> None:
    """The shell's prompt comes on a line of its own, not after chat's `> ` (as with the
    line editor); quitting once a turn ends shows no fresh `> ` first."""
    server = model_server([text_reply("slow", "ly", pause=0.5)])
    child = _chat_then_shell(server, cli_env, tmp_path)
    try:
        if key == "eof-in-a-turn":
            child.sendline("go")
            child.expect_exact("slow")
            child.sendeof()
            child.expect_exact("[turn 1 completed")
        elif key == "eof":
            child.sendeof()
        else:
            child.sendintr()
        child.expect_exact("SHELL-PROMPT$")
        before = child.before or ""
        assert before.endswith("\n"), repr(before[-80:])
        assert not before.replace("^C", "").rstrip().endswith(">"), repr(before[-80:])
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def test_bytes_typed_that_are_not_utf8_are_replaced_and_it_says_so(
    model_server: Any, chat: Any
) -> None:
    """Without the line editor: the line is sent with U+FFFD for each such byte (as the
    editor does, and a script's line), and a note says so once, below the line typed."""
    server = model_server([text_reply("Ok.")])
    child = chat(server, plugins="", canonical=True)
    child.setecho(False)  # the terminal's echo of the raw bytes is not UTF-8
    os.write(child.child_fd, b"bad \xff\xfe bytes\n")
    child.expect_exact("(2 bytes that were not UTF-8 were replaced by \ufffd in the line sent)\r\n")
    child.expect_exact("[turn 1 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert server.bodies()[0]["messages"][-1]["content"] == "bad \ufffd\ufffd bytes"


@pytest.mark.parametrize("typed", ["/resume zzz", "/compact"])
def test_a_command_typed_during_a_turn_leaves_one_prompt(
    model_server: Any, chat: Any, typed: str
) -> None:
    """Without the line editor: a chat command that runs beside the turn (a plugin's) or
    fails at once (``/resume`` while busy) shows ``> `` once, when the turn ends."""
    slow = text_reply("thinking", ".", ".", ".", ".", ".", pause=0.3)
    child = chat(model_server([slow]), canonical=True)
    child.sendline("start")
    child.expect_exact("thinking")
    child.sendline(typed)
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    child.expect([pexpect.TIMEOUT, pexpect.EOF], timeout=1.5)  # any more there would be
    after = child.logfile_read.getvalue().split("[turn 1 completed", 1)[1]
    assert after.count("> ") == 1, after
    child.sendline("/quit")
    child.expect(pexpect.EOF)
