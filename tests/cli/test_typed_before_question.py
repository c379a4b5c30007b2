"""What is typed before a permission question shows does not answer it: a ``y`` half
typed while the turn streamed, then Enter alone once "allow?" shows, denies (Enter alone
is no), and a steer half typed is no denial reason. In canonical mode (``dsh run``, and
``dsh chat`` without the line editor) it is dropped; the line editor sets it aside and
gives it back once the question is answered."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import chat_uses_editor, in_terminal, wire

pytestmark = pytest.mark.plugins("permissions")

APPROVED = "approved-output"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class _Gated(list[bytes]):
    """The events of an answer, those after the first ``before`` sent only once the
    gate is open (the test server's thread waits for it)."""

    def __init__(self, events: list[bytes], before: int, gate: threading.Event) -> None:
        super().__init__(events)
        self._before, self._gate = before, gate

    def __iter__(self) -> Iterator[bytes]:
        for index, event in enumerate(list.__iter__(self)):
            if index == self._before:
                assert self._gate.wait(30), "the gate was never opened"
            yield event


def _working_then_call(gate: threading.Event) -> Any:
    """An answer that says ``Working`` at once, and calls bash once ``gate`` is open."""
    call = {"index": 0, "id": "call-1", "type": "function"}
    arguments = json.dumps({"command": f"echo {APPROVED}"})
    events = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": "Working"}),
        _chunk({"tool_calls": [{**call, "function": {"name": "bash", "arguments": ""}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}),
        _chunk({}, "tool_calls"),
        b"data: [DONE]\n\n",
    ]
    return wire.sse(_Gated(events, 2, gate))


def _done() -> Any:
    events = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": "Done."}),
        _chunk({}, "stop"),
        b"data: [DONE]\n\n",
    ]
    return wire.sse(events)


def _denied(server: Any) -> None:
    """The call was denied, with no reason but Enter alone's."""
    result = server.bodies()[1]["messages"][-1]
    assert result["role"] == "tool"
    assert result["content"].endswith(
        "the user refused it (asked through the front end "
        "'dsh-cli-approvals'): the user said no. Do not retry it; ask the user how to proceed."
    )


def _input_line_shows(child: pexpect.spawn, text: str) -> None:
    """Wait until the editor's input line (the screen's last row) is ``text``."""
    pyte = pytest.importorskip("pyte")
    deadline = time.monotonic() + 30
    while True:
        view = pyte.Screen(200, 40)
        pyte.Stream(view).feed(child.logfile_read.getvalue())
        rows = [row.rstrip() for row in view.display]
        if rows[view.cursor.y] == text:
            return
        assert time.monotonic() < deadline, f"{text!r} never showed:\n" + "\n".join(rows)
        child.expect([pexpect.TIMEOUT, pexpect.EOF], timeout=0.1)


def _type_then_enter_at_question(child: pexpect.spawn, typed: str, gate: threading.Event) -> None:
    """Once ``Working`` shows, type ``typed`` (no Enter) and see it taken: echoed by the
    terminal, or drawn by the line editor; then let the question come, and press Enter
    alone once it shows."""
    child.expect_exact("Working")
    child.send(typed)
    child.expect_exact(typed)  # echoed (canonical mode) or drawn in the input line
    gate.set()
    child.expect_exact("allow? y = once")
    child.send("\r")


TYPED = ["y", "yes", "check the logs too"]


@pytest.mark.parametrize("typed", TYPED)
def test_run_enter_at_question_denies_what_was_typed_before(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, typed: str
) -> None:
    gate = threading.Event()
    server = model_server([_working_then_call(gate), _done()])
    env = {**cli_env, "DSH_LOAD_PLUGINS": "permissions"}
    model = f"openai-compatible:tiny@{server.url}"
    child = in_terminal("-m", model, "run", "run it", env=env, cwd=tmp_path)
    try:
        _type_then_enter_at_question(child, typed, gate)
        child.expect_exact("Done.")
        child.expect(pexpect.EOF)
    finally:
        gate.set()
        child.close(force=True)
    _denied(server)


@pytest.mark.parametrize("typed", TYPED)
@pytest.mark.parametrize("canonical", [True, False], ids=["canonical", "editor"])
def test_chat_enter_at_question_denies_what_was_typed_before(
    model_server: Any,
    cli_env: dict[str, str],
    editor_env: dict[str, str],
    chat: Any,
    typed: str,
    canonical: bool,
) -> None:
    if not canonical and not chat_uses_editor(editor_env):
        pytest.skip("the line editor needs pip install 'dsh-core[chat]'")
    gate = threading.Event()
    server = model_server([_working_then_call(gate), _done()])
    child = chat(
        server,
        env=cli_env if canonical else editor_env,
        plugins="permissions",
        canonical=canonical,
    )
    try:
        child.sendline("run it")
        _type_then_enter_at_question(child, typed, gate)
        if not canonical:  # said, and given back once answered
            child.expect_exact("(the line you were typing is set aside until this is answered)")
        child.expect_exact("Done.")
        child.expect_exact("[turn 1 completed")
        if not canonical:  # the line half typed is back in the input line
            _input_line_shows(child, f"> {typed}")
            child.send("\x15")  # Ctrl-U: empty it
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        gate.set()
    _denied(server)
    assert [b["messages"][-1]["content"] for b in server.bodies()[:1]] == ["run it"]
