"""The notes on what Ctrl-C did in `dsh chat` (`(cancelled ...)`, `/compact: stopped`)
each take a line of their own, with no blank line before or after them, as the turn's
other notes: with the line editor and without it (where the terminal echoes `^C`
first), after an answer's unfinished line and at a permission question."""

from __future__ import annotations

import time
from typing import Any

import pexpect
import pytest
from cli_support import text_reply, tool_call_reply
from editor_support import row_of, screen, screen_when

EDITOR = pytest.mark.parametrize("canonical", [False, True], ids=["editor", "canonical"])


@EDITOR
@pytest.mark.parametrize("at", ["answer", "question"])
@pytest.mark.plugins("permissions")
def test_the_cancel_note_and_the_turns_end_are_lines_with_none_blank_between(
    model_server: Any, chat: Any, canonical: bool, at: str
) -> None:
    if at == "question":
        first = tool_call_reply("bash", {"command": "echo hi"})
    else:
        first = text_reply("working", then="stall")
    server = model_server([first])
    child = chat(server, plugins="permissions", canonical=canonical)
    child.sendline("go")
    child.expect_exact("allow? y" if at == "question" else "working")
    if at == "question":  # the question whole, then the prompt for its answer (editor)
        child.expect_exact("for the model)\r\n" if canonical else "> ")
    child.sendintr()
    child.expect_exact("[turn 1 aborted")
    child.expect_exact("> ")
    rows = screen(child)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    note = row_of(rows, "(cancelled; Ctrl-C again to quit)")
    before = "  allow? y" if at == "question" else "working"
    if canonical:  # the terminal's echo, where the cursor was
        before = "^C" if at == "question" else "working^C"
    assert rows[note - 1].startswith(before), rows
    after = "✗ bash: not run" if at == "question" else "[turn 1 aborted"
    assert rows[note + 1].startswith(after), rows


@EDITOR
@pytest.mark.plugins("compaction")
def test_the_note_of_a_compact_stopped_is_no_blank_line_away(
    model_server: Any, chat: Any, canonical: bool, tmp_path: Any
) -> None:
    (tmp_path / "dsh.yml").write_text("compaction: {tail_tokens: 1, context_window: 100000}\n")
    answer = "A long answer, " * 30
    summary = text_reply("Summary", then="stall")
    server = model_server([text_reply(answer), text_reply(answer), summary])
    child = chat(server, plugins="compaction", canonical=canonical)
    for number, prompt in enumerate(["first question", "second question"], 1):
        child.sendline(prompt)
        child.expect_exact(f"[turn {number} completed")
        child.expect_exact("> ")
    child.sendline("/compact")
    deadline = time.monotonic() + 30
    while len(server.bodies()) < 3:  # the summary is asked for
        assert time.monotonic() < deadline, "the summary was never asked for"
        time.sleep(0.05)
    child.sendintr()
    rows = screen_when(
        child, lambda rows: rows[-1] == ">" and "stopped" in "".join(rows), "the stop's note"
    )
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    note = row_of(rows, "  /compact: stopped; the history is as it was")
    assert rows[note - 1] == ("^C" if canonical else "> /compact"), rows
