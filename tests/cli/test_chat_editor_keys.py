"""`dsh chat`'s line editor in a pseudo-terminal: Ctrl-C with a line half typed (at an
idle prompt it clears the line, as in bash; during a turn it cancels the turn, the line
staying; at a permission question it cancels the turn and clears the answer typed), and
input the line drops (colour codes, focus reports)."""

from __future__ import annotations

from typing import Any

import pexpect
import pytest
from cli_support import text_reply, tool_call_reply
from editor_support import quit_after_turn, screen, screen_when, users


def test_ctrl_c_with_a_line_half_typed_at_the_idle_prompt_clears_it(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    """As in bash or Python's REPL: the line goes, the chat stays and nothing is sent;
    Ctrl-C on the empty line then quits, as it did."""
    server = model_server([text_reply("Done.")])
    child = chat(server, env=editor_env, plugins="")
    child.send("half a thought")
    screen_when(child, lambda rows: rows[-1] == "> half a thought", "the line typed")
    child.sendintr()
    cleared = screen_when(child, lambda rows: rows[-1] == ">", "the empty input line")
    child.send("another\r")
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert users(server) == [["another"]]
    assert not any("half a thought" in row for row in cleared)


def test_a_line_cleared_by_ctrl_c_comes_back_with_undo(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    server = model_server([text_reply("Done.")])
    child = chat(server, env=editor_env, plugins="")
    child.send("a long line not to type again")
    screen_when(child, lambda rows: rows[-1].endswith("again"), "the line typed")
    child.sendintr()
    screen_when(child, lambda rows: rows[-1] == ">", "the empty input line")
    child.sendcontrol("_")  # undo
    screen_when(child, lambda rows: rows[-1] == "> a long line not to type again", "undo")
    child.send("\r")
    quit_after_turn(child)
    assert users(server) == [["a long line not to type again"]]


def test_ctrl_c_during_a_turn_cancels_it_and_a_half_typed_line_stays(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    """With text typed, Ctrl-C during a turn still cancels the turn (the line is not
    cleared); the line is sent when Enter is pressed."""
    server = model_server([text_reply("working", then="stall"), text_reply("Back.")])
    child = chat(server, env=editor_env, plugins="")
    child.sendline("long task")
    child.expect_exact("working")
    child.send("next ")
    screen_when(child, lambda rows: rows[-1] == "next", "the line typed")
    child.sendintr()
    child.expect_exact("[turn 1 aborted")
    screen_when(child, lambda rows: rows[-1] == "> next", "the prompt before the line")
    child.send("question\r")
    child.expect_exact("Back.")
    child.expect_exact("[turn 2 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert users(server)[1][-1] == "next question"


@pytest.mark.plugins("permissions")
def test_ctrl_c_at_a_permission_question_clears_the_answer_half_typed(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    """The text was meant as the question's answer: after Ctrl-C (which denies the
    call and cancels the turn) it is not left in the line, to be sent as a prompt by the
    next Enter. Ctrl-_ (undo) brings it back, as at an idle prompt."""
    server = model_server(
        [tool_call_reply("bash", {"command": "echo hi"}), text_reply("Fresh start.")]
    )
    child = chat(server, env=editor_env, plugins="permissions")
    child.sendline("run it")
    child.expect_exact("allow? y = once")
    child.send("no, use ls")
    screen_when(child, lambda rows: rows[-1] == "> no, use ls", "the answer typed")
    child.sendintr()
    child.expect_exact("[turn 1 aborted")
    screen_when(child, lambda rows: rows[-1] == ">", "the empty input line")
    child.send("next\r")
    child.expect_exact("[turn 2 completed")
    child.expect_exact("> ")
    rows = screen(child)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert users(server)[-1][-1] == "next"
    assert not any("use ls" in row for row in rows)


def test_ctrl_c_twice_in_a_row_quits_with_a_line_half_typed(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    """The second Ctrl-C after a cancel quits, as the note says, though the turn has
    ended and text is typed (it is not taken for clearing the line)."""
    server = model_server([text_reply("working", then="stall")])
    child = chat(server, env=editor_env, plugins="")
    child.sendline("long task")
    child.expect_exact("working")
    child.send("next")
    screen_when(child, lambda rows: rows[-1] == "next", "the line typed")
    child.sendintr()
    child.expect_exact("[turn 1 aborted")
    screen_when(child, lambda rows: rows[-1] == "> next", "the prompt before the line")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_colour_code_typed_or_pasted_unbracketed_is_dropped_not_an_error(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    """prompt_toolkit reads ``ESC [31m`` as a mouse event and failed on it: asyncio
    logged the exception as a ``dsh:`` line and the rest of the input was lost (the
    chat journey review)."""
    server = model_server([text_reply("Done.")])
    child = chat(server, env=editor_env, plugins="")
    child.send("abc\x1b[31mdef")
    screen_when(child, lambda rows: rows[-1] == "> abcdef", "the line typed")
    child.send("\r")
    quit_after_turn(child)
    assert users(server) == [["abcdef"]]
    assert "Exception in callback" not in child.logfile_read.getvalue()


def test_focus_reports_are_dropped_not_typed(
    model_server: Any, chat: Any, editor_env: dict[str, str]
) -> None:
    """A terminal with focus reporting on (left on by another program) sends ``ESC [ I``
    and ``ESC [ O`` as its window gains and loses focus; they came into the line as
    ``[I`` and ``[O``."""
    server = model_server([text_reply("Done.")])
    child = chat(server, env=editor_env, plugins="")
    child.send("abc\x1b[Idef\x1b[Oghi")
    screen_when(child, lambda rows: rows[-1] == "> abcdefghi", "the line typed")
    child.send("\r")
    quit_after_turn(child)
    assert users(server) == [["abcdefghi"]]
