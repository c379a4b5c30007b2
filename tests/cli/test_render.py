"""What `dsh run` and `dsh chat` show on stderr for tool results (the renderer alone)."""

from __future__ import annotations

import io

from dsh._render import Renderer
from dsh.session import Session


def shown(content: str, *, is_error: bool) -> str:
    err = io.StringIO()
    renderer = Renderer(io.StringIO(), err)
    session = Session("s")
    data = {"call_id": "c", "name": "bash", "content": content, "is_error": is_error}
    renderer.session_event(session, session._append("tool/result", data))
    return err.getvalue()


def test_an_error_result_is_shown_with_its_whole_reason() -> None:
    reason = (
        "Permission denied: 'bash' was not run: it needs a person's approval (no rule "
        "allows the command 'tr a-z A-Z', part 2 of 'cat notes.txt | tr a-z A-Z')"
    )
    assert shown(reason, is_error=True) == f"✗ bash: {reason}\n"


def test_a_result_is_a_preview_with_its_line_count() -> None:
    assert shown("one line", is_error=False) == "← bash: one line\n"  # all of it is shown
    long = "\n".join(f"line {n} " + "x" * 30 for n in range(5))
    line = shown(long, is_error=False)
    assert line.endswith("… (5 lines)\n") and len(line) < 130


def test_a_turn_a_plugin_stopped_shows_its_reason() -> None:
    err = io.StringIO()
    renderer = Renderer(io.StringIO(), err)
    session = Session("s")
    usage = {"input_tokens": 3, "output_tokens": 2}
    data = {"turn": 1, "reason": "completed", "usage": usage, "stopped": "guard: 5 tool calls"}
    renderer.session_event(session, session._append("turn/end", data))
    assert (
        err.getvalue() == "[turn 1 completed · 3 in / 2 out tokens] stopped: guard: 5 tool calls\n"
    )
