"""`dsh chat`'s question runs out of time (dsh-permissions' ``ask_timeout``): it says so
under the question, as it does when the input ends (found by the session-29 journey: a
late ``y`` became a prompt to the model with nothing on the screen to explain it)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from dsh import _cli_approvals
from dsh._cli_approvals import TerminalApprovals
from dsh.approvals import ApprovalRequest


def request(timeout: float | None) -> ApprovalRequest:
    return ApprovalRequest("bash", '{"command": "make"}', "no rule allows it", timeout=timeout)


async def test_a_question_that_runs_out_of_time_says_so(capsys: pytest.CaptureFixture[str]):
    approvals = TerminalApprovals()
    with anyio.move_on_after(0.2):
        await approvals.tools_approval(request(0.2))
    assert capsys.readouterr().err.endswith("  denied: no answer within 0.2 s\n")
    assert not approvals.asking


async def test_a_question_withdrawn_before_its_time_says_nothing_of_it(
    capsys: pytest.CaptureFixture[str],
):
    """A turn aborted while it asks (Ctrl-C) is not a timeout."""
    approvals = TerminalApprovals()
    with anyio.move_on_after(0.1):
        await approvals.tools_approval(request(300))
    assert "no answer within" not in capsys.readouterr().err


async def test_the_question_shows_a_reasons_control_characters_as_escapes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The reason quotes the command, which the model wrote: its escape sequences went to
    the terminal raw (cleared the screen, retitled the window: the chat journey review)."""
    asked = ApprovalRequest(
        tool="bash\x1b[2J",
        arguments='{"command": "echo"}',
        reason="the command 'echo \x1b[2J\x1b]0;title\x07 hi\x9b31m' cannot be checked",
    )
    with anyio.move_on_after(0.1):
        await TerminalApprovals().tools_approval(asked)
    shown = capsys.readouterr().err
    assert not any(c in shown for c in "\x1b\x07\x9b"), repr(shown)
    assert "the command 'echo \\x1b[2J\\x1b]0;title\\x07 hi\\x9b31m' cannot be checked" in shown


async def test_typed_ahead_input_is_dropped_before_the_question_shows(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In canonical mode what was typed before the question is dropped (tcflush) before
    the question is written, never after: a Ctrl-D or an answer typed as soon as the
    question shows went with it, and the question waited for input that never came
    (test_chat_permissions' end-of-input test hung under load)."""
    written_before: list[str] = []

    def drop() -> Any:
        written_before.append(capsys.readouterr().err)
        return lambda: None

    monkeypatch.setattr(_cli_approvals, "drop_typed", drop)
    approvals = TerminalApprovals()
    with anyio.move_on_after(0.1):
        await approvals.tools_approval(request(300))
    assert written_before == [""]  # dropped once, before a line of the question
    assert "allow? y = once" in capsys.readouterr().err
