"""``dsh sessions`` and its transcript, beyond the other CLI tests: the exit status of a
resume whose turn fails, an empty piped prompt, a fork's origin, what the transcript
marks (errors, the end of an interrupted turn), how it cuts long output, and the error
codes the CLI reports (docs/persistence.md, "`dsh sessions`" and "Errors")."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh.cli import main
from dsh.session import SessionEvent
from dsh.testing import ScriptedModel
from dsh_persistence import (
    PersistenceError,
    PersistenceSettings,
    SessionConflictError,
    SessionCorruptError,
    SessionFormatError,
    SessionInfo,
    open_backend,
)
from dsh_persistence._transcript import transcript
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def store(settings: PersistenceSettings, log: LogBuilder, meta: dict[str, Any]) -> None:
    backend = open_backend(settings)
    try:
        backend.append(SessionInfo("s", 1.0, meta=meta, title="t"), log.events, durable=True)
    finally:
        backend.close()


@pytest.fixture
def empty_model(scripted_cli: Callable[[ScriptedModel], ScriptedModel]) -> ScriptedModel:
    """A scripted model with nothing left to say: the resumed turn fails."""
    return scripted_cli(ScriptedModel([]))


def test_resume_exits_1_when_the_turn_does_not_complete(
    settings: PersistenceSettings,
    config: Path,
    empty_model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = LogBuilder()
    log.turn("one", calls=())
    store(settings, log, {})

    status = main(["-c", str(config), "-m", "scripted", "sessions", "resume", "s", "more?"])
    assert status == 1
    assert "[turn 2 error" in capsys.readouterr().err


def test_resume_refuses_an_empty_prompt_on_stdin(
    settings: PersistenceSettings,
    config: Path,
    empty_model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Nothing is run (and the session is not touched) for a blank piped prompt."""
    log = LogBuilder()
    log.turn("one", calls=())
    store(settings, log, {})
    monkeypatch.setattr("sys.stdin", io.StringIO("  \n"))

    assert main(["-c", str(config), "-m", "scripted", "sessions", "resume", "s"]) == 2
    assert "sessions resume: the prompt is empty" in capsys.readouterr().err
    assert empty_model.requests == []


def test_show_names_the_session_a_fork_came_from(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = LogBuilder()
    log.turn("one", calls=())
    store(settings, log, {"parent": "p-1", "seed_length": 7})

    assert main(["-c", str(config), "sessions", "show", "s"]) == 0
    assert "\nforked from p-1 at event 7\n" in capsys.readouterr().out


def shown(*events: tuple[str, dict[str, Any]]) -> str:
    return transcript(SessionEvent(kind, seq, 1.0, data) for seq, (kind, data) in enumerate(events))


def test_the_transcript_marks_failed_tool_results_and_turn_errors() -> None:
    result = {"call_id": "c", "name": "x", "content": "boom", "is_error": True}
    end = {"turn": 1, "reason": "interrupted", "error": {"message": "the session ended"}}
    text = shown(("tool/result", result), ("turn/end", end))
    assert "  <- error: boom\n" in text
    assert "  error: the session ended\n--- turn 1 ended: interrupted ---\n" in text


def test_the_transcript_shows_each_answer_once_whole_and_reasoning_briefly() -> None:
    content = [
        {"type": "reasoning", "text": "hmm,\n  let me see"},
        {"type": "text", "text": "hello"},
    ]
    text = shown(
        ("assistant/chunk", {"kind": "reasoning", "text": "hmm"}),
        ("assistant/chunk", {"kind": "text", "text": "hel"}),
        ("assistant/chunk", {"kind": "text", "text": "lo"}),
        ("assistant/message", {"message": {"content": content}}),
    )
    assert text == "  (thinking: hmm, let me see)\nassistant: hello\n"


def test_the_transcript_cuts_long_output_to_its_limits() -> None:
    eight = "\n".join(f"line {n}" for n in range(8))
    result = {"call_id": "c", "name": "x", "content": eight, "is_error": False}
    assert "more lines" not in shown(("tool/result", result))
    nine = {**result, "content": eight + "\nline 8"}
    assert "... (1 more lines)" in shown(("tool/result", nine))

    call = {"id": "c", "name": "x", "arguments": "a" * 500}
    line = shown(("tool/call", call))
    assert line == "  -> x " + "a" * 197 + "...\n"


def test_the_error_codes_are_the_documented_ones() -> None:
    assert PersistenceError("x").code == "PERSISTENCE"
    assert SessionCorruptError("x").code == "SESSION_CORRUPT"
    assert SessionFormatError("x").code == "SESSION_FORMAT"
    assert SessionConflictError("x").code == "SESSION_CONFLICT"


def test_another_plugins_event_is_shown_as_its_plain_values() -> None:
    data = {
        "tool": "write",
        "call_id": "call-1",
        "turn": 1,
        "decision": "allow",
        "rule": None,
        "reason": "allowed by rule write(*.txt)",
        "asked": False,
        "answer": "",
        "parts": [{"kind": "path", "value": "a.txt"}],
    }
    assert shown(("permission/decision", data)) == (
        '  [permission/decision] tool=write turn=1 decision=allow reason="allowed by rule '
        'write(*.txt)" asked=False\n'
    )


def test_the_text_of_a_step_cut_off_is_shown_as_it_was_seen() -> None:
    end = {"turn": 1, "reason": "aborted"}
    text = shown(
        ("step/start", {"turn": 1, "step": 1}),
        ("assistant/chunk", {"kind": "text", "text": "The answer "}),
        ("assistant/chunk", {"kind": "reasoning", "text": "hmm"}),
        ("assistant/chunk", {"kind": "text", "text": "is"}),
        ("turn/end", end),
    )
    assert text == "assistant (cut off): The answer is\n--- turn 1 ended: aborted ---\n"
    whole = {"message": {"content": [{"type": "text", "text": "Done."}]}}
    text = shown(
        ("assistant/chunk", {"kind": "text", "text": "Done."}),
        ("assistant/message", whole),
        ("turn/end", end),
    )
    assert text == "assistant: Done.\n--- turn 1 ended: aborted ---\n"  # shown once


@pytest.mark.parametrize("stop_reason", ["aborted", "error"])
def test_a_kept_cut_off_message_is_shown_once_as_cut_off(stop_reason: str) -> None:
    message = {"content": [{"type": "text", "text": "Half"}], "stop_reason": stop_reason}
    text = shown(
        ("assistant/chunk", {"kind": "text", "text": "Half"}),
        ("assistant/message", {"message": message}),
        ("turn/end", {"turn": 1, "reason": "aborted"}),
    )
    assert text == "assistant (cut off): Half\n--- turn 1 ended: aborted ---\n"
