"""Ctrl-C in ``dsh chat`` quits when it comes again within 2 s of one that cancelled a
turn; a line sent since (a new turn, a command) ends that window: Ctrl-C during the new
turn cancels it, and the chat stays."""

from __future__ import annotations

from typing import Any

import pexpect
import pytest
from cli_support import chat_uses_editor, text_reply


@pytest.mark.parametrize("canonical", [True, False], ids=["canonical", "editor"])
def test_ctrl_c_after_a_new_line_cancels_its_turn(
    model_server: Any,
    cli_env: dict[str, str],
    editor_env: dict[str, str],
    chat: Any,
    canonical: bool,
) -> None:
    if not canonical and not chat_uses_editor(editor_env):
        pytest.skip("the line editor needs pip install 'dsh-core[chat]'")
    server = model_server(
        [
            text_reply("working", then="stall"),
            text_reply("again", then="stall"),
            text_reply("Back."),
        ]
    )
    child = chat(server, env=cli_env if canonical else editor_env, canonical=canonical)
    child.sendline("long task")
    child.expect_exact("working")
    child.sendintr()
    child.expect_exact("Ctrl-C again to quit)")
    child.expect_exact("[turn 1 aborted")
    child.sendline("another long task")
    child.expect_exact("again")
    child.sendintr()  # at once: within 2 s of the first, after a new line
    child.expect_exact("Ctrl-C again to quit)")
    child.expect_exact("[turn 2 aborted")
    child.sendline("still there?")
    child.expect_exact("Back.")
    child.expect_exact("[turn 3 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
