"""``dsh run summarise -`` at a terminal reads the text to send from it: a note on
stderr says so, and how to end it, rather than wait in silence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pexpect
from cli_support import contents, in_terminal, text_reply

NOTE = "dsh: reading the text for - from the terminal; end it with Ctrl-D on a line of its own"


def test_run_dash_at_a_terminal_says_it_reads_it(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Short.")])
    model = f"openai-compatible:tiny@{server.url}"
    child = in_terminal("-m", model, "run", "summarise", "-", env=cli_env, cwd=tmp_path)
    child.expect_exact(NOTE)
    child.sendline("a long text")
    child.sendeof()
    child.expect_exact("Short.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert contents(server.bodies()[0]) == ["summarise\n\na long text"]
