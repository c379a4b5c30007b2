"""The notes on what Ctrl-C did in `dsh chat` (`(cancelled ...)`, `/compact: stopped`)
each take a line of their own, with no blank line before or after them, as the turn's
other notes: with the line editor and without it (where the terminal echoes `^C`
first: the note takes its place at the start of a line), after an answer's unfinished
line and at a permission question, and for a `kill -INT`, which echoes nothing."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pexpect
import pytest
from cli_support import contents, text_reply, tool_call_reply
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
    if canonical and at == "answer":  # the terminal's echo, after the unfinished line
        before = "working^C"  # (at the start of a line the note takes its place)
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
    assert rows[note - 1] == "> /compact", rows  # the note in place of a "^C" echoed


@EDITOR
def test_the_cancel_note_of_a_kill_int_after_a_whole_line_follows_it(
    model_server: Any, chat: Any, canonical: bool
) -> None:
    """No ``^C`` is echoed for a signal sent with ``kill``: the note comes right after
    the answer's last line, no blank line between."""
    server = model_server([text_reply("working\n", then="stall")])
    child = chat(server, plugins="", canonical=canonical)
    child.sendline("go")
    child.expect_exact("working\r\n")  # its line end has been written too
    os.kill(child.pid, signal.SIGINT)
    child.expect_exact("[turn 1 aborted")
    child.expect_exact("> ")
    rows = screen(child)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    note = row_of(rows, "(cancelled; Ctrl-C again to quit)")
    assert rows[note - 1 : note + 1] == ["working", "(cancelled; Ctrl-C again to quit)"], rows


def test_a_kill_int_drops_a_half_typed_line_it_clears_from_the_screen(
    model_server: Any, chat: Any
) -> None:
    """Without the editor the note clears the line it starts on; what was typed there
    (the terminal holds it: a ``kill -INT``, unlike Ctrl-C, does not drop it) is dropped
    too, so it is not sent, unseen, with the next line."""
    server = model_server([text_reply("working\n", then="stall"), text_reply("ok")])
    child = chat(server, plugins="", canonical=True)
    child.sendline("go")
    child.expect_exact("working\r\n")
    child.send("abc")  # half typed, not sent
    child.expect_exact("abc")  # echoed: the terminal holds it
    os.kill(child.pid, signal.SIGINT)
    child.expect_exact("[turn 1 aborted")
    child.expect_exact("> ")
    rows = screen(child)
    child.sendline("xyz")
    child.expect_exact("ok")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert not any("abc" in row for row in rows), rows
    assert contents(server.bodies()[-1])[-1] == "xyz"


def test_on_a_dumb_terminal_the_cancel_note_goes_below_the_echoed_ctrl_c(
    model_server: Any, chat: Any, cli_env: dict[str, str]
) -> None:
    """Which may not know how to clear a line (an editor's shell window): no escape."""
    server = model_server([text_reply("working\n", then="stall")])
    child = chat(server, env={**cli_env, "TERM": "dumb"}, plugins="")
    child.sendline("go")
    child.expect_exact("working\r\n")
    child.sendintr()
    child.expect_exact("[turn 1 aborted")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert "working\r\n^C\r\n(cancelled; Ctrl-C again to quit)\r\n" in child.logfile_read.getvalue()
