"""What chat's commands answer takes lines of their own: no "> " drawn before it on its
line (a prompt shown by another command while `/compact` still worked), with the line
editor and without it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import text_reply, wire
from editor_support import row_of, screen_when

EDITOR = pytest.mark.parametrize("canonical", [False, True], ids=["editor", "canonical"])


def _slow_error(message: str) -> Any:
    """A streamed answer that fails after a second and a half."""
    role = {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
    error = {"error": {"message": message, "type": "server_error"}}
    events = [b"data: " + json.dumps(body).encode() + b"\n\n" for body in (role, error)]
    return wire.sse(events, pause=1.5)


def _asked(server: Any, requests: int) -> None:
    deadline = time.monotonic() + 30
    while len(server.bodies()) < requests:
        assert time.monotonic() < deadline, f"request {requests} never came"
        time.sleep(0.05)


@EDITOR
@pytest.mark.plugins("compaction")
def test_a_compact_failing_after_another_commands_answer_has_no_prompt_before_it(
    model_server: Any, chat: Any, canonical: bool, tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text("compaction: {tail_tokens: 1, context_window: 100000}\n")
    answer = "A long answer. " * 40
    replies = [text_reply(answer), text_reply(answer), _slow_error("summariser crashed")]
    server = model_server(replies)
    child = chat(server, plugins="compaction", canonical=canonical)
    for number, line in enumerate(["one", "two"], 1):
        child.sendline(line)
        child.expect_exact(f"[turn {number} completed")
        child.expect_exact("> ")
    child.sendline("/compact")
    _asked(server, 3)  # the summary is asked for (and comes in a second and a half)
    child.sendline("/model")
    rows = screen_when(
        child, lambda rows: rows[-1] == ">" and "crashed" in "".join(rows), "the failure"
    )
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    model = row_of(rows, "  openai-compatible:tiny")
    assert rows[model + 1].startswith("  /compact: failed, the history is unchanged"), rows
    assert rows[model + 2 :] == [">"], rows
