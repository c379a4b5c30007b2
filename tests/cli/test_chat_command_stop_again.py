"""Ctrl-C that stops a plugin's chat command (``/compact``) says, as the note of a turn
it stops does, that a second Ctrl-C quits: one within 2 s of it does. Without the line
editor, the turn that quitting aborts is told on a line of its own, not after the
``^C`` the terminal echoed (``^C[turn 3 disposed ...]``)."""

from __future__ import annotations

import time
from typing import Any

import pexpect
import pytest
from cli_support import text_reply


def _wait_for(check: Any, what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


@pytest.mark.plugins("compaction")
def test_the_note_of_a_command_stopped_says_a_second_ctrl_c_quits(
    model_server: Any, chat: Any, tmp_path: Any
) -> None:
    (tmp_path / "dsh.yml").write_text("compaction: {tail_tokens: 1, context_window: 100000}\n")
    answer = "A long answer, " * 30
    working = text_reply("working\n", then="stall")
    summary = text_reply("Summary", then="stall")
    server = model_server([text_reply(answer), text_reply(answer), working, summary])
    child = chat(server, plugins="compaction", canonical=True)
    for number, prompt in enumerate(["first question", "second question"], 1):
        child.sendline(prompt)
        child.expect_exact(f"[turn {number} completed")
        child.expect_exact("> ")
    child.sendline("go")  # turn 3: its answer's line written, then the model stalls
    child.expect_exact("working\r\n")
    child.sendline("/compact")  # beside the turn
    _wait_for(lambda: len(server.bodies()) == 4, "the summary to be asked for")
    child.sendintr()
    child.expect_exact("/compact: stopped; the history is as it was (Ctrl-C again to quit)\r\n")
    child.sendintr()  # within 2 s: quits, and the running turn ends with the agent
    child.expect(pexpect.EOF)
    shown = child.logfile_read.getvalue()
    assert "[turn 3 disposed" in shown, shown
    assert "^C[turn" not in shown, shown  # the turn's end on a line of its own
